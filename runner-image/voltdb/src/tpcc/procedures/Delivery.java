package tpcc.procedures;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/** The Delivery transaction (DeliveryBase), single-partition on w_id. */
public class Delivery extends DeliveryBase {
    public VoltTable run(int w_id, int o_carrier_id, TimestampType ol_delivery_d) {
        return deliver(w_id, o_carrier_id, ol_delivery_d);
    }
}
