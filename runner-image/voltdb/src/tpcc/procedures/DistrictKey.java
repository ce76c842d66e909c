package tpcc.procedures;

/**
 * The district key of the district-keyed tables (*_wd columns): W_ID * 10 + D_ID, one value per
 * district since D_ID is 1..10. tpcc.sql partitions those tables on it when the driver's
 * partitioning is "district"; every writer sets it in both layouts.
 */
public final class DistrictKey {
    private DistrictKey() {}

    public static int of(int w_id, int d_id) {
        return w_id * 10 + d_id;
    }
}
