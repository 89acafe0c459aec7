package io.flowkv.flink;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.JoinFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Whole jobs on a local MiniCluster selecting the backend by its short name, {@code
 * state.backend.type: flowkv}, with checkpointing on: tumbling-window and session-window process
 * functions, a sliding-window aggregate and a window join must give what the HashMap backend gives,
 * also after a failure and restore from a checkpoint, and a bad FlowKV option must fail the
 * submission naming the option.
 */
class FlowKVMiniClusterTest {
    private static final long ELEMENTS = 2_000;
    private static final Duration WINDOW = Duration.ofMillis(100);

    /** Checkpoints completed in the current job, as its throttling map functions saw them. */
    private static final AtomicInteger COMPLETED_CHECKPOINTS = new AtomicInteger();

    /** Source elements that came after a checkpoint had completed. */
    private static final AtomicInteger ELEMENTS_AFTER_A_CHECKPOINT = new AtomicInteger();

    private static final AtomicInteger INJECTED_FAILURES = new AtomicInteger();

    /** Throttle subtasks that started from a checkpoint. */
    private static final AtomicInteger RESTORED_SUBTASKS = new AtomicInteger();

    private static List<String> heapOutput;

    @TempDir Path checkpoints;
    @TempDir Path localDir;

    @Test
    void shouldMatchHashMapWithCheckpointsOnWindowsAndWindowJoin() throws Exception {
        List<String> heap = heapOutput();
        List<String> flowKv = run(configuration("flowkv"), false);

        assertThat(heap)
                .as("the job emits tumbling, session and sliding window results and join pairs")
                .anyMatch(line -> line.startsWith("window "))
                .anyMatch(line -> line.startsWith("session "))
                .anyMatch(line -> line.startsWith("sliding "))
                .anyMatch(line -> line.startsWith("join "));
        assertThat(COMPLETED_CHECKPOINTS.get())
                .as("checkpoints completed with flowkv")
                .isPositive();
        assertThat(ELEMENTS_AFTER_A_CHECKPOINT.get())
                .as("source elements after a checkpoint had completed with flowkv")
                .isPositive();
        assertThat(localDir.resolve("flowkv"))
                .as("FlowKV working directories were made under state.backend.flowkv.localdir")
                .isDirectory();
        assertThat(flowKv).containsExactlyElementsOf(heap);
    }

    @Test
    void shouldRecoverFromACheckpointAfterAFailure() throws Exception {
        List<String> heap = heapOutput();
        Configuration conf = configuration("flowkv");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(10));
        List<String> flowKv = run(conf, true);

