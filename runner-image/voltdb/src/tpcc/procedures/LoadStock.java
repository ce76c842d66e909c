package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/** Loads one chunk of a warehouse's STOCK, single-partition on w_id. */
public class LoadStock extends Loader {
    public final SQLStmt upsertStock = new SQLStmt(
        "UPSERT INTO stock VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);");

    public long run(int w_id, String unitKey, VoltTable stock) {
        each(upsertStock, stock);
        return finish(w_id, unitKey);
    }
}
