package tpcc.ycsb;

import org.voltdb.VoltTable;

/** Insert a record (rows: field, field_value); a key already there aborts it (primary key). */
public class YcsbInsert extends YcsbBase {
    public VoltTable run(String key, VoltTable fields) {
        writeFields(insertField, key, fields, 0, fields.getRowCount());
        return found(true);
    }
}
