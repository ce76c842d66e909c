package tpcc.acid;

import java.math.BigDecimal;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

import tpcc.procedures.PaymentBase;

/** Payment's own code (single-partition on w_id), held hold_ms before it commits or rolls back. */
public class AcidHeldPayment extends PaymentBase {
    public VoltTable[] run(int w_id, int d_id, int c_w_id, int c_d_id, int c_id, String c_last,
                           BigDecimal h_amount, TimestampType h_date, int hold_ms, int rollback) {
        VoltTable[] customer = payment(w_id, d_id, c_w_id, c_d_id, c_id, c_last, h_amount, h_date);
        Hold.sleep(hold_ms);
        if (rollback != 0) throw new VoltAbortException(Hold.ROLLED_BACK);
        return customer;
    }
}
