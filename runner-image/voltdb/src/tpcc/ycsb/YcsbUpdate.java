package tpcc.ycsb;

import org.voltdb.VoltTable;

/** Set some fields (rows: field, field_value) of a record; found = 0 if there is none. */
public class YcsbUpdate extends YcsbBase {
    public VoltTable run(String key, VoltTable fields) {
        return found(update(key, fields, 0, fields.getRowCount()));
    }
}
