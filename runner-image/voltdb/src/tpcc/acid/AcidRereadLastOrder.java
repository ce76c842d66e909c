package tpcc.acid;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * Isolation test 9's T1 reads (single-partition on w_id): Order-Status's query for the
 * customer's last order, then after hold_ms again, in one transaction. Returns both reads.
 */
public class AcidRereadLastOrder extends VoltProcedure {
    public final SQLStmt getLastOrder = new SQLStmt(
        "SELECT o_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1;");

    public VoltTable[] run(int w_id, int d_id, int c_id, int hold_ms) {
        voltQueueSQL(getLastOrder, w_id, d_id, c_id);
        VoltTable first = voltExecuteSQL()[0];
        Hold.sleep(hold_ms);
        voltQueueSQL(getLastOrder, w_id, d_id, c_id);
        return new VoltTable[] {first, voltExecuteSQL(true)[0]};
    }
}
