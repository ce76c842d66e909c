package tpcc.procedures;

import java.math.BigDecimal;

import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/** Payment by a customer of a remote warehouse: one multi-partition transaction (see PaymentBase). */
public class PaymentMP extends PaymentBase {
    public VoltTable[] run(int w_id, int d_id, int c_w_id, int c_d_id, int c_id, String c_last,
                           BigDecimal h_amount, TimestampType h_date) {
        return payment(w_id, d_id, c_w_id, c_d_id, c_id, c_last, h_amount, h_date);
    }
}
