package tpcc.ycsb;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * YCSB's operations on USERTABLE, which holds one row per field of a record (ycsb_key, field,
 * field_value): any fieldcount fits one table, and an update writes only the fields it sets.
 * The table is partitioned on ycsb_key, so every field of a record is in one partition.
 */
public abstract class YcsbBase extends VoltProcedure {
    public final SQLStmt readRecord = new SQLStmt(
        "SELECT field, field_value FROM usertable WHERE ycsb_key = ? ORDER BY field;");
    public final SQLStmt findRecord = new SQLStmt(
        "SELECT field FROM usertable WHERE ycsb_key = ? LIMIT 1;");
    public final SQLStmt insertField = new SQLStmt(
        "INSERT INTO usertable (ycsb_key, field, field_value) VALUES (?, ?, ?);");
    public final SQLStmt upsertField = new SQLStmt(
        "UPSERT INTO usertable (ycsb_key, field, field_value) VALUES (?, ?, ?);");
    public final SQLStmt scanRecords = new SQLStmt(
        "SELECT ycsb_key, field, field_value FROM usertable WHERE ycsb_key >= ? ORDER BY ycsb_key, field LIMIT ?;");

    /** VoltDB runs at most this many queued statements per voltExecuteSQL. */
    static final int MAX_BATCH = 200;

    static VoltTable found(boolean found) {
        VoltTable t = new VoltTable(new VoltTable.ColumnInfo("found", VoltType.BIGINT));
        t.addRow(found ? 1L : 0L);
        return t;
    }

    /** Write fields[from, to) (rows: field, field_value) of the record key with the statement. */
    void writeFields(SQLStmt write, String key, VoltTable fields, int from, int to) {
        int queued = 0;
        for (int row = from; row < to; row++) {
            fields.advanceToRow(row);
            voltQueueSQL(write, key, fields.getString(0), fields.getVarbinary(1));
            if (++queued == MAX_BATCH) {
                voltExecuteSQL();
                queued = 0;
            }
        }
        if (queued > 0) voltExecuteSQL();
    }

    /** An update: false (YCSB's NOT_FOUND) if there is no such record. */
    boolean update(String key, VoltTable fields, int from, int to) {
        voltQueueSQL(findRecord, key);
        if (voltExecuteSQL()[0].getRowCount() == 0) return false;
        writeFields(upsertField, key, fields, from, to);
        return true;
    }
}
