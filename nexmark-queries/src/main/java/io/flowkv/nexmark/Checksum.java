package io.flowkv.nexmark;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.util.Collector;

/**
 * An order-independent fingerprint of a query's output: the wrapping sum of a 64-bit hash of every
 * record, and the record count. Parallel subtasks add into two accumulators that Flink sums at the
 * end of the job, so the result does not depend on parallelism or arrival order.
 */
public final class Checksum extends RichFlatMapFunction<Tuple4<Long, Long, Long, Long>, Long> {
    private static final long serialVersionUID = 1L;

    public static final String RECORDS = "nexmark-output-records";
    public static final String SUM = "nexmark-output-checksum";

    private transient LongCounter records;
    private transient LongCounter sum;

    /** 64-bit hash of one output record. */
    public static long hash(Tuple4<Long, Long, Long, Long> r) {
        return hash(r.f0, r.f1, r.f2, r.f3);
    }

    /** 64-bit hash of one output record given as its four fields. */
    public static long hash(long a, long b, long c, long d) {
        long h = EventGenerator.mix64(a + 0x9E3779B97F4A7C15L);
        h = EventGenerator.mix64(h ^ b);
        h = EventGenerator.mix64(h ^ c);
        return EventGenerator.mix64(h ^ d);
    }

    @Override
    public void open(OpenContext openContext) {
        records = new LongCounter();
        sum = new LongCounter();
        getRuntimeContext().addAccumulator(RECORDS, records);
        getRuntimeContext().addAccumulator(SUM, sum);
    }

    @Override
    public void flatMap(Tuple4<Long, Long, Long, Long> record, Collector<Long> out) {
        records.add(1L);
        sum.add(hash(record));
    }
}
