package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Loads one district's CUSTOMER, HISTORY, ORDERS, ORDER-LINE and NEW-ORDER rows (each with
 * its district key *_wd last, from the driver), single-partition on w_id (multi-partition when
 * partitioned by district or on D_ID: the load marker is per warehouse). The district's rows are deleted
 * first: HISTORY has no key to upsert on.
 */
public class LoadDistrict extends Loader {
    public final SQLStmt deleteCustomers = new SQLStmt("DELETE FROM customer WHERE c_w_id = ? AND c_d_id = ?;");
    public final SQLStmt deleteHistory = new SQLStmt(
        "DELETE FROM history WHERE h_c_w_id = ? AND h_c_d_id = ? AND h_w_id = ?;");
    public final SQLStmt deleteOrders = new SQLStmt("DELETE FROM orders WHERE o_w_id = ? AND o_d_id = ?;");
    public final SQLStmt deleteOrderLines = new SQLStmt("DELETE FROM order_line WHERE ol_w_id = ? AND ol_d_id = ?;");
    public final SQLStmt deleteNewOrders = new SQLStmt("DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ?;");
    public final SQLStmt insertCustomer = new SQLStmt(
        "INSERT INTO customer VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);");
    public final SQLStmt insertHistory = new SQLStmt("INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);");
    public final SQLStmt insertOrder = new SQLStmt("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);");
    public final SQLStmt insertOrderLine = new SQLStmt(
        "INSERT INTO order_line VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);");
    public final SQLStmt insertNewOrder = new SQLStmt("INSERT INTO new_order VALUES (?, ?, ?, ?);");

    public long run(int w_id, int d_id, String unitKey, VoltTable customers, VoltTable history,
                    VoltTable orders, VoltTable orderLines, VoltTable newOrders) {
        begin();
        queue(deleteCustomers, w_id, d_id);
        queue(deleteHistory, w_id, d_id, w_id);
        queue(deleteOrders, w_id, d_id);
        queue(deleteOrderLines, w_id, d_id);
        queue(deleteNewOrders, w_id, d_id);
        insert("customer", insertCustomer, customers);
        insert("history", insertHistory, history);
        insert("orders", insertOrder, orders);
        insert("order_line", insertOrderLine, orderLines);
        insert("new_order", insertNewOrder, newOrders);
        return finish(w_id, unitKey);
    }
}
