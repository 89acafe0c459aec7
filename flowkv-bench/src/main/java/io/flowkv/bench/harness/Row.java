package io.flowkv.bench.harness;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/** One run's result: a value per {@link Column}, empty when the run did not measure it. */
final class Row {

    static final String OK = "ok";

    private final EnumMap<Column, String> values = new EnumMap<>(Column.class);

    String get(Column c) {
        return values.getOrDefault(c, "");
    }

    boolean has(Column c) {
        return !get(c).isEmpty();
    }

    Row set(Column c, String v) {
        values.put(c, v == null ? "" : v);
        return this;
    }

    Row set(Column c, long v) {
        return set(c, Long.toString(v));
    }

    Row set(Column c, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return set(c, "");
        }
        // nine significant digits, plain notation: exact enough, and readable in the CSV
        return set(
                c,
                new BigDecimal(v).round(new MathContext(9)).stripTrailingZeros().toPlainString());
    }

    long getLong(Column c) {
        String v = get(c);
        return v.isEmpty() ? 0 : Long.parseLong(v);
    }

    double getDouble(Column c) {
        String v = get(c);
        return v.isEmpty() ? Double.NaN : Double.parseDouble(v);
    }

    boolean ok() {
        return OK.equals(get(Column.STATUS));
    }

    Map<Column, String> values() {
        return values;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Row r && r.values.equals(values);
    }

    @Override
    public int hashCode() {
        return Objects.hash(values);
    }

    @Override
    public String toString() {
        return values.toString();
    }
}
