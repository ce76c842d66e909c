package tpcc.procedures;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * One district's part of the Delivery business transaction (DeliveryBase), single-partition on
 * its first parameter (the warehouse id, the district key W_ID * 10 + D_ID when partitioned
 * by district, or D_ID when partitioned on D_ID): the driver's `delivery=per-district` calls it once per district, ten
 * transactions per Delivery (clause 2.7.4.1's comment allows up to ten database transactions).
 */
public class DeliveryDistrict extends DeliveryBase {
    public VoltTable run(int partition_key, int w_id, int d_id, int o_carrier_id, TimestampType ol_delivery_d) {
        if (d_id < 1 || d_id > DISTRICTS) {
            throw new VoltAbortException("DeliveryDistrict: district " + d_id + " is not 1.." + DISTRICTS);
        }
        return deliver(w_id, d_id, d_id, o_carrier_id, ol_delivery_d);
    }
}
