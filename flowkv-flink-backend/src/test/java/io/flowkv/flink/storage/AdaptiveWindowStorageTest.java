package io.flowkv.flink.storage;

import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.FlowKVStateBackend;
import io.flowkv.flink.SavepointMigrationTest;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Window contents of a non-merging {@code TimeWindow} assigner start on AAR and move to AUR when
 * the appends show windows per key: the output equals HashMap's whether the move happens before,
 * after or across a snapshot and restore; aligned windows stay on AAR; the pending timers of the
 * moved windows become their AUR trigger times; threshold 0 never moves.
 */
class AdaptiveWindowStorageTest {
    private static final int MAX_PARALLELISM = 128;
    private static final int KEYS = 400;
    private static final int ELEMENTS = 8_000;
    private static final long SIZE = 1_000;
    private static final TypeInformation<Tuple2<String, Long>> IN =
            Types.TUPLE(Types.STRING, Types.LONG);
    private static final KeySelector<Tuple2<String, Long>, String> KEY = t -> t.f0;

    @TempDir Path localDir;

    @Test
    void shouldMoveWindowsThatFirePerKeyToAurAndMatchHashMap() throws Exception {
        List<String> expected = run(new HashMapStateBackend(), perKey(), 0, ELEMENTS);
        Harness h = new Harness(flowKv(100), perKey());
        try {
            // The sample decides at the 100th append (64 keys seen, 100 windows); no watermark yet.
            h.feed(0, 150);
            assertThat(h.backend().storePattern("window-contents")).isEqualTo(StorePattern.AUR);
            AdaptiveWindowStorage storage = h.contents();
            assertThat(storage.judging()).isFalse();
            assertThat(storage.directory().getFileName().toString()).endsWith("-aur");
            // k0's window got its timer before the move, and no element of k0 came after it: its
            // trigger time comes from the pending timers handed over on the move.
            TimeWindow window = PerKeyWindows.window("k0", timestamp(0));
            assertThat(
                            storage.current()
                                    .triggerTimes(keyGroup("k0"))
                                    .triggerTime(keyBytes("k0"), ns(window)))
                    .as("trigger time of k0's window %s", window)
                    .isEqualTo(window.maxTimestamp());
            assertThat(Files.list(storage.directory().getParent()).map(Path::toString))
                    .as("the AAR files are gone")
                    .allMatch(p -> p.endsWith("-aur") || !p.contains("window-contents"));
            h.feed(150, ELEMENTS);
            assertThat(h.finish()).containsExactlyInAnyOrderElementsOf(expected);
        } finally {
            h.close();
        }
    }

    @Test
    void shouldRestoreASnapshotTakenAfterTheMove() throws Exception {
        List<String> expected = run(new HashMapStateBackend(), perKey(), 0, ELEMENTS);
        assertRestoreMatches(expected, perKey(), ELEMENTS / 2, StorePattern.AUR);
    }

    @Test
    void shouldJudgeAgainAfterRestoringASnapshotTakenBeforeTheMove() throws Exception {
        // 40 elements: 40 keys, fewer than the sample needs to judge.
        List<String> expected = run(new HashMapStateBackend(), perKey(), 0, ELEMENTS);
        assertRestoreMatches(expected, perKey(), 40, StorePattern.AAR);
    }

    @Test
    void shouldKeepAlignedWindowsOnAar() throws Exception {
        List<String> expected = run(new HashMapStateBackend(), tumbling(), 0, ELEMENTS);
        Harness h = new Harness(flowKv(100), tumbling());
        try {
            h.feed(0, ELEMENTS / 2);
            assertThat(h.backend().storePattern("window-contents")).isEqualTo(StorePattern.AAR);
            assertThat(h.contents().judging()).isFalse();
            h.feed(ELEMENTS / 2, ELEMENTS);
            assertThat(h.finish()).containsExactlyInAnyOrderElementsOf(expected);
        } finally {
            h.close();
        }
    }

    @Test
    void shouldNeverMoveWithThresholdZero() throws Exception {
        List<String> expected = run(new HashMapStateBackend(), perKey(), 0, ELEMENTS);
        Harness h = new Harness(flowKv(0), perKey());
        try {
            h.feed(0, ELEMENTS);
            assertThat(h.backend().storePattern("window-contents")).isEqualTo(StorePattern.AAR);
            assertThat(h.backend().registeredStates().get("window-contents").storage())
                    .isInstanceOf(AarStateStorage.class);
            assertThat(h.finish()).containsExactlyInAnyOrderElementsOf(expected);
        } finally {
            h.close();
        }
    }

