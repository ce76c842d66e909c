package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Loads one WAREHOUSE row and its DISTRICT rows (district key d_wd last, from the driver):
 * single-partition on w_id, multi-partition when partitioned by district.
 */
public class LoadWarehouse extends Loader {
    public final SQLStmt upsertWarehouse = new SQLStmt("UPSERT INTO warehouse VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);");
    public final SQLStmt upsertDistrict = new SQLStmt(
        "UPSERT INTO district VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);");

    public long run(int w_id, String unitKey, VoltTable warehouses, VoltTable districts) {
        each(upsertWarehouse, warehouses);
        each(upsertDistrict, districts);
        return finish(w_id, unitKey);
    }
}
