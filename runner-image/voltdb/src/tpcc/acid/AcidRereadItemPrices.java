package tpcc.acid;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;
import org.voltdb.VoltTable;
import org.voltdb.VoltType;

/**
 * Isolation test 7's T2 reads (single-partition on w_id; ITEM is replicated): I_PRICE of x,
 * then after hold_ms of x again and of y, in one transaction. Returns (first_x, second_x, y).
 */
public class AcidRereadItemPrices extends VoltProcedure {
    public final SQLStmt getPrice = new SQLStmt("SELECT i_price FROM item WHERE i_id = ?;");

    public VoltTable run(int w_id, int x, int y, int hold_ms) {
        voltQueueSQL(getPrice, x);
        VoltTable first = voltExecuteSQL()[0];
        Hold.sleep(hold_ms);
        voltQueueSQL(getPrice, x);
        voltQueueSQL(getPrice, y);
        VoltTable[] second = voltExecuteSQL(true);
        VoltTable prices = new VoltTable(new VoltTable.ColumnInfo("first_x", VoltType.DECIMAL),
                                         new VoltTable.ColumnInfo("second_x", VoltType.DECIMAL),
                                         new VoltTable.ColumnInfo("y", VoltType.DECIMAL));
        prices.addRow(first.fetchRow(0).getDecimalAsBigDecimal(0), second[0].fetchRow(0).getDecimalAsBigDecimal(0),
                      second[1].fetchRow(0).getDecimalAsBigDecimal(0));
        return prices;
    }
}
