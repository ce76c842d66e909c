package tpcc.procedures;

import java.math.BigDecimal;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/** Payment by a customer of the home warehouse: single-partition on w_id. */
public class Payment extends PaymentBase {
    public VoltTable[] run(int w_id, int d_id, int c_w_id, int c_d_id, int c_id, String c_last,
                           BigDecimal h_amount, TimestampType h_date) {
        if (c_w_id != w_id) throw new VoltAbortException("Payment: remote customer warehouse " + c_w_id + " needs PaymentMP");
        return payment(w_id, d_id, c_w_id, c_d_id, c_id, c_last, h_amount, h_date);
    }
}
