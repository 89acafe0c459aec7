package io.flowkv.flink;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A window job stopped with a canonical savepoint on one backend resumes on another and produces
 * exactly what an uninterrupted run produces: RocksDB to FlowKV, FlowKV to HashMap, FlowKV to
 * FlowKV. The savepoint is taken mid-stream with windows open, so buffered elements, aggregates and
 * timers must all survive the move.
 */
public class SavepointMigrationTest {
    private static final KeySelector<Tuple2<String, Long>, String> KEY = t -> t.f0;
    private static final TypeInformation<Tuple2<String, Long>> INPUT =
            TypeInformation.of(new TypeHint<Tuple2<String, Long>>() {});

    @Test
    void shouldResumeRocksDbSavepointOnFlowKv() throws Exception {
        checkMigration(
                EmbeddedRocksDBStateBackend::new, FlowKVStateBackend::new, tumbling(), "tumbling");
        checkMigration(
                EmbeddedRocksDBStateBackend::new, FlowKVStateBackend::new, sessions(), "sessions");
    }

    @Test
    void shouldResumeFlowKvSavepointOnHashMap() throws Exception {
        checkMigration(FlowKVStateBackend::new, HashMapStateBackend::new, tumbling(), "tumbling");
        checkMigration(FlowKVStateBackend::new, HashMapStateBackend::new, sessions(), "sessions");
    }

    @Test
    void shouldResumeFlowKvSavepointOnFlowKv() throws Exception {
        checkMigration(FlowKVStateBackend::new, FlowKVStateBackend::new, tumbling(), "tumbling");
        checkMigration(FlowKVStateBackend::new, FlowKVStateBackend::new, sessions(), "sessions");
    }

    private static Supplier<OneInputStreamOperator<Tuple2<String, Long>, String>> tumbling() {
        return () ->
                new WindowOperatorBuilder<>(
                                TumblingEventTimeWindows.of(Duration.ofMillis(100)),
                                EventTimeTrigger.create(),
                                new ExecutionConfig(),
                                INPUT,
                                KEY,
                                BasicTypeInfo.STRING_TYPE_INFO)
                        .process(new ListWindow());
    }

    private static Supplier<OneInputStreamOperator<Tuple2<String, Long>, String>> sessions() {
        return () ->
                new WindowOperatorBuilder<>(
                                EventTimeSessionWindows.withGap(Duration.ofMillis(30)),
                                EventTimeTrigger.create(),
                                new ExecutionConfig(),
                                INPUT,
                                KEY,
                                BasicTypeInfo.STRING_TYPE_INFO)
                        .process(new ListWindow());
    }

    /** Emits the key, the window and its elements in iteration order. */
    public static final class ListWindow
            extends ProcessWindowFunction<Tuple2<String, Long>, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple2<String, Long>> elements,
                Collector<String> out) {
            List<Long> values = new ArrayList<>();
            elements.forEach(e -> values.add(e.f1));
            out.collect(key + "@" + context.window() + "=" + values);
        }
    }

    private void checkMigration(
            Supplier<StateBackend> before,
            Supplier<StateBackend> after,
            Supplier<OneInputStreamOperator<Tuple2<String, Long>, String>> operator,
            String what)
            throws Exception {
        long seed = Long.getLong("flowkv.seed", new SplittableRandom().nextLong());
        List<StreamRecord<Tuple2<String, Long>>> input = input(seed);
        int cut = input.size() / 2;

        List<String> expected =
                run(HashMapStateBackend::new, operator, input, 0, input.size(), null, false)
                        .output();

        Result first = run(before, operator, input, 0, cut, null, true);
        Result second = run(after, operator, input, cut, input.size(), first.savepoint(), false);
        List<String> output = new ArrayList<>(first.output());
        output.addAll(second.output());

        // Timers of equal timestamp fire in queue order, which a restore rebuilds by key group:
        // compare as multisets. Each window's element order is inside its output string.
        assertThat(output)
                .as("%s, %s -> %s, seed %d", what, before.get(), after.get(), seed)
                .containsExactlyInAnyOrderElementsOf(expected);
    }

    private record Result(List<String> output, OperatorSubtaskState savepoint) {}

    /**
     * Runs records [from, to) on a fresh harness, restoring {@code restore} if given; at the end it
     * either takes a canonical savepoint or drains all windows with a final watermark.
     */
    private static Result run(
            Supplier<StateBackend> backend,
            Supplier<OneInputStreamOperator<Tuple2<String, Long>, String>> operator,
            List<StreamRecord<Tuple2<String, Long>>> input,
            int from,
            int to,
            OperatorSubtaskState restore,
            boolean takeSavepoint)
            throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, String> harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        operator.get(), KEY, BasicTypeInfo.STRING_TYPE_INFO, 128, 1, 0);
        try {
            harness.setStateBackend(backend.get());
            if (restore != null) {
                harness.initializeState(restore);
            }
            harness.open();
            long watermark = Long.MIN_VALUE;
            for (int i = from; i < to; i++) {
                StreamRecord<Tuple2<String, Long>> record = input.get(i);
                harness.processElement(
                        new StreamRecord<>(record.getValue(), record.getTimestamp()));
                if (i % 25 == 24) {
                    watermark = Math.max(watermark, record.getTimestamp() - 20);
                    harness.processWatermark(new Watermark(watermark));
                }
            }
            OperatorSubtaskState savepoint = null;
            if (takeSavepoint) {
                savepoint =
                        harness.snapshotWithLocalState(
                                        1L,
                                        1L,
                                        SavepointType.savepoint(SavepointFormatType.CANONICAL))
                                .getJobManagerOwnedState();
            } else {
                harness.processWatermark(new Watermark(Long.MAX_VALUE));
            }
            List<String> out = new ArrayList<>();
            for (Object o : harness.getOutput()) {
                if (o instanceof StreamRecord) {
                    out.add((String) ((StreamRecord<?>) o).getValue());
                }
            }
            return new Result(out, savepoint);
        } finally {
            harness.close();
        }
    }

    /**
     * Ten keys, timestamps mostly increasing with bounded disorder (less than the watermark lag).
     */
    private static List<StreamRecord<Tuple2<String, Long>>> input(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<StreamRecord<Tuple2<String, Long>>> records = new ArrayList<>();
        long time = 0;
        for (int i = 0; i < 600; i++) {
            time += random.nextInt(4);
            long timestamp = Math.max(0, time - random.nextInt(15));
            String key = "k" + random.nextInt(10);
            records.add(new StreamRecord<>(Tuple2.of(key, (long) i), timestamp));
        }
        return records;
    }
}
