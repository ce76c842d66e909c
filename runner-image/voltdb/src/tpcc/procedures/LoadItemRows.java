package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Loads one ITEM unit (consecutive item ids) when ITEM is partitioned on i_id: the D_ID layout,
 * the VoltDB study's "Both the Item table and the Stock table are partitioned on the columns
 * associated with the Item ID". Elsewhere ITEM is replicated and the driver loads it with
 * {@code @LoadMultipartitionTable}, which VoltDB 10 refuses for a partitioned table ("no longer
 * supports loading partitioned tables"). Multi-partition (the unit's items span the partitions),
 * so row by row; the unit's rows and its marker (w_id 0, as every ITEM unit's) commit together.
 */
public class LoadItemRows extends Loader {
    public final SQLStmt deleteItems = new SQLStmt("DELETE FROM item WHERE i_id BETWEEN ? AND ?;");
    public final SQLStmt insertItem = new SQLStmt("INSERT INTO item VALUES (?, ?, ?, ?, ?);");

    public long run(String unitKey, VoltTable items) {
        begin();
        if (items.getRowCount() > 0) queue(deleteItems, idOf(items, false, 0), idOf(items, true, 0));
        insert("item", insertItem, items);
        return finish(0, unitKey);
    }
}
