package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/** Loads one chunk of ITEM (replicated, hence multi-partition); the unit is marked with w_id 0. */
public class LoadItems extends Loader {
    public final SQLStmt upsertItem = new SQLStmt("UPSERT INTO item VALUES (?, ?, ?, ?, ?);");

    public long run(String unitKey, VoltTable items) {
        each(upsertItem, items);
        return finish(0, unitKey);
    }
}