    private void assertRestoreMatches(
            List<String> expected, Operator operator, int cut, StorePattern atCut)
            throws Exception {
        Harness first = new Harness(flowKv(100), operator);
        OperatorSubtaskState snapshot;
        List<String> output = new ArrayList<>();
        try {
            first.feed(0, cut);
            assertThat(first.backend().storePattern("window-contents")).isEqualTo(atCut);
            snapshot = first.h.snapshot(1, 1);
            output.addAll(first.h.extractOutputValues());
        } finally {
            first.close();
        }
        Harness second = new Harness(flowKv(100), operator, snapshot);
        try {
            assertThat(second.backend().storePattern("window-contents")).isEqualTo(atCut);
            second.feed(cut, ELEMENTS);
            assertThat(second.backend().storePattern("window-contents"))
                    .isEqualTo(StorePattern.AUR);
            output.addAll(second.finish());
        } finally {
            second.close();
        }
        assertThat(output).containsExactlyInAnyOrderElementsOf(expected);
    }

    private StateBackend flowKv(int perKeyWindowsThreshold) {
        Configuration conf = new Configuration();
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        conf.set(FlowKVOptions.PER_KEY_WINDOWS_THRESHOLD, perKeyWindowsThreshold);
        return new FlowKVStateBackend().configure(conf, getClass().getClassLoader());
    }

    private static List<String> run(StateBackend backend, Operator operator, int from, int to)
            throws Exception {
        Harness h = new Harness(backend, operator);
        try {
            h.feed(from, to);
            return h.finish();
        } finally {
            h.close();
        }
    }

    /** Element {@code i}: key {@code k<i % KEYS>}, timestamps rising 1 ms per 4 elements. */
    private static long timestamp(int i) {
        return i / 4;
    }

    private static int keyGroup(String key) {
        return KeyGroupRangeAssignment.assignToKeyGroup(key, MAX_PARALLELISM);
    }

    private static byte[] keyBytes(String key) throws Exception {
        return codec().key(key, keyGroup(key));
    }

    private static byte[] ns(TimeWindow window) throws Exception {
        return codec().namespace(window);
    }

    private static KeyBytes<String, TimeWindow> codec() {
        return new KeyBytes<>(StringSerializer.INSTANCE, new TimeWindow.Serializer(), 1);
    }

    interface Operator {
        KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, String> harness()
                throws Exception;
    }

    private static Operator perKey() {
        return () -> harnessOf(new PerKeyWindows());
    }

    private static Operator tumbling() {
        return () -> harnessOf(TumblingEventTimeWindows.of(Duration.ofMillis(SIZE)));
    }

    private static KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, String>
            harnessOf(WindowAssigner<Object, TimeWindow> assigner) throws Exception {
        WindowOperatorBuilder<Tuple2<String, Long>, String, TimeWindow> builder =
                new WindowOperatorBuilder<>(
                        assigner,
                        EventTimeTrigger.create(),
                        new ExecutionConfig(),
                        IN,
                        KEY,
                        Types.STRING);
        return new KeyedOneInputStreamOperatorTestHarness<>(
                builder.process(new SavepointMigrationTest.ListWindow()),
                KEY,
                Types.STRING,
                MAX_PARALLELISM,
                1,
                0);
    }

    private static final class Harness {
        final KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, String> h;

        Harness(StateBackend backend, Operator operator) throws Exception {
            this(backend, operator, null);
        }

        Harness(StateBackend backend, Operator operator, OperatorSubtaskState restore)
                throws Exception {
            h = operator.harness();
            h.setStateBackend(backend);
            if (restore != null) {
                h.initializeState(restore);
            }
            h.open();
        }

        void feed(int from, int to) throws Exception {
            for (int i = from; i < to; i++) {
                long ts = timestamp(i);
                h.processElement(new StreamRecord<>(Tuple2.of("k" + i % KEYS, (long) i), ts));
                if (i % 200 == 199) {
                    h.processWatermark(new Watermark(ts - 10));
                }
            }
        }

        List<String> finish() throws Exception {
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            return new ArrayList<>(h.extractOutputValues());
        }

        FlowKVKeyedStateBackend<?> backend() {
            return (FlowKVKeyedStateBackend<?>) h.getOperator().getKeyedStateBackend();
        }

        AdaptiveWindowStorage contents() {
            return (AdaptiveWindowStorage)
                    backend().registeredStates().get("window-contents").storage();
        }

        void close() throws Exception {
            h.close();
        }
    }

    /** Tumbling windows of SIZE that every key shifts by an offset of its own. */
    static final class PerKeyWindows extends WindowAssigner<Object, TimeWindow> {
        private static final long serialVersionUID = 1L;

        static TimeWindow window(String key, long timestamp) {
            long offset = Math.floorMod(key.hashCode() * 0x9E3779B9L, SIZE);
            long start = timestamp - Math.floorMod(timestamp - offset, SIZE);
            return new TimeWindow(start, start + SIZE);
        }

        @Override
        @SuppressWarnings("unchecked")
        public Collection<TimeWindow> assignWindows(
                Object element, long timestamp, WindowAssignerContext context) {
            return List.of(window(((Tuple2<String, Long>) element).f0, timestamp));
        }

        @Override
        public Trigger<Object, TimeWindow> getDefaultTrigger() {
            return EventTimeTrigger.create();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
            return new TimeWindow.Serializer();
        }

        @Override
        public boolean isEventTime() {
            return true;
        }
    }
}
