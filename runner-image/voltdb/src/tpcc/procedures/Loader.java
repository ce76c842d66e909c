package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/**
 * Base of the load procedures: one load unit is one transaction that writes the unit's
 * rows and its done-marker together, so a unit is either wholly loaded and marked or not
 * there at all; reloading a unit replaces its rows (upsert, or delete then insert).
 * Rows arrive as VoltTable parameters whose columns follow the table's column order.
 */
public abstract class Loader extends VoltProcedure {
    private static final int BATCH = 200;
    private int queued;

    public final SQLStmt markUnit = new SQLStmt(
        "UPSERT INTO tpcc_load_unit (w_id, unit_key) VALUES (?, ?);");

    /** Queues stmt once per row, executing every BATCH statements. */
    protected void each(SQLStmt stmt, VoltTable rows) {
        int n = rows.getColumnCount();
        rows.resetRowPosition();
        while (rows.advanceRow()) {
            Object[] values = new Object[n];
            for (int i = 0; i < n; i++) {
                Object v = rows.get(i, rows.getColumnType(i));
                values[i] = rows.wasNull() ? null : v;
            }
            queue(stmt, values);
        }
    }

    protected void queue(SQLStmt stmt, Object... params) {
        voltQueueSQL(stmt, params);
        if (++queued % BATCH == 0) voltExecuteSQL();
    }

    protected long finish(int w_id, String unitKey) {
        voltQueueSQL(markUnit, w_id, unitKey);
        voltExecuteSQL(true);
        return queued;
    }
}
