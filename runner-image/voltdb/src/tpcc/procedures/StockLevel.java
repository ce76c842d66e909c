package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * The Stock-Level transaction, clause 2.8.2.2 (read-only; single-partition on w_id, or
 * multi-partition when partitioned by district or on D_ID): the number of distinct items of the
 * district's last 20 orders whose home stock is below the threshold. Two reads, not a join of
 * ORDER-LINE and STOCK: partitioned by district (or on D_ID) the two tables are partitioned on
 * different keys, and VoltDB does not plan a join of partitioned tables that is not on their partition
 * columns.
 */
public class StockLevel extends VoltProcedure {
    public final SQLStmt getNextOrderId = new SQLStmt(
        "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?;");
    public final SQLStmt getRecentItems = new SQLStmt(
        "SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ?;");
    public final SQLStmt countLowStock = new SQLStmt(
        "SELECT COUNT(*) FROM stock WHERE s_w_id = ? AND s_i_id IN ? AND s_quantity < ?;");

    public long run(int w_id, int d_id, int threshold) {
        voltQueueSQL(getNextOrderId, w_id, d_id);
        VoltTable d = voltExecuteSQL()[0];
        if (!d.advanceRow()) throw MissingRow.abort(this, "StockLevel: no district " + d_id + " in warehouse " + w_id);
        long next = d.getLong(0);
        voltQueueSQL(getRecentItems, w_id, d_id, next, next - 20);
        VoltTable items = voltExecuteSQL()[0];
        if (items.getRowCount() == 0) return 0;
        long[] ids = new long[items.getRowCount()];
        for (int i = 0; items.advanceRow(); i++) ids[i] = items.getLong(0);
        voltQueueSQL(countLowStock, w_id, ids, threshold);
        return voltExecuteSQL(true)[0].asScalarLong();
    }
}
