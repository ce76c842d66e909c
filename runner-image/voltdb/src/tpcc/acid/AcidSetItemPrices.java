package tpcc.acid;

import java.math.BigDecimal;

import org.voltdb.SQLStmt;
import org.voltdb.VoltProcedure;

/** Isolation test 7's T3 (and the prices put back after): multi-partition, as every write of the replicated ITEM. */
public class AcidSetItemPrices extends VoltProcedure {
    public final SQLStmt setPrice = new SQLStmt("UPDATE item SET i_price = ? WHERE i_id = ?;");

    public long run(int x, BigDecimal price_x, int y, BigDecimal price_y) {
        voltQueueSQL(setPrice, price_x, x);
        voltQueueSQL(setPrice, price_y, y);
        voltExecuteSQL(true);
        return 2;
    }
}
