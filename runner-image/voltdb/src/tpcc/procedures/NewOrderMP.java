package tpcc.procedures;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/** New-Order with a remote supply warehouse: one multi-partition transaction (see NewOrderBase). */
public class NewOrderMP extends NewOrderBase {
    public VoltTable[] run(int w_id, int d_id, int c_id, TimestampType o_entry_d,
                           int[] i_ids, int[] supply_w_ids, int[] quantities) {
        return newOrder(w_id, d_id, c_id, o_entry_d, i_ids, supply_w_ids, quantities);
    }
}