        assertThat(INJECTED_FAILURES.get())
                .as("failures injected after a completed checkpoint")
                .isEqualTo(1);
        assertThat(RESTORED_SUBTASKS.get())
                .as("subtasks restarted from a checkpoint, not from scratch")
                .isPositive();
        assertThat(flowKv)
                .as("output after restoring FlowKV state from the checkpoint")
                .containsExactlyElementsOf(heap);
    }

    @Test
    void shouldFailSubmissionOnBadOptionNamingTheKey() {
        Configuration conf = configuration("flowkv");
        conf.set(FlowKVOptions.MAX_SPACE_AMPLIFICATION, 0.5);
        String key = FlowKVOptions.MAX_SPACE_AMPLIFICATION.key();

        assertThatThrownBy(() -> run(conf, false))
                .satisfies(
                        e ->
                                assertThat(ExceptionUtils.findThrowableWithMessage(e, key))
                                        .as("an exception naming %s in %s", key, e)
                                        .hasValueSatisfying(
                                                cause ->
                                                        assertThat(cause.getMessage())
                                                                .contains("0.5")
                                                                .contains("(1, 100]")));
        assertThat(COMPLETED_CHECKPOINTS.get()).as("no checkpoint of a rejected job").isZero();
    }

    private Configuration configuration(String backend) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        return conf;
    }

    /** The job's output on hashmap, without failures; computed once. */
    private List<String> heapOutput() throws Exception {
        if (heapOutput == null) {
            heapOutput = run(configuration("hashmap"), false);
            assertThat(COMPLETED_CHECKPOINTS.get())
                    .as("checkpoints completed with hashmap")
                    .isPositive();
        }
        return heapOutput;
    }

    /**
     * Runs the job and returns its output, sorted (parallel subtasks interleave freely). With
     * {@code failOnce}, a source subtask fails once, after the first checkpoint has completed.
     */
    private static List<String> run(Configuration conf, boolean failOnce) throws Exception {
        COMPLETED_CHECKPOINTS.set(0);
        ELEMENTS_AFTER_A_CHECKPOINT.set(0);
        INJECTED_FAILURES.set(0);
        RESTORED_SUBTASKS.set(0);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
        env.setParallelism(2);

        DataStream<Tuple3<String, Long, Long>> left =
                env.fromSequence(0, ELEMENTS - 1)
                        .map(new Throttle(failOnce))
                        .map(new Left())
                        .assignTimestampsAndWatermarks(watermarks());
        DataStream<Tuple3<String, Long, Long>> right =
                env.fromSequence(0, ELEMENTS - 1)
                        .map(new Throttle(false))
                        .map(new Right())
                        .assignTimestampsAndWatermarks(watermarks());

        DataStream<String> windows =
                left.keyBy(new KeyOf())
                        .window(TumblingEventTimeWindows.of(WINDOW))
                        .process(new SortedContents("window"));
        DataStream<String> sessions =
                left.keyBy(new KeyOf())
                        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(25)))
                        .process(new SortedContents("session"));
        DataStream<String> sliding =
                right.keyBy(new KeyOf())
                        .window(SlidingEventTimeWindows.of(WINDOW.multipliedBy(2), WINDOW))
                        .aggregate(new CountAndSum(), new Labelled());
        DataStream<String> joined =
                left.join(right)
                        .where(new KeyOf())
                        .equalTo(new KeyOf())
                        .window(TumblingEventTimeWindows.of(WINDOW))
                        .apply(new Pair());

        List<String> output = new ArrayList<>();
        CloseableIterator<String> results =
                windows.union(sessions, sliding, joined).executeAndCollect();
        try {
            results.forEachRemaining(output::add);
        } finally {
            results.close();
        }
        Collections.sort(output);
        return output;
    }

    /** Out of order by less than the watermark bound, so no element is late in any run. */
    private static WatermarkStrategy<Tuple3<String, Long, Long>> watermarks() {
        return WatermarkStrategy.<Tuple3<String, Long, Long>>forBoundedOutOfOrderness(
                        Duration.ofMillis(50))
                .withTimestampAssigner((event, previous) -> event.f2);
    }

    /**
     * Slows its source down until the first checkpoint of the job completes, so that one completes
     * while the windows hold state, however fast the bounded sources would otherwise be (each
     * source subtask then needs over 5 s for its 1,000 elements, ample time for a checkpoint);
     * counts the completed checkpoints. With {@code failOnce}, it then fails the job once.
     */
    private static final class Throttle extends RichMapFunction<Long, Long>
            implements CheckpointListener, CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final boolean failOnce;

        Throttle(boolean failOnce) {
            this.failOnce = failOnce;
        }

        @Override
        public Long map(Long value) throws InterruptedException {
            if (COMPLETED_CHECKPOINTS.get() == 0) {
                Thread.sleep(5);
                return value;
            }
            ELEMENTS_AFTER_A_CHECKPOINT.incrementAndGet();
            if (failOnce && INJECTED_FAILURES.compareAndSet(0, 1)) {
                throw new IllegalStateException("Injected failure at element " + value);
            }
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            COMPLETED_CHECKPOINTS.incrementAndGet();
        }

        @Override
        public void initializeState(FunctionInitializationContext context) {
            if (context.isRestored()) {
                RESTORED_SUBTASKS.incrementAndGet();
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) {}
    }

    /** Ten keys, two ms apart, up to 39 ms out of order. */
    private static final class Left implements MapFunction<Long, Tuple3<String, Long, Long>> {
        private static final long serialVersionUID = 1L;

        @Override
        public Tuple3<String, Long, Long> map(Long v) {
            return Tuple3.of("k" + v % 10, v, v * 2 + (v * 7919) % 40);
        }
    }

    /** The same ten keys in another order, three ms apart, up to 39 ms out of order. */
    private static final class Right implements MapFunction<Long, Tuple3<String, Long, Long>> {
        private static final long serialVersionUID = 1L;

        @Override
        public Tuple3<String, Long, Long> map(Long v) {
            return Tuple3.of("k" + (v * 3) % 10, v, v * 3 + (v * 104729) % 40);
        }
    }

    private static final class KeyOf implements KeySelector<Tuple3<String, Long, Long>, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getKey(Tuple3<String, Long, Long> value) {
            return value.f0;
        }
    }

    private static final class SortedContents
            extends ProcessWindowFunction<Tuple3<String, Long, Long>, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;
        private final String label;

        SortedContents(String label) {
            this.label = label;
        }

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple3<String, Long, Long>> elements,
                Collector<String> out) {
            out.collect(
                    label
                            + " "
                            + key
                            + " "
                            + context.window()
                            + " "
                            + StreamSupport.stream(elements.spliterator(), false)
                                    .map(e -> e.f1)
                                    .sorted()
                                    .map(String::valueOf)
                                    .collect(Collectors.joining(",", "[", "]")));
        }
    }

    /** Count and sum of the values: (count, sum). */
    private static final class CountAndSum
            implements AggregateFunction<
                    Tuple3<String, Long, Long>, Tuple2<Long, Long>, Tuple2<Long, Long>> {
        private static final long serialVersionUID = 1L;

        @Override
        public Tuple2<Long, Long> createAccumulator() {
            return Tuple2.of(0L, 0L);
        }

        @Override
        public Tuple2<Long, Long> add(Tuple3<String, Long, Long> value, Tuple2<Long, Long> acc) {
            return Tuple2.of(acc.f0 + 1, acc.f1 + value.f1);
        }

        @Override
        public Tuple2<Long, Long> getResult(Tuple2<Long, Long> acc) {
            return acc;
        }

        @Override
        public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
            return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
        }
    }

    private static final class Labelled
            extends ProcessWindowFunction<Tuple2<Long, Long>, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple2<Long, Long>> elements,
                Collector<String> out) {
            for (Tuple2<Long, Long> countAndSum : elements) {
                out.collect("sliding " + key + " " + context.window() + " " + countAndSum);
            }
        }
    }

    private static final class Pair
            implements JoinFunction<
                    Tuple3<String, Long, Long>, Tuple3<String, Long, Long>, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String join(Tuple3<String, Long, Long> a, Tuple3<String, Long, Long> b) {
            return "join " + a.f0 + " " + a.f1 + "@" + a.f2 + " " + b.f1 + "@" + b.f2;
        }
    }
}
