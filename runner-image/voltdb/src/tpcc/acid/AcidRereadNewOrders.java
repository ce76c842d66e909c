package tpcc.acid;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * Isolation test 8's T1 reads (single-partition on w_id): the district's NEW-ORDER rows,
 * Delivery's search condition, then after hold_ms again, in one transaction. Returns both reads.
 */
public class AcidRereadNewOrders extends VoltProcedure {
    public final SQLStmt getNewOrders = new SQLStmt(
        "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id;");

    public VoltTable[] run(int w_id, int d_id, int hold_ms) {
        voltQueueSQL(getNewOrders, w_id, d_id);
        VoltTable first = voltExecuteSQL()[0];
        Hold.sleep(hold_ms);
        voltQueueSQL(getNewOrders, w_id, d_id);
        return new VoltTable[] {first, voltExecuteSQL(true)[0]};
    }
}
