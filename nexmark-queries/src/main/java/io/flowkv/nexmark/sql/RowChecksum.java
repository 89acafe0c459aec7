package io.flowkv.nexmark.sql;

import io.flowkv.nexmark.Checksum;
import io.flowkv.nexmark.EventGenerator;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;

/**
 * The {@link Checksum} of a SQL query's changelog with the changelog applied: {@code +I}/{@code +U}
 * add the row's hash and one record, {@code -U}/{@code -D} subtract them. The sums are therefore
 * those of the final result table, whatever the order of the updates that led to it. Writes into
 * the same accumulators as {@link Checksum}, so the runner reads both the same way.
 *
 * <p>With an upsert key ({@link SqlQuery#upsertKey}) the changelog is applied by key ({@link
 * ChangelogApplier}): the function then keeps each key's current row hash on the heap, one entry
 * per row of the result its subtask sees (a row's key always reaches the same subtask, since the
 * changelog is forwarded from the operator that keys it).
 */
public final class RowChecksum extends RichFlatMapFunction<Row, Long> {
    private static final long serialVersionUID = 1L;

    private final int upsertKey;

    private transient Applied applied;

    /**
     * A checksum of a changelog keyed by field {@code upsertKey} ({@link SqlQuery#upsertKey}), or
     * of one that retracts every row it replaces ({@link SqlQuery#NO_UPSERT_KEY}).
     */
    public RowChecksum(int upsertKey) {
        this.upsertKey = upsertKey;
    }

    @Override
    public void open(OpenContext openContext) {
        applied = new Applied(upsertKey);
        getRuntimeContext().addAccumulator(Checksum.RECORDS, applied.records);
        getRuntimeContext().addAccumulator(Checksum.SUM, applied.sum);
    }

    @Override
    public void flatMap(Row row, Collector<Long> out) {
        applied.apply(row);
    }

    /** A result table's record count and hash sum as its changelog is applied, row by row. */
    static final class Applied {
        final LongCounter records = new LongCounter();
        final LongCounter sum = new LongCounter();
        private final int upsertKey;
        private final ChangelogApplier<Long> applier;

        Applied(int upsertKey) {
            this.upsertKey = upsertKey;
            this.applier =
                    new ChangelogApplier<>(
                            upsertKey,
                            (hash, delta) -> {
                                records.add((long) delta);
                                sum.add(delta * hash);
                            });
        }

        void apply(Row row) {
            Object key = upsertKey == SqlQuery.NO_UPSERT_KEY ? null : row.getField(upsertKey);
            applier.apply(row.getKind(), key, hash(row));
        }
    }

    /** 64-bit hash of a row's fields (not its kind), stable across JVMs and backends. */
    public static long hash(Row row) {
        long h = 0x9E3779B97F4A7C15L + row.getArity();
        for (int i = 0; i < row.getArity(); i++) {
            h = EventGenerator.mix64(h ^ field(row.getField(i)));
        }
        return h;
    }

    static long field(Object v) {
        if (v == null) {
            return 0x5bd1e995L;
        }
        if (v instanceof Long l) {
            return l;
        }
        if (v instanceof Integer i) {
            return i;
        }
        if (v instanceof Short s) {
            return s;
        }
        if (v instanceof Byte b) {
            return b;
        }
        if (v instanceof Boolean b) {
            return b ? 1 : 2;
        }
        if (v instanceof Double d) {
            return Double.doubleToLongBits(d);
        }
        if (v instanceof Float f) {
            return Double.doubleToLongBits(f);
        }
        if (v instanceof BigDecimal d) {
            BigDecimal s = d.stripTrailingZeros();
            return EventGenerator.mix64(s.unscaledValue().longValue() ^ s.scale());
        }
        if (v instanceof Instant t) {
            return t.toEpochMilli();
        }
        if (v instanceof LocalDateTime t) {
            return t.toInstant(ZoneOffset.UTC).toEpochMilli();
        }
        if (v instanceof LocalDate d) {
            return d.toEpochDay();
        }
        if (v instanceof LocalTime t) {
            return t.toNanoOfDay();
        }
        if (v instanceof String s) {
            return string(s);
        }
        if (v instanceof Row r) {
            return hash(r);
        }
        return string(v.toString());
    }

    private static long string(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return EventGenerator.mix64(h);
    }
}
