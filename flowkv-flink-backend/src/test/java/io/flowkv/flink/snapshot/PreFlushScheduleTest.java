package io.flowkv.flink.snapshot;

import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.FlowKVStateBackend;
import io.flowkv.flink.storage.StateStorage;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Where {@link PreFlushSchedule} puts the pre-flushes of an interval, and that a backend between
 * checkpoints flushes each store instance on it.
 */
public class PreFlushScheduleTest {
    private static final long MS = 1_000_000L;

    @TempDir Path localDir;

    @Test
    void shouldFlushEveryInstanceBetweenCheckpoints() throws Exception {
        // One pre-flush per instance is due in the interval, instance 0 first; a task busy when
        // two fall due runs only the later one, so a slow machine may see instance 0 skip.
        List<Integer> scheduled = preFlushesBetweenCheckpoints(1);
        assertThat(scheduled).isNotEmpty().isSubsetOf(0, 1).doesNotHaveDuplicates().isSorted();
        assertThat(preFlushesBetweenCheckpoints(0)).isEmpty();
    }

    /**
     * Two checkpoints 300 ms apart teach the backend the interval; then records arrive for 400 ms.
     * Returns the instances of the value state pre-flushed in that time, in order, after checking
     * that each pre-flush emptied its instance's write buffer.
     */
    private List<Integer> preFlushesBetweenCheckpoints(int rounds) throws Exception {
        Configuration conf = new Configuration();
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        conf.set(FlowKVOptions.PRE_FLUSHES_PER_CHECKPOINT, rounds);
        KeyedOneInputStreamOperatorTestHarness<Long, Long, Long> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(new Remember()), k -> k, Types.LONG, 128, 1, 0);
        h.setStateBackend(new FlowKVStateBackend().configure(conf, getClass().getClassLoader()));
        try {
            h.open();
            long n = 0;
            h.processElement(n, n++);
            h.snapshot(1, 1);
            Thread.sleep(300);
            h.processElement(n, n++);
            h.snapshot(2, 2);
            FlowKVKeyedStateBackend<?> backend =
                    (FlowKVKeyedStateBackend<?>) h.getOperator().getKeyedStateBackend();
            StateStorage storage = backend.registeredStates().get("last").storage();
            assertThat(storage.parts()).isEqualTo(2);
            long end = System.nanoTime() + 400 * MS;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1_000; i++) {
                    h.processElement(n % 50_000, n++);
                }
            }
            return backend.preFlushedSinceCheckpoint();
        } finally {
            h.close();
        }
    }

    /** Keeps the last value seen per key (state "last"); other tests of the backend use it too. */
    public static final class Remember extends KeyedProcessFunction<Long, Long, Long> {
        private static final long serialVersionUID = 1L;
        private transient ValueState<Long> last;

        @Override
        public void open(OpenContext context) {
            last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Types.LONG));
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Long> out) throws Exception {
            last.update(value);
        }
    }

    @Test
    void shouldScheduleNothingBeforeTheIntervalIsKnown() {
        PreFlushSchedule s = new PreFlushSchedule(1);
        s.checkpointed(0, 4);
        for (long t = 0; t < 100_000 * MS; t += 10 * MS) {
            assertThat(s.due(t)).isEqualTo(PreFlushSchedule.NONE);
        }
    }

    @Test
    void shouldSpreadOnePreFlushPerInstanceEvenlyOverTheInterval() {
        PreFlushSchedule s = new PreFlushSchedule(1);
        s.checkpointed(0, 4);
        s.checkpointed(10_000 * MS, 4);
        assertThat(s.intervalNanos()).isEqualTo(10_000 * MS);
        // Pre-flush j of 4 falls at (j + 1/2) / 4 of 10 s: 1.25 s, 3.75 s, 6.25 s, 8.75 s.
        List<long[]> flushes = poll(s, 10_000 * MS, 20_000 * MS, MS);
        assertThat(flushes).hasSize(4);
        long[] expectedAt = {11_250, 13_750, 16_250, 18_750};
        for (int j = 0; j < 4; j++) {
            assertThat(flushes.get(j)[0]).as("instance of pre-flush %d", j).isEqualTo(j);
            assertThat(flushes.get(j)[1] / MS)
                    .as("time of pre-flush %d", j)
                    .isEqualTo(expectedAt[j]);
        }
    }

    @Test
    void shouldCycleThroughTheInstancesOncePerRound() {
        PreFlushSchedule s = new PreFlushSchedule(3);
        s.checkpointed(0, 2);
        s.checkpointed(6_000 * MS, 2);
        List<long[]> flushes = poll(s, 6_000 * MS, 12_000 * MS, MS);
        assertThat(flushes).extracting(f -> f[0]).containsExactly(0L, 1L, 0L, 1L, 0L, 1L);
        assertThat(flushes)
                .extracting(f -> f[1] / MS - 6_000)
                .containsExactly(500L, 1_500L, 2_500L, 3_500L, 4_500L, 5_500L);
    }

    @Test
    void shouldFlushOnlyTheLatestDueInstanceOfATaskThatWasBusy() {
        PreFlushSchedule s = new PreFlushSchedule(1);
        s.checkpointed(0, 4);
        s.checkpointed(10_000 * MS, 4);
        // First look after 7 s: pre-flushes 0, 1 and 2 are due; only 2 runs.
        assertThat(s.due(17_000 * MS)).isEqualTo(2);
        assertThat(s.due(17_001 * MS)).isEqualTo(PreFlushSchedule.NONE);
        assertThat(s.due(18_750 * MS)).isEqualTo(3);
        assertThat(s.due(30_000 * MS))
                .as("all done until the next checkpoint")
                .isEqualTo(PreFlushSchedule.NONE);
    }

    @Test
    void shouldFollowTheLatestIntervalAndInstanceCount() {
        PreFlushSchedule s = new PreFlushSchedule(1);
        s.checkpointed(0, 1);
        s.checkpointed(10_000 * MS, 1);
        s.checkpointed(12_000 * MS, 2);
        assertThat(s.intervalNanos()).isEqualTo(2_000 * MS);
        List<long[]> flushes = poll(s, 12_000 * MS, 14_000 * MS, MS);
        assertThat(flushes).extracting(f -> f[1] / MS).containsExactly(12_500L, 13_500L);
    }

    @Test
    void shouldScheduleNothingWithZeroRounds() {
        PreFlushSchedule s = new PreFlushSchedule(0);
        s.checkpointed(0, 4);
        s.checkpointed(1_000 * MS, 4);
        assertThat(poll(s, 1_000 * MS, 3_000 * MS, MS)).isEmpty();
        assertThatThrownBy(() -> new PreFlushSchedule(-1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** Every (instance, time) the schedule returns when asked every {@code step} in [from, to). */
    private static List<long[]> poll(PreFlushSchedule s, long from, long to, long step) {
        List<long[]> out = new ArrayList<>();
        for (long t = from; t < to; t += step) {
            int part = s.due(t);
            if (part != PreFlushSchedule.NONE) {
                out.add(new long[] {part, t});
            }
        }
        return out;
    }
}
