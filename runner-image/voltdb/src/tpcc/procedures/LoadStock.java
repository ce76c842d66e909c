package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Loads one chunk of a warehouse's STOCK (consecutive items), single-partition on w_id
 * (multi-partition when partitioned on D_ID: STOCK is then partitioned on s_i_id).
 */
public class LoadStock extends Loader {
    public final SQLStmt deleteStock = new SQLStmt("DELETE FROM stock WHERE s_w_id = ? AND s_i_id BETWEEN ? AND ?;");
    public final SQLStmt insertStock = new SQLStmt(
        "INSERT INTO stock VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);");

    public long run(int w_id, String unitKey, VoltTable stock) {
        begin();
        if (stock.getRowCount() > 0) queue(deleteStock, w_id, idOf(stock, false, 0), idOf(stock, true, 0));
        insert("stock", insertStock, stock);
        return finish(w_id, unitKey);
    }
}
