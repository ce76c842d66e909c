package tpcc.procedures;

import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;

/** Customer selection shared by Payment and Order-Status (clauses 2.5.2.2, 2.6.2.2). */
final class Customers {
    private Customers() {}

    /**
     * By id: the one row. By last name (c_id 0): rows sorted by c_first, the one at
     * position ceil(n/2). Leaves the table positioned on the chosen row.
     */
    static VoltTable pick(VoltProcedure procedure, VoltTable rows, int c_w_id, int c_d_id, int c_id,
                          String c_last) {
        int n = rows.getRowCount();
        if (n == 0) {
            throw MissingRow.abort(procedure, "no customer " + (c_id == 0 ? "named " + c_last : c_id)
                                           + " in warehouse " + c_w_id + " district " + c_d_id);
        }
        rows.resetRowPosition();
        for (int i = 0; i < (n + 1) / 2; i++) rows.advanceRow();
        return rows;
    }
}
