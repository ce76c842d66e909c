package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * The Stock-Level transaction, clause 2.8.2.2 (read-only, single-partition on w_id): the
 * number of distinct items of the district's last 20 orders whose home stock is below the
 * threshold.
 */
public class StockLevel extends VoltProcedure {
    public final SQLStmt getNextOrderId = new SQLStmt(
        "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?;");
    public final SQLStmt countLowStock = new SQLStmt(
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock "
        + "WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? "
        + "AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?;");

    public long run(int w_id, int d_id, int threshold) {
        voltQueueSQL(getNextOrderId, w_id, d_id);
        VoltTable d = voltExecuteSQL()[0];
        if (!d.advanceRow()) throw MissingRow.abort(this, "StockLevel: no district " + d_id + " in warehouse " + w_id);
        long next = d.getLong(0);
        voltQueueSQL(countLowStock, w_id, d_id, next, next - 20, w_id, threshold);
        return voltExecuteSQL(true)[0].asScalarLong();
    }
}
