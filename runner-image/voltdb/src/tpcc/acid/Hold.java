package tpcc.acid;

/**
 * A client cannot hold a VoltDB transaction open between calls: a transaction is one procedure
 * call, run to its end before the partition runs anything else. So the ACID tests' procedures
 * hold themselves: each does its transaction's work, sleeps inside it (a transaction sent
 * meanwhile to the partition is queued behind it), then commits or rolls back as asked.
 * For tests only (`tpcc acid`); the adapter creates these procedures and drops them after.
 */
final class Hold {
    /** The abort message of a rollback the test asked for (the driver sees it in the error). */
    static final String ROLLED_BACK = "ACID test: rolled back as asked";

    private Hold() {}

    static void sleep(int millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
