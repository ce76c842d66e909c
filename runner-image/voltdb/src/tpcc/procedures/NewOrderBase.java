package tpcc.procedures;

import java.math.BigDecimal;
import java.util.HashMap;
import java.util.Map;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;
import org.voltdb.types.TimestampType;

/**
 * The New-Order transaction, clause 2.4.2.2, shared by NewOrder (single-partition on the
 * home warehouse) and NewOrderMP (the same work as one multi-partition transaction).
 *
 * Remote supply warehouses: every table is partitioned by warehouse, so the STOCK row of
 * a remote supply warehouse lives in another partition. An order whose lines are all
 * supplied by the home warehouse (99% of lines, about 90% of orders) runs single-partition;
 * the driver sends an order with any remote line to NewOrderMP, which does the identical
 * work as one serializable multi-partition transaction. Both are one ACID transaction, and
 * the invalid-item rollback (VoltAbortException) undoes either completely.
 */
public abstract class NewOrderBase extends VoltProcedure {
    /** App status code of the TPC-C rollback on an unused item id (clause 2.4.2.3). */
    public static final byte INVALID_ITEM = 1;

    public final SQLStmt getWarehouseTax = new SQLStmt(
        "SELECT w_tax FROM warehouse WHERE w_id = ?;");
    public final SQLStmt getDistrict = new SQLStmt(
        "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?;");
    public final SQLStmt setNextOrderId = new SQLStmt(
        "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?;");
    public final SQLStmt getCustomer = new SQLStmt(
        "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;");
    public final SQLStmt insertOrder = new SQLStmt(
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local, o_wd) "
        + "VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?);");
    public final SQLStmt insertNewOrder = new SQLStmt(
        "INSERT INTO new_order (no_o_id, no_d_id, no_w_id, no_wd) VALUES (?, ?, ?, ?);");
    public final SQLStmt getItem = new SQLStmt(
        "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?;");
    public final SQLStmt getStock = new SQLStmt(
        "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt, s_data, s_dist_01, s_dist_02, s_dist_03, "
        + "s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 "
        + "FROM stock WHERE s_w_id = ? AND s_i_id = ?;");
    public final SQLStmt setStock = new SQLStmt(
        "UPDATE stock SET s_quantity = ?, s_ytd = ?, s_order_cnt = ?, s_remote_cnt = ? "
        + "WHERE s_w_id = ? AND s_i_id = ?;");
    public final SQLStmt insertOrderLine = new SQLStmt(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "
        + "ol_delivery_d, ol_quantity, ol_amount, ol_dist_info, ol_wd) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?);");

    /** A STOCK row as this transaction changes it (an item may appear on several lines). */
    private static final class Stock {
        long quantity, ytd, orderCnt, remoteCnt;
        String data;
        String[] dist = new String[10];
    }

    protected VoltTable[] newOrder(int w_id, int d_id, int c_id, TimestampType o_entry_d,
                                   int[] i_ids, int[] supply_w_ids, int[] quantities) {
        int n = i_ids.length;
        if (n == 0 || supply_w_ids.length != n || quantities.length != n) {
            throw new VoltAbortException("NewOrder: item, supply warehouse and quantity lists differ in length");
        }
        voltQueueSQL(getWarehouseTax, w_id);
        voltQueueSQL(getDistrict, w_id, d_id);
        voltQueueSQL(getCustomer, w_id, d_id, c_id);
        for (int i = 0; i < n; i++) voltQueueSQL(getItem, i_ids[i]);
        VoltTable[] r = voltExecuteSQL();
        for (int i = 0; i < n; i++) {
            if (r[3 + i].getRowCount() == 0) {
                setAppStatusCode(INVALID_ITEM);
                throw new VoltAbortException("TPC-C rollback: item " + i_ids[i] + " does not exist");
            }
        }
        VoltTable w = r[0], d = r[1], c = r[2];
        if (!w.advanceRow() || !d.advanceRow() || !c.advanceRow()) {
            throw MissingRow.abort(this, "NewOrder: no warehouse " + w_id + ", district " + d_id + " or customer " + c_id);
        }
        double wTax = w.getDouble(0), dTax = d.getDouble(0), cDiscount = c.getDouble(0);
        int oId = (int) d.getLong(1);
        boolean allLocal = true;
        for (int s : supply_w_ids) allLocal &= s == w_id;

        Map<Long, Stock> stocks = new HashMap<>();
        for (int i = 0; i < n; i++) voltQueueSQL(getStock, supply_w_ids[i], i_ids[i]);
        VoltTable[] st = voltExecuteSQL();

        VoltTable lines = new VoltTable(
            new VoltTable.ColumnInfo("ol_supply_w_id", VoltType.INTEGER),
            new VoltTable.ColumnInfo("ol_i_id", VoltType.INTEGER),
            new VoltTable.ColumnInfo("i_name", VoltType.STRING),
            new VoltTable.ColumnInfo("ol_quantity", VoltType.INTEGER),
            new VoltTable.ColumnInfo("s_quantity", VoltType.INTEGER),
            new VoltTable.ColumnInfo("brand_generic", VoltType.STRING),
            new VoltTable.ColumnInfo("i_price", VoltType.DECIMAL),
            new VoltTable.ColumnInfo("ol_amount", VoltType.DECIMAL));
        voltQueueSQL(setNextOrderId, oId + 1, w_id, d_id);
        int wd = DistrictKey.of(w_id, d_id);
        voltQueueSQL(insertOrder, oId, d_id, w_id, c_id, o_entry_d, n, allLocal ? 1 : 0, wd);
        voltQueueSQL(insertNewOrder, oId, d_id, w_id, wd);
        BigDecimal sum = BigDecimal.ZERO;
        for (int i = 0; i < n; i++) {
            long key = ((long) supply_w_ids[i] << 32) | i_ids[i];
            Stock s = stocks.get(key);
            if (s == null) {
                VoltTable row = st[i];
                if (!row.advanceRow()) {
                    throw MissingRow.abort(this, "NewOrder: no stock for item " + i_ids[i] + " in warehouse " + supply_w_ids[i]);
                }
                s = new Stock();
                s.quantity = row.getLong(0);
                s.ytd = row.getLong(1);
                s.orderCnt = row.getLong(2);
                s.remoteCnt = row.getLong(3);
                s.data = row.getString(4);
                for (int k = 0; k < 10; k++) s.dist[k] = row.getString(5 + k);
                stocks.put(key, s);
            }
            int q = quantities[i];
            s.quantity = s.quantity >= q + 10 ? s.quantity - q : s.quantity - q + 91;
            s.ytd += q;
            s.orderCnt += 1;
            if (supply_w_ids[i] != w_id) s.remoteCnt += 1;

            VoltTable item = r[3 + i];
            item.advanceRow();
            BigDecimal price = item.getDecimalAsBigDecimal(0);
            String name = item.getString(1), iData = item.getString(2);
            BigDecimal amount = Money.cents(price.multiply(BigDecimal.valueOf(q)));
            sum = sum.add(amount);
            boolean original = iData != null && iData.contains("ORIGINAL")
                && s.data != null && s.data.contains("ORIGINAL");
            voltQueueSQL(insertOrderLine, oId, d_id, w_id, i + 1, i_ids[i], supply_w_ids[i], q, amount,
                         s.dist[d_id - 1], DistrictKey.of(w_id, d_id));
            lines.addRow(supply_w_ids[i], i_ids[i], name, q, s.quantity, original ? "B" : "G", price, amount);
        }
        for (Map.Entry<Long, Stock> e : stocks.entrySet()) {
            Stock s = e.getValue();
            voltQueueSQL(setStock, s.quantity, s.ytd, s.orderCnt, s.remoteCnt,
                         (int) (e.getKey() >>> 32), (int) (e.getKey() & 0xffffffffL));
        }
        voltExecuteSQL(true);

        // the total is only returned (never stored): rates are FLOAT, so a double suffices
        double total = Math.round(sum.doubleValue() * (1 - cDiscount) * (1 + wTax + dTax) * 100.0) / 100.0;
        VoltTable order = new VoltTable(
            new VoltTable.ColumnInfo("o_id", VoltType.INTEGER),
            new VoltTable.ColumnInfo("total", VoltType.FLOAT),
            new VoltTable.ColumnInfo("c_last", VoltType.STRING),
            new VoltTable.ColumnInfo("c_credit", VoltType.STRING),
            new VoltTable.ColumnInfo("c_discount", VoltType.FLOAT),
            new VoltTable.ColumnInfo("w_tax", VoltType.FLOAT),
            new VoltTable.ColumnInfo("d_tax", VoltType.FLOAT));
        order.addRow(oId, total, c.getString(1), c.getString(2), cDiscount, wTax, dTax);
        return new VoltTable[] {order, lines};
    }
}
