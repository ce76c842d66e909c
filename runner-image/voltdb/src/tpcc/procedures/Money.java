package tpcc.procedures;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** Money is DECIMAL in the schema; every amount a procedure computes is rounded to cents. */
final class Money {
    private Money() {}

    static BigDecimal cents(BigDecimal amount) {
        return amount.setScale(2, RoundingMode.HALF_UP);
    }
}
