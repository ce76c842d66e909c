package tpcc.ycsb;

import org.voltdb.VoltTable;

/** Write a record (rows: field, field_value) whether or not it is there: the load's write. */
public class YcsbUpsert extends YcsbBase {
    public VoltTable run(String key, VoltTable fields) {
        writeFields(upsertField, key, fields, 0, fields.getRowCount());
        return found(true);
    }
}
