package tpcc.procedures;

import org.voltdb.VoltProcedure;
import org.voltdb.VoltProcedure.VoltAbortException;

/**
 * A row the transaction needs is not there: the procedure aborts with app status
 * MISSING_ROW, which the runner's driver reports as NotLoaded, the one error every driver
 * gives for a missing row (drivers/base.py).
 */
final class MissingRow {
    /** App status code of the abort (the driver's APP_STATUS_MISSING_ROW). */
    static final byte MISSING_ROW = 2;

    private MissingRow() {}

    /** Usage: {@code throw MissingRow.abort(this, "...")}. */
    static VoltAbortException abort(VoltProcedure procedure, String message) {
        procedure.setAppStatusCode(MISSING_ROW);
        return new VoltAbortException(message);
    }
}
