package tpcc.procedures;

import java.lang.reflect.Field;
import org.voltdb.ProcedureRunner;
import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.jni.ExecutionEngine;

/**
 * Base of the load procedures: one load unit is one transaction that writes the unit's
 * rows and its done-marker together, so a unit is either wholly loaded and marked or not
 * there at all; reloading a unit replaces its rows (its key range is deleted first).
 * Rows arrive as VoltTable parameters whose columns follow the table's column order.
 *
 * A single-partition load procedure hands each table to the execution engine whole, as
 * {@code @LoadMultipartitionTable} does (ProcedureRunner.voltLoadTable, caller CLIENT): the
 * rows are inserted under the transaction's undo token, so they commit or roll back with the
 * unit's marker, and with none of a SQL statement's per-row planning, parameter and JNI work
 * (most of the server's load CPU). A multi-partition one (ITEM, replicated; the district
 * layout's warehouse and district units; the D_ID layout's warehouse, stock and district units) runs on the coordinator, which holds no partition's rows: it
 * inserts row by row with SQL, which VoltDB routes.
 */
public abstract class Loader extends VoltProcedure {
    private static final int BATCH = 200;
    // VoltProcedure keeps its runner package-private; voltLoadTable is public on the runner
    private static final Field RUNNER = runnerField();
    // per transaction (begin() resets them: VoltDB reuses a procedure's instance)
    private int pending;  // statements queued and not executed
    private long rows;  // rows inserted

    public final SQLStmt markUnit = new SQLStmt(
        "UPSERT INTO tpcc_load_unit (w_id, unit_key) VALUES (?, ?);");

    private static Field runnerField() {
        try {
            Field f = VoltProcedure.class.getDeclaredField("m_runner");
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("VoltProcedure.m_runner", e);
        }
    }

    /** First in every run: a transaction that aborted may have left the counts behind. */
    protected void begin() {
        pending = 0;
        rows = 0;
    }

    /** Inserts every row of rows into table: whole when single-partition, else stmt per row. */
    protected void insert(String table, SQLStmt stmt, VoltTable rows) {
        if (rows.getRowCount() == 0) return;
        ProcedureRunner runner;
        try {
            runner = (ProcedureRunner) RUNNER.get(this);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("VoltProcedure.m_runner", e);
        }
        if (!runner.getCatalogProcedure().getSinglepartition()) {
            each(stmt, rows);
            return;
        }
        flush();  // the unit's deletes come first
        runner.voltLoadTable(table, rows, ExecutionEngine.LoadTableCaller.CLIENT);
        this.rows += rows.getRowCount();
    }

    /** Queues stmt once per row, executing every BATCH statements. */
    private void each(SQLStmt stmt, VoltTable rows) {
        int n = rows.getColumnCount();
        rows.resetRowPosition();
        while (rows.advanceRow()) {
            Object[] values = new Object[n];
            for (int i = 0; i < n; i++) {
                Object v = rows.get(i, rows.getColumnType(i));
                values[i] = rows.wasNull() ? null : v;
            }
            queue(stmt, values);
            this.rows++;
        }
    }

    /** The value of column of the table's first (or last) row, as a long. */
    protected static long idOf(VoltTable rows, boolean last, int column) {
        return rows.fetchRow(last ? rows.getRowCount() - 1 : 0).getLong(column);
    }

    protected void queue(SQLStmt stmt, Object... params) {
        voltQueueSQL(stmt, params);
        if (++pending == BATCH) flush();
    }

    private void flush() {
        if (pending > 0) voltExecuteSQL();
        pending = 0;
    }

    /** Marks the unit done in the same transaction; the number of rows inserted. */
    protected long finish(int w_id, String unitKey) {
        voltQueueSQL(markUnit, w_id, unitKey);
        voltExecuteSQL(true);
        return rows;
    }
}
