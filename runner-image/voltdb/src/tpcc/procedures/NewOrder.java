package tpcc.procedures;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/** New-Order with every line supplied by the home warehouse: single-partition on w_id. */
public class NewOrder extends NewOrderBase {
    public VoltTable[] run(int w_id, int d_id, int c_id, TimestampType o_entry_d,
                           int[] i_ids, int[] supply_w_ids, int[] quantities) {
        for (int s : supply_w_ids) {
            if (s != w_id) throw new VoltAbortException("NewOrder: remote supply warehouse " + s + " needs NewOrderMP");
        }
        return newOrder(w_id, d_id, c_id, o_entry_d, i_ids, supply_w_ids, quantities);
    }
}
