package tpcc.procedures;

import org.voltdb.SQLStmt;
import org.voltdb.VoltTable;

/**
 * Loads one WAREHOUSE row and its DISTRICT rows (district key d_wd last, from the driver):
 * single-partition on w_id, multi-partition when partitioned by district or on D_ID (WAREHOUSE
 * and DISTRICT replicated).
 */
public class LoadWarehouse extends Loader {
    public final SQLStmt deleteWarehouse = new SQLStmt("DELETE FROM warehouse WHERE w_id = ?;");
    public final SQLStmt deleteDistricts = new SQLStmt("DELETE FROM district WHERE d_w_id = ?;");
    public final SQLStmt insertWarehouse = new SQLStmt("INSERT INTO warehouse VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);");
    public final SQLStmt insertDistrict = new SQLStmt(
        "INSERT INTO district VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);");

    public long run(int w_id, String unitKey, VoltTable warehouses, VoltTable districts) {
        begin();
        queue(deleteWarehouse, w_id);
        queue(deleteDistricts, w_id);
        insert("warehouse", insertWarehouse, warehouses);
        insert("district", insertDistrict, districts);
        return finish(w_id, unitKey);
    }
}
