package tpcc.acid;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

import tpcc.procedures.DeliveryBase;

/** Delivery's own code (single-partition on w_id), held hold_ms before it commits or rolls back. */
public class AcidHeldDelivery extends DeliveryBase {
    public VoltTable run(int w_id, int o_carrier_id, TimestampType ol_delivery_d, int hold_ms, int rollback) {
        VoltTable delivered = deliver(w_id, o_carrier_id, ol_delivery_d);
        Hold.sleep(hold_ms);
        if (rollback != 0) throw new VoltAbortException(Hold.ROLLED_BACK);
        return delivered;
    }
}
