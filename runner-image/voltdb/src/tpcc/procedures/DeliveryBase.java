package tpcc.procedures;

import java.math.BigDecimal;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.types.TimestampType;

/**
 * The Delivery transaction, clause 2.7.4.2: for each of the 10 districts, the oldest
 * undelivered order is delivered (NEW-ORDER row deleted, carrier set, lines dated, customer
 * balance and delivery count raised); a district without an undelivered order is skipped.
 * Shared by Delivery (all ten districts in one transaction), DeliveryDistrict (one district per
 * transaction, as clause 2.7.4.1's comment allows) and the ACID tests' AcidHeldDelivery (tpcc.acid).
 */
public abstract class DeliveryBase extends VoltProcedure {
    static final int DISTRICTS = 10;

    public final SQLStmt getOldestNewOrder = new SQLStmt(
        "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1;");
    public final SQLStmt deleteNewOrder = new SQLStmt(
        "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?;");
    public final SQLStmt getOrderCustomer = new SQLStmt(
        "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?;");
    public final SQLStmt setCarrier = new SQLStmt(
        "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?;");
    public final SQLStmt setDeliveryDate = new SQLStmt(
        "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;");
    public final SQLStmt sumOrderLines = new SQLStmt(
        "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;");
    public final SQLStmt payCustomer = new SQLStmt(
        "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 "
        + "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;");

    /** Every district of the warehouse: one row (d_id, o_id) per delivered order. */
    protected VoltTable deliver(int w_id, int o_carrier_id, TimestampType ol_delivery_d) {
        return deliver(w_id, 1, DISTRICTS, o_carrier_id, ol_delivery_d);
    }

    /** Districts first..last of the warehouse: one row (d_id, o_id) per delivered order. */
    protected VoltTable deliver(int w_id, int first, int last, int o_carrier_id, TimestampType ol_delivery_d) {
        for (int d = first; d <= last; d++) voltQueueSQL(getOldestNewOrder, w_id, d);
        VoltTable[] oldest = voltExecuteSQL();

        VoltTable delivered = new VoltTable(
            new VoltTable.ColumnInfo("d_id", VoltType.INTEGER),
            new VoltTable.ColumnInfo("o_id", VoltType.INTEGER));
        for (int d = first; d <= last; d++) {
            VoltTable no = oldest[d - first];
            if (!no.advanceRow()) continue;
            int oId = (int) no.getLong(0);
            voltQueueSQL(deleteNewOrder, w_id, d, oId);
            voltQueueSQL(getOrderCustomer, w_id, d, oId);
            voltQueueSQL(setCarrier, o_carrier_id, w_id, d, oId);
            voltQueueSQL(setDeliveryDate, ol_delivery_d, w_id, d, oId);
            voltQueueSQL(sumOrderLines, w_id, d, oId);
            delivered.addRow(d, oId);
        }
        if (delivered.getRowCount() == 0) return delivered;
        VoltTable[] r = voltExecuteSQL();
        delivered.resetRowPosition();
        for (int i = 0; delivered.advanceRow(); i++) {
            VoltTable customer = r[5 * i + 1], sum = r[5 * i + 4];
            if (!customer.advanceRow()) {
                throw MissingRow.abort(this, "Delivery: new order " + delivered.getLong(1) + " of district "
                                             + delivered.getLong(0) + " has no order row");
            }
            sum.advanceRow();
            BigDecimal amount = sum.getDecimalAsBigDecimal(0);
            if (sum.wasNull()) amount = BigDecimal.ZERO;
            voltQueueSQL(payCustomer, amount, w_id, delivered.getLong(0), customer.getLong(0));
        }
        voltExecuteSQL(true);
        delivered.resetRowPosition();
        return delivered;
    }
}
