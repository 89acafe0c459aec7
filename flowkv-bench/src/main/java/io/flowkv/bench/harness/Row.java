package io.flowkv.bench.harness;

import java.util.EnumMap;
import java.util.Locale;
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
        String s = String.format(Locale.ROOT, "%.6g", v);
        // %.6g may print 1.00000e+06; keep plain digits for humans reading the CSV
        if (s.contains("e")) {
            s = String.format(Locale.ROOT, "%.1f", v);
        }
        return set(c, s);
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
