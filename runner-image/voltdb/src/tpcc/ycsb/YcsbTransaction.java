package tpcc.ycsb;

import java.util.ArrayList;
import java.util.List;

import org.voltdb.VoltTable;
import org.voltdb.VoltTableRow;
import org.voltdb.VoltType;

/**
 * Several YCSB operations as one multi-partition transaction (operationspertransaction > 1). ops
 * has one row per written field (op, kind, ycsb_key, field, field_value, scan_length); the rows of an operation are consecutive, a read or scan has one row. One result
 * per operation: READ the record's rows (field, field_value), SCAN (ycsb_key, field, field_value),
 * the writes found (1, or 0 for an update of a missing record). Any failure (an insert of a key
 * already there) aborts the whole: nothing of it is written.
 */
public class YcsbTransaction extends YcsbBase {
    static final byte READ = 0, UPDATE = 1, INSERT = 2, SCAN = 3;

    /** Inserts queued and not yet executed: they go to the partitions MAX_BATCH statements at a
     * time, not one round per record. */
    private int queued;

    public VoltTable[] run(VoltTable ops) {
        queued = 0;  // VoltDB reuses a procedure's instance
        int rows = ops.getRowCount();
        List<VoltTable> results = new ArrayList<>();
        int first = 0;
        while (first < rows) {
            ops.advanceToRow(first);
            long op = ops.getLong(0);
            byte kind = (byte) ops.getLong(1);
            String key = ops.getString(2);
            int scanLength = (int) ops.getLong(5);
            int end = first + 1;
            while (end < rows && ops.fetchRow(end).getLong(0) == op) end++;
            results.add(execute(kind, key, ops, first, end, scanLength));
            first = end;
        }
        flush();
        return results.toArray(new VoltTable[0]);
    }

    private void flush() {
        if (queued > 0) voltExecuteSQL();
        queued = 0;
    }

    private VoltTable execute(byte kind, String key, VoltTable ops, int from, int to, int scanLength) {
        if (kind == INSERT) {
            for (int row = from; row < to; row++) {
                VoltTableRow r = ops.fetchRow(row);
                voltQueueSQL(insertField, key, r.getString(3), r.getVarbinary(4));
                if (++queued == MAX_BATCH) flush();
            }
            return found(true);
        }
        flush();  // a read sees the writes before it
        switch (kind) {
            case READ:
                voltQueueSQL(readRecord, key);
                return voltExecuteSQL()[0];
            case SCAN:
                voltQueueSQL(scanRecords, key, scanLength);
                return voltExecuteSQL()[0];
            case UPDATE:
                return found(update(key, fieldsOf(ops, from, to), 0, to - from));
            default:
                throw new VoltAbortException("YcsbTransaction: unknown operation kind " + kind);
        }
    }

    /** The (field, field_value) rows of one operation. */
    private static VoltTable fieldsOf(VoltTable ops, int from, int to) {
        VoltTable fields = new VoltTable(new VoltTable.ColumnInfo("field", VoltType.STRING),
                                         new VoltTable.ColumnInfo("field_value", VoltType.VARBINARY));
        for (int row = from; row < to; row++) {
            VoltTableRow r = ops.fetchRow(row);
            fields.addRow(r.getString(3), r.getVarbinary(4));
        }
        return fields;
    }
}
