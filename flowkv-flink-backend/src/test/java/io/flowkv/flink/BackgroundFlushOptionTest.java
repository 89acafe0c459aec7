package io.flowkv.flink;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code state.backend.flowkv.background-flush}: a tumbling window that buffers its elements (an
 * AAR store) and a session window that does (an AUR store), each with a small write buffer, fire
 * the same windows whether their full buffers are written in the background (the default, on {@code
 * flowkv-aar-flush-N} and {@code flowkv-aur-flush-N} threads) or on the task thread.
 */
class BackgroundFlushOptionTest {
    private static final int KEYS = 100;
    private static final long ELEMENTS = 200_000;
    private static final long WINDOW_MS = 50_000;
    private static final long SESSION_GAP_MS = 5_000;
    private static final long PAUSE_EVERY_MS = 30_000;
    private static final long PAUSE_MS = 10_000;

    @TempDir Path localDir;

    @Test
    void shouldFireTheSameWindowsWithFlushesInTheBackgroundOrNot() throws Exception {
        List<String> inBackground = run(configured(true), false);
        boolean flushThreadSeen = threadSeen("flowkv-aar-flush-");
        List<String> onTheTask = run(configured(false), false);

        assertThat(inBackground).containsExactlyElementsOf(expected());
        assertThat(onTheTask).containsExactlyElementsOf(expected());
        assertThat(flushThreadSeen).as("a flowkv-aar-flush thread after the default run").isTrue();
    }

    @Test
    void shouldFireTheSameSessionsWithFlushesInTheBackgroundOrNot() throws Exception {
        List<String> inBackground = run(configured(true), true);
        boolean flushThreadSeen = threadSeen("flowkv-aur-flush-");
        List<String> onTheTask = run(configured(false), true);

        assertThat(inBackground).containsExactlyElementsOf(expectedSessions());
        assertThat(onTheTask).containsExactlyElementsOf(expectedSessions());
        assertThat(flushThreadSeen).as("a flowkv-aur-flush thread after the default run").isTrue();
    }

    private static boolean threadSeen(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith(prefix));
    }

    @Test
    void shouldRejectAValueThatIsNotABoolean() {
        Configuration conf = configured(true);
        conf.setString(FlowKVOptions.BACKGROUND_FLUSH.key(), "sometimes");

        assertThatThrownBy(
                        () -> new FlowKVStateBackend().configure(conf, getClass().getClassLoader()))
                .hasMessageContaining(FlowKVOptions.BACKGROUND_FLUSH.key())
                .hasMessageContaining("sometimes");
    }

    private Configuration configured(boolean inBackground) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "flowkv");
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        conf.set(FlowKVOptions.WRITE_BUFFER_SIZE, MemorySize.parse("64kb"));
        conf.set(FlowKVOptions.BACKGROUND_FLUSH, inBackground);
        return conf;
    }

    /**
     * Sum and count per key and 50 s window of event time, or per key and session (gap {@link
     * #SESSION_GAP_MS}, a pause every {@link #PAUSE_EVERY_MS}); element i is at i ms.
     */
    private static List<String> run(Configuration conf, boolean sessions) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
        env.setParallelism(1);
        List<String> output = new ArrayList<>();
        CloseableIterator<String> results =
                env.fromSequence(0, ELEMENTS - 1)
                        .filter(i -> !sessions || !paused(i))
                        .assignTimestampsAndWatermarks(
                                WatermarkStrategy.<Long>forMonotonousTimestamps()
                                        .withTimestampAssigner((i, previous) -> i))
                        .map(i -> Tuple2.of(i % KEYS, i))
                        .returns(Types.TUPLE(Types.LONG, Types.LONG))
                        .keyBy(t -> t.f0)
                        .window(
                                sessions
                                        ? EventTimeSessionWindows.withGap(
                                                Duration.ofMillis(SESSION_GAP_MS))
                                        : TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
                        .process(new SumAndCount())
                        .executeAndCollect();
        try {
            results.forEachRemaining(output::add);
        } finally {
            results.close();
        }
        Collections.sort(output);
        return output;
    }

    private static List<String> expected() {
        List<String> expected = new ArrayList<>();
        for (long start = 0; start < ELEMENTS; start += WINDOW_MS) {
            for (long key = 0; key < KEYS; key++) {
                long sum = 0;
                long count = 0;
                for (long i = start + key; i < Math.min(start + WINDOW_MS, ELEMENTS); i += KEYS) {
                    sum += i;
                    count++;
                }
                expected.add(key + "@" + start + "=" + sum + "/" + count);
            }
        }
        Collections.sort(expected);
        return expected;
    }

    /** Whether element i falls in a pause: the last 10 s of every 30 s. */
    private static boolean paused(long i) {
        return i % PAUSE_EVERY_MS >= PAUSE_EVERY_MS - PAUSE_MS;
    }

    /** Per key, one session per run of 20 s between pauses, as a plain loop computes it. */
    private static List<String> expectedSessions() {
        List<String> expected = new ArrayList<>();
        for (long key = 0; key < KEYS; key++) {
            long start = -1;
            long last = -1;
            long sum = 0;
            long count = 0;
            for (long i = key; i < ELEMENTS; i += KEYS) {
                if (paused(i)) {
                    continue;
                }
                if (start >= 0 && i - last >= SESSION_GAP_MS) {
                    expected.add(key + "@" + start + "=" + sum + "/" + count);
                    start = -1;
                }
                if (start < 0) {
                    start = i;
                    sum = 0;
                    count = 0;
                }
                last = i;
                sum += i;
                count++;
            }
            expected.add(key + "@" + start + "=" + sum + "/" + count);
        }
        Collections.sort(expected);
        return expected;
    }

    private static final class SumAndCount
            extends ProcessWindowFunction<Tuple2<Long, Long>, String, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long key,
                Context context,
                Iterable<Tuple2<Long, Long>> elements,
                Collector<String> out) {
            long sum = 0;
            long count = 0;
            for (Tuple2<Long, Long> e : elements) {
                sum += e.f1;
                count++;
            }
            out.collect(key + "@" + context.window().getStart() + "=" + sum + "/" + count);
        }
    }
}
