package tpcc.procedures;

/** Money is FLOAT in the schema; every amount a procedure computes is rounded to cents. */
final class Money {
    private Money() {}

    static double cents(double amount) {
        return Math.round(amount * 100.0) / 100.0;
    }
}
