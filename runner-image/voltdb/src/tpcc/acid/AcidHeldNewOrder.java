package tpcc.acid;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

import tpcc.procedures.NewOrderBase;

/** NewOrder's own code (single-partition on w_id), held hold_ms before it commits or rolls back. */
public class AcidHeldNewOrder extends NewOrderBase {
    public VoltTable[] run(int w_id, int d_id, int c_id, TimestampType o_entry_d, int[] i_ids,
                           int[] supply_w_ids, int[] quantities, int hold_ms, int rollback) {
        VoltTable[] order = newOrder(w_id, d_id, c_id, o_entry_d, i_ids, supply_w_ids, quantities);
        Hold.sleep(hold_ms);
        if (rollback != 0) throw new VoltAbortException(Hold.ROLLED_BACK);
        return order;
    }
}
