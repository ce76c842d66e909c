package tpcc.procedures;

import java.math.BigDecimal;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.types.TimestampType;

/**
 * The Payment transaction, clause 2.5.2.2, shared by Payment (single-partition on the home
 * warehouse, customer of the home warehouse: 85%) and PaymentMP (a customer of a remote
 * warehouse, whose CUSTOMER row lives in another partition: one multi-partition
 * transaction doing the identical work). The HISTORY row goes to the home warehouse's
 * partition (HISTORY is partitioned on h_w_id).
 */
public abstract class PaymentBase extends VoltProcedure {
    static final String CUSTOMER_COLUMNS =
        "c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "
        + "c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_data";

    public final SQLStmt addWarehouseYtd = new SQLStmt(
        "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?;");
    public final SQLStmt getWarehouse = new SQLStmt(
        "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?;");
    public final SQLStmt addDistrictYtd = new SQLStmt(
        "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?;");
    public final SQLStmt getDistrict = new SQLStmt(
        "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?;");
    public final SQLStmt getCustomerById = new SQLStmt(
        "SELECT " + CUSTOMER_COLUMNS + " FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;");
    public final SQLStmt getCustomersByName = new SQLStmt(
        "SELECT " + CUSTOMER_COLUMNS + " FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? "
        + "ORDER BY c_first;");
    public final SQLStmt setCustomer = new SQLStmt(
        "UPDATE customer SET c_balance = ?, c_ytd_payment = ?, c_payment_cnt = ? "
        + "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;");
    public final SQLStmt setCustomerWithData = new SQLStmt(
        "UPDATE customer SET c_balance = ?, c_ytd_payment = ?, c_payment_cnt = ?, c_data = ? "
        + "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;");
    public final SQLStmt insertHistory = new SQLStmt(
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data, h_wd) "
        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);");

    /** c_id 0 selects the customer by c_last. Returns the customer row as updated. */
    protected VoltTable[] payment(int w_id, int d_id, int c_w_id, int c_d_id, int c_id, String c_last,
                                  BigDecimal h_amount, TimestampType h_date) {
        voltQueueSQL(addWarehouseYtd, h_amount, w_id);
        voltQueueSQL(getWarehouse, w_id);
        voltQueueSQL(addDistrictYtd, h_amount, w_id, d_id);
        voltQueueSQL(getDistrict, w_id, d_id);
        if (c_id == 0) {
            voltQueueSQL(getCustomersByName, c_w_id, c_d_id, c_last);
        } else {
            voltQueueSQL(getCustomerById, c_w_id, c_d_id, c_id);
        }
        VoltTable[] r = voltExecuteSQL();
        VoltTable w = r[1], d = r[3], customers = r[4];
        if (!w.advanceRow() || !d.advanceRow()) {
            throw MissingRow.abort(this, "Payment: no warehouse " + w_id + " or district " + d_id);
        }
        VoltTable c = Customers.pick(this, customers, c_w_id, c_d_id, c_id, c_last);

        int id = (int) c.getLong("c_id");
        BigDecimal balance = Money.cents(c.getDecimalAsBigDecimal("c_balance").subtract(h_amount));
        BigDecimal ytdPayment = Money.cents(c.getDecimalAsBigDecimal("c_ytd_payment").add(h_amount));
        long paymentCnt = c.getLong("c_payment_cnt") + 1;
        String credit = c.getString("c_credit");
        String data = c.getString("c_data");
        if ("BC".equals(credit)) {
            data = String.format("%d %d %d %d %d %.2f | %s", id, c_d_id, c_w_id, d_id, w_id, h_amount,
                                 data == null ? "" : data);
            if (data.length() > 500) data = data.substring(0, 500);
            voltQueueSQL(setCustomerWithData, balance, ytdPayment, paymentCnt, data, c_w_id, c_d_id, id);
        } else {
            voltQueueSQL(setCustomer, balance, ytdPayment, paymentCnt, c_w_id, c_d_id, id);
        }
        String hData = w.getString(0) + "    " + d.getString(0);
        voltQueueSQL(insertHistory, id, c_d_id, c_w_id, d_id, w_id, h_date, h_amount, hData,
                     DistrictKey.of(w_id, d_id));
        voltQueueSQL(getCustomerById, c_w_id, c_d_id, id);
        VoltTable[] after = voltExecuteSQL(true);
        return new VoltTable[] {after[2]};
    }
}
