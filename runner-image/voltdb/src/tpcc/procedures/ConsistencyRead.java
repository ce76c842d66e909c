package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * What the 12 consistency conditions of clause 3.3.2 need of warehouse w_id (drivers/voltdb.py's
 * consistency_data names each table), read in ONE transaction: multi-partition, because a remote
 * Payment's HISTORY row lives in the paying warehouse's partition. Read statement by statement,
 * a Payment committing between the WAREHOUSE and the DISTRICT read makes W_YTD = sum(D_YTD) look
 * broken; in one call it cannot, so `tpcc check` may run while transactions commit.
 *
 * Reads [first, last) of READS: the check asks for all of them; the ACID consistency test's
 * weakened mode asks for them in two calls to show the conditions failing without this.
 */
public class ConsistencyRead extends VoltProcedure {
    public final SQLStmt warehouse = new SQLStmt("SELECT w_ytd FROM warehouse WHERE w_id = ?;");
    public final SQLStmt district = new SQLStmt(
        "SELECT d_id, d_ytd, d_next_o_id FROM district WHERE d_w_id = ?;");
    public final SQLStmt paidHere = new SQLStmt(
        "SELECT h_d_id, SUM(h_amount) FROM history WHERE h_w_id = ? GROUP BY h_d_id;");
    public final SQLStmt paidByCustomer = new SQLStmt(
        "SELECT h_c_d_id, h_c_id, SUM(h_amount) FROM history WHERE h_c_w_id = ? GROUP BY h_c_d_id, h_c_id;");
    public final SQLStmt orders = new SQLStmt(
        "SELECT o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt FROM orders WHERE o_w_id = ?;");
    public final SQLStmt newOrders = new SQLStmt("SELECT no_d_id, no_o_id FROM new_order WHERE no_w_id = ?;");
    public final SQLStmt orderLines = new SQLStmt(
        "SELECT ol_d_id, ol_o_id, COUNT(*), SUM(CASE WHEN ol_delivery_d IS NULL THEN 1 ELSE 0 END), "
        + "SUM(CASE WHEN ol_delivery_d IS NULL THEN NULL ELSE ol_amount END) "
        + "FROM order_line WHERE ol_w_id = ? GROUP BY ol_d_id, ol_o_id;");
    public final SQLStmt customers = new SQLStmt(
        "SELECT c_d_id, c_id, c_balance, c_ytd_payment FROM customer WHERE c_w_id = ?;");

    private SQLStmt[] reads() {
        return new SQLStmt[] {warehouse, district, paidHere, paidByCustomer, orders, newOrders, orderLines, customers};
    }

    public VoltTable[] run(int w_id, int first, int last) {
        SQLStmt[] reads = reads();
        if (first < 0 || last > reads.length || first >= last) {
            throw new VoltAbortException("reads [" + first + ", " + last + ") outside [0, " + reads.length + ")");
        }
        for (int i = first; i < last; i++) {
            voltQueueSQL(reads[i], w_id);
        }
        return voltExecuteSQL(true);
    }
}
