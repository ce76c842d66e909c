package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * The Order-Status transaction, clause 2.6.2.2 (read-only, single-partition on its first
 * parameter: the warehouse id, the district key W_ID * 10 + D_ID when partitioned by
 * district, or D_ID when partitioned on D_ID, the VoltDB study's "one shot transaction"):
 * the customer (by id, or by last name at position ceil(n/2) sorted by c_first),
 * the customer's most recent order and its lines.
 */
public class OrderStatus extends VoltProcedure {
    public final SQLStmt getCustomerById = new SQLStmt(
        "SELECT c_id, c_first, c_middle, c_last, c_balance FROM customer "
        + "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;");
    public final SQLStmt getCustomersByName = new SQLStmt(
        "SELECT c_id, c_first, c_middle, c_last, c_balance FROM customer "
        + "WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first;");
    public final SQLStmt getLastOrder = new SQLStmt(
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? "
        + "ORDER BY o_id DESC LIMIT 1;");
    public final SQLStmt getOrderLines = new SQLStmt(
        "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
        + "WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;");

    /** c_id 0 selects by c_last. Returns [customer row, order (0 or 1 row), order lines]. */
    public VoltTable[] run(int partition_key, int w_id, int d_id, int c_id, String c_last) {
        voltQueueSQL(c_id == 0 ? getCustomersByName : getCustomerById, w_id, d_id, c_id == 0 ? c_last : c_id);
        VoltTable all = voltExecuteSQL()[0];
        Customers.pick(this, all, w_id, d_id, c_id, c_last);
        VoltTable customer = all.clone(64);
        customer.add(all);
        int id = (int) all.getLong("c_id");

        voltQueueSQL(getLastOrder, w_id, d_id, id);
        VoltTable order = voltExecuteSQL()[0];
        if (!order.advanceRow()) {
            return new VoltTable[] {customer, order, new VoltTable(new VoltTable.ColumnInfo("ol_i_id", VoltType.INTEGER))};
        }
        voltQueueSQL(getOrderLines, w_id, d_id, order.getLong(0));
        VoltTable lines = voltExecuteSQL(true)[0];
        order.resetRowPosition();
        return new VoltTable[] {customer, order, lines};
    }
}
