package io.flowkv.flink;

import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.WindowFunction;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.ProcessingTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.evictors.CountEvictor;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.ProcessingTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink's window operators, built with {@link WindowOperatorBuilder} and driven through the keyed
 * operator test harness, must behave on FlowKV exactly as on the HashMap backend: same firings,
 * same window contents in the same order, same pending timers — straight through, across a snapshot
 * and restore, across rescaling 1 -> 2 -> 1, across canonical savepoints between the two backends,
 * and with write buffers small enough that the stores spill to disk. Each scenario also checks
 * which FlowKV store its window contents got.
 *
 * <p>The input is random (ten keys, bounded out-of-order timestamps, some late elements, periodic
 * watermarks, a processing-time clock) from a seed printed in every assertion; rerun one with
 * {@code -Dflowkv.seed=N}.
 */
class WindowOperatorContractTest {
    private static final long SEED = Long.getLong("flowkv.seed", new Random().nextLong());
    private static final int ELEMENTS = 400;

    /**
     * Dense input (a ms every thirty elements on average) of this size keeps more window contents
     * alive than the smallest write buffer holds, so that the stores flush to disk.
     */
    private static final int SPILLING_ELEMENTS = 8_000;

    private static final int KEYS = 10;
    private static final int MAX_PARALLELISM = 128;

    /** Watermarks trail the clock by this much: the bound of ordinary out-of-orderness. */
    private static final long WATERMARK_LAG = 20;

    /** Far enough past the input that every time window fires and every timer is gone. */
    private static final long DRAIN = 10_000;

    private static final TypeInformation<Tuple2<String, Long>> IN =
            Types.TUPLE(Types.STRING, Types.LONG);
    private static final KeySelector<Tuple2<String, Long>, String> KEY = new KeyOf();

    /** Added to every element's value: the high half of a sum of values counts the elements. */
    private static final long ONE = 1L << 32;

    @TempDir Path checkpoints;
    @TempDir Path spillDir;

    // ------------------------------------------------------------------ scenarios

    /**
     * One window operator configuration: what it is built from, which store its window contents
     * must get, and what the input must have made it do for the comparison to mean anything.
     */
    record Scenario(
            String name,
            Supplier<OneInputStreamOperator<Tuple2<String, Long>, String>> operator,
            StorePattern contents,
            boolean merging,
            String exercises,
            Predicate<List<String>> exercised) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Scenario> scenarios() {
        Duration size = Duration.ofMillis(50);
        Duration slidingSize = Duration.ofMillis(60);
        Duration slide = Duration.ofMillis(20);
        Duration gap = Duration.ofMillis(40);
        return Stream.of(
                new Scenario(
                        "tumbling event time + process",
                        () ->
                                builder(
                                                TumblingEventTimeWindows.of(size),
                                                EventTimeTrigger.create())
                                        .process(new ListProcess<>()),
                        StorePattern.AAR,
                        false,
                        "a window with several elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "sliding event time + apply",
                        () ->
                                builder(
                                                SlidingEventTimeWindows.of(slidingSize, slide),
                                                EventTimeTrigger.create())
                                        .apply(new ListApply()),
                        StorePattern.AAR,
                        false,
                        "a window with several elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "event-time sessions + process",
                        () ->
                                builder(
                                                EventTimeSessionWindows.withGap(gap),
                                                EventTimeTrigger.create())
                                        .process(new ListProcess<>()),
                        StorePattern.AUR,
                        true,
                        "a session merged from several elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "processing-time sessions + process",
                        () ->
                                builder(
                                                ProcessingTimeSessionWindows.withGap(gap),
                                                ProcessingTimeTrigger.create())
                                        .process(new ListProcess<>()),
                        StorePattern.AUR,
                        true,
                        "a session merged from several elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "global window + purging count trigger + process",
                        () ->
                                builder(
                                                GlobalWindows.create(),
                                                PurgingTrigger.of(CountTrigger.of(5)))
                                        .process(new ListProcess<>()),
                        StorePattern.AUR,
                        false,
                        "a key firing several times",
                        WindowOperatorContractTest::someWindowFiresTwice),
                new Scenario(
                        "tumbling event time + allowed lateness + process",
                        () -> {
                            WindowOperatorBuilder<Tuple2<String, Long>, String, TimeWindow> b =
                                    builder(
                                            TumblingEventTimeWindows.of(size),
                                            EventTimeTrigger.create());
                            b.allowedLateness(Duration.ofMillis(100));
                            return b.process(new ListProcess<>());
                        },
                        StorePattern.AAR,
                        false,
                        "a late firing with more elements than the first",
                        WindowOperatorContractTest::someWindowFiresAgainWithMore),
                new Scenario(
                        "event-time sessions + allowed lateness + process",
                        () -> {
                            WindowOperatorBuilder<Tuple2<String, Long>, String, TimeWindow> b =
                                    builder(
                                            EventTimeSessionWindows.withGap(gap),
                                            EventTimeTrigger.create());
                            b.allowedLateness(Duration.ofMillis(100));
                            return b.process(new ListProcess<>());
                        },
                        StorePattern.AUR,
                        true,
                        "a late firing showing elements of an earlier firing again",
                        WindowOperatorContractTest::someElementFiresAgain),
                new Scenario(
                        "sliding processing time + process",
                        () ->
                                builder(
                                                SlidingProcessingTimeWindows.of(slidingSize, slide),
                                                ProcessingTimeTrigger.create())
                                        .process(new ListProcess<>()),
                        StorePattern.AAR,
                        false,
                        "a window with several elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "sliding count window (global window + count trigger + count evictor)",
                        () -> {
                            WindowOperatorBuilder<Tuple2<String, Long>, String, GlobalWindow> b =
                                    builder(GlobalWindows.create(), CountTrigger.of(2));
                            b.evictor(CountEvictor.of(5));
                            return b.process(new ListProcess<>());
                        },
                        StorePattern.AUR,
                        false,
                        "a key firing several times",
                        WindowOperatorContractTest::someWindowFiresTwice),
                new Scenario(
                        "tumbling event time + allowed lateness + per-window and global state",
                        () -> {
                            WindowOperatorBuilder<Tuple2<String, Long>, String, TimeWindow> b =
                                    builder(
                                            TumblingEventTimeWindows.of(size),
                                            EventTimeTrigger.create());
                            b.allowedLateness(Duration.ofMillis(100));
                            return b.process(new CountingFirings());
                        },
                        StorePattern.AAR,
                        false,
                        "a late firing with more elements than the first",
                        WindowOperatorContractTest::someWindowFiresAgainWithMore),
                new Scenario(
                        "tumbling event time + count trigger + count evictor + process",
                        () -> {
                            WindowOperatorBuilder<Tuple2<String, Long>, String, TimeWindow> b =
                                    builder(
                                            TumblingEventTimeWindows.of(Duration.ofMillis(300)),
                                            CountTrigger.of(3));
                            b.evictor(CountEvictor.of(2));
                            return b.process(new ListProcess<>());
                        },
                        StorePattern.AAR,
                        false,
                        "a window firing again after eviction",
                        WindowOperatorContractTest::someWindowFiresTwice),
                new Scenario(
                        "sliding event time + aggregate",
                        () ->
                                builder(
                                                SlidingEventTimeWindows.of(slidingSize, slide),
                                                EventTimeTrigger.create())
                                        .aggregate(
                                                new ConcatAggregate(),
                                                new AggregateProcess(),
                                                Types.STRING),
                        StorePattern.RMW,
                        false,
                        "a window aggregating several elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "event-time sessions + aggregate",
                        () ->
                                builder(
                                                EventTimeSessionWindows.withGap(gap),
                                                EventTimeTrigger.create())
                                        .aggregate(
                                                new SumAggregate(),
                                                new CountingSumProcess(),
                                                Types.LONG),
                        StorePattern.RMW,
                        true,
                        "a session merged from several aggregated elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements),
                new Scenario(
                        "event-time sessions + reduce",
                        () ->
                                builder(
                                                EventTimeSessionWindows.withGap(gap),
                                                EventTimeTrigger.create())
                                        .reduce(new SumReduce(), new CountingReduceProcess()),
                        StorePattern.RMW,
                        true,
                        "a session merged from several reduced elements",
                        WindowOperatorContractTest::someWindowHasSeveralElements));
    }

    private static <W extends Window>
            WindowOperatorBuilder<Tuple2<String, Long>, String, W> builder(
                    WindowAssigner<? super Tuple2<String, Long>, W> assigner,
                    Trigger<? super Tuple2<String, Long>, ? super W> trigger) {
        return new WindowOperatorBuilder<>(
                assigner, trigger, new ExecutionConfig(), IN, KEY, Types.STRING);
    }

    // ------------------------------------------------------------------ tests

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void shouldProduceTheSameFiringsAsHashMapStraightThrough(Scenario scenario) throws Exception {
        List<Step> input = input(SEED, ELEMENTS, false);
        Result heap = straight(scenario, new HashMapStateBackend(), input);
        Result flowKv = straight(scenario, new FlowKVStateBackend(), input);

        assertThat(scenario.exercised().test(heap.output()))
                .as("%s: the input exercises %s; %s", scenario, scenario.exercises(), seed())
                .isTrue();
        assertThat(inFiringOrder(flowKv.output()))
                .as("%s: output in firing order; %s", scenario, seed())
                .containsExactlyElementsOf(inFiringOrder(heap.output()));
        assertThat(flowKv.eventTimers())
                .as("%s: pending event-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.eventTimers());
        assertThat(flowKv.processingTimers())
                .as("%s: pending processing-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.processingTimers());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void shouldProduceTheSameFiringsAfterSnapshotAndRestore(Scenario scenario) throws Exception {
        List<Step> input = input(SEED, ELEMENTS, false);
        Result heap = straight(scenario, new HashMapStateBackend(), input);
        assertRestoreMatches(heap, scenario, FlowKVStateBackend::new, input, 97);
    }

    /**
     * Snapshots at a random step and restores a fresh operator from it; the snapshotted operator
     * also carries on to the end, snapshotting every {@code snapshotEvery} steps. Both must give
     * {@code heap}'s output: snapshots must neither lose state nor disturb the live backend.
     */
    private void assertRestoreMatches(
            Result heap,
            Scenario scenario,
            Supplier<StateBackend> flowKv,
            List<Step> input,
            int snapshotEvery)
            throws Exception {
        int cut = new Random(SEED ^ 0x5EED).nextInt(input.size() / 2) + input.size() / 4;

        Feeder first = new Feeder(scenario, flowKv, 1);
        first.open(null);
        first.feed(input.subList(0, cut));
        OperatorSubtaskState snapshot = first.snapshot(1);
        Position atCut = first.position();
        List<String> beforeCut = first.currentOutput();
        assertThat(snapshot.getManagedKeyedState())
                .as("%s: keyed state in the snapshot at step %d; %s", scenario, cut, seed())
                .isNotEmpty();
        long checkpointId = 1;
        for (int from = cut; from < input.size(); from += snapshotEvery) {
            first.feed(input.subList(from, Math.min(input.size(), from + snapshotEvery)));
            first.snapshot(++checkpointId);
        }
        Result carriedOn = first.finish();
        assertThat(inFiringOrder(carriedOn.output()))
                .as(
                        "%s: output of the snapshotted operator carrying on, snapshots every %d"
                                + " steps from step %d; %s",
                        scenario, snapshotEvery, cut, seed())
                .containsExactlyElementsOf(inFiringOrder(heap.output()));

        Feeder second = new Feeder(scenario, flowKv, 1);
        second.restoreFrom(1, atCut, List.of(snapshot));
        second.feed(input.subList(cut, input.size()));
        Result restored = second.finish();

        List<String> output = new ArrayList<>(beforeCut);
        output.addAll(restored.output());
        assertThat(byKey(output))
                .as("%s: per-key output after restoring at step %d; %s", scenario, cut, seed())
                .isEqualTo(byKey(heap.output()));
        assertThat(restored.eventTimers())
                .as("%s: pending event-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.eventTimers());
        assertThat(restored.processingTimers())
                .as("%s: pending processing-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.processingTimers());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void shouldProduceTheSameFiringsAfterRescalingOneTwoOne(Scenario scenario) throws Exception {
        List<Step> input = input(SEED, ELEMENTS, false);
        Result heap = straight(scenario, new HashMapStateBackend(), input);
        assertRescalingMatches(heap, scenario, FlowKVStateBackend::new, input);
    }

    /**
     * Runs {@code input} rescaling 1 -> 2 -> 1 at random steps; the output must be {@code heap}'s.
     */
    private void assertRescalingMatches(
            Result heap, Scenario scenario, Supplier<StateBackend> flowKv, List<Step> input)
            throws Exception {
        Random random = new Random(SEED ^ 0xCAFE);
        int up = random.nextInt(input.size() / 3) + input.size() / 6;
        int down = up + random.nextInt(input.size() / 3) + input.size() / 6;

        Feeder one = new Feeder(scenario, flowKv, 1);
        one.open(null);
        one.feed(input.subList(0, up));
        OperatorSubtaskState single = one.snapshot(1);
        one.close();

        Feeder two = new Feeder(scenario, flowKv, 2);
        two.restoreFrom(one, List.of(single));
        two.feed(input.subList(up, down));
        List<OperatorSubtaskState> pair = two.snapshotAll(2);
        two.close();

        Feeder back = new Feeder(scenario, flowKv, 1);
        back.restoreFrom(two, pair);
        back.feed(input.subList(down, input.size()));
        Result rescaled = back.finish();

        List<String> output = new ArrayList<>(one.output());
        output.addAll(two.output());
        output.addAll(rescaled.output());
        assertThat(output)
                .as(
                        "%s: output after rescaling 1 -> 2 at step %d and 2 -> 1 at step %d; %s",
                        scenario, up, down, seed())
                .containsExactlyInAnyOrderElementsOf(heap.output());
        assertThat(rescaled.eventTimers())
                .as("%s: pending event-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.eventTimers());
        assertThat(rescaled.processingTimers())
                .as("%s: pending processing-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.processingTimers());
    }

    /**
     * The scenarios whose state outgrows a small write buffer on dense input, one or two per way of
     * using a store (the others differ in operator logic only; this keeps the class fast).
     */
    static Stream<Scenario> spillingScenarios() {
        List<String> names =
                List.of(
                        "tumbling event time + process",
                        "tumbling event time + count trigger + count evictor + process",
                        "event-time sessions + process",
                        "event-time sessions + allowed lateness + process",
                        "sliding count window (global window + count trigger + count evictor)",
                        "sliding event time + aggregate");
        return scenarios().filter(scenario -> names.contains(scenario.name()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("spillingScenarios")
    void shouldProduceTheSameFiringsWhenStoresSpillToDisk(Scenario scenario) throws Exception {
        List<Step> input = input(SEED, SPILLING_ELEMENTS, true);
        Result heap = straight(scenario, new HashMapStateBackend(), input);
        Configuration conf = new Configuration();
        conf.set(FlowKVOptions.WRITE_BUFFER_SIZE, MemorySize.parse("64kb"));
        conf.set(FlowKVOptions.MAX_SPACE_AMPLIFICATION, 1.1);
        conf.set(FlowKVOptions.READ_BATCH_RATIO, 0.5);
        conf.set(FlowKVOptions.PARTITIONS, 3);
        // A few cached values, so that aggregates move between the object cache and the store.
        conf.set(FlowKVOptions.OBJECT_CACHE_SIZE, MemorySize.parse("2kb"));
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(spillDir.toString()));
        Supplier<StateBackend> spilling =
                () -> new FlowKVStateBackend().configure(conf, getClass().getClassLoader());

        Feeder straight = new Feeder(scenario, spilling, 1);
        straight.open(null);
        long mostOnDisk = 0;
        for (int from = 0; from < input.size(); from += 100) {
            straight.feed(input.subList(from, Math.min(input.size(), from + 100)));
            mostOnDisk = Math.max(mostOnDisk, bytesOnDisk());
        }
        assertThat(mostOnDisk)
                .as("%s: most bytes FlowKV had on disk in %s; %s", scenario, spillDir, seed())
                .isPositive();
        Result flowKv = straight.finish();
        assertThat(inFiringOrder(flowKv.output()))
                .as("%s: output in firing order; %s", scenario, seed())
                .containsExactlyElementsOf(inFiringOrder(heap.output()));
        assertThat(flowKv.eventTimers())
                .as("%s: pending event-time timers at the end; %s", scenario, seed())
                .isEqualTo(heap.eventTimers());

        assertRestoreMatches(heap, scenario, spilling, input, 1000);
    }

    /**
     * FlowKV writes and reads Flink's canonical savepoint layout: a job must continue on FlowKV
     * from a HashMap savepoint, and on HashMap from a FlowKV savepoint.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void shouldContinueFromACanonicalSavepointOfTheOtherBackend(Scenario scenario)
            throws Exception {
        List<Step> input = input(SEED, ELEMENTS, false);
        Result heap = straight(scenario, new HashMapStateBackend(), input);
        int cut = new Random(SEED ^ 0x5AFE).nextInt(input.size() / 2) + input.size() / 4;
        List<Supplier<StateBackend>> heapThenFlowKv =
                List.of(HashMapStateBackend::new, FlowKVStateBackend::new);
        List<Supplier<StateBackend>> flowKvThenHeap =
                List.of(FlowKVStateBackend::new, HashMapStateBackend::new);
        for (List<Supplier<StateBackend>> backends : List.of(heapThenFlowKv, flowKvThenHeap)) {
            Feeder first = new Feeder(scenario, backends.get(0), 1);
            first.open(null);
            first.feed(input.subList(0, cut));
            OperatorSubtaskState savepoint = first.savepoint(1);
            first.close();
            Feeder second = new Feeder(scenario, backends.get(1), 1);
            second.restoreFrom(first, List.of(savepoint));
            second.feed(input.subList(cut, input.size()));
            Result restored = second.finish();

            List<String> output = new ArrayList<>(first.output());
            output.addAll(restored.output());
            String from = backends == heapThenFlowKv ? "HashMap" : "FlowKV";
            assertThat(byKey(output))
                    .as(
                            "%s: per-key output after a %s savepoint at step %d; %s",
                            scenario, from, cut, seed())
                    .isEqualTo(byKey(heap.output()));
            assertThat(restored.eventTimers())
                    .as(
                            "%s: pending event-time timers after a %s savepoint; %s",
                            scenario, from, seed())
                    .isEqualTo(heap.eventTimers());
        }
    }

    private long bytesOnDisk() throws IOException {
        try (Stream<Path> files = Files.walk(spillDir)) {
            return files.filter(Files::isRegularFile)
                    .mapToLong(
                            file -> {
                                try {
                                    return Files.size(file);
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            })
                    .sum();
        }
    }

    private static String seed() {
        return "seed " + SEED + " (rerun with -Dflowkv.seed=" + SEED + ")";
    }

    // ------------------------------------------------------------------ input

    /** One step of the input: an element, or a watermark; each carries the processing time. */
    sealed interface Step permits Element, Mark {
        long clock();
    }

    record Element(String key, long value, long timestamp, long clock) implements Step {}

    record Mark(long watermark, long clock) implements Step {}

    /**
     * Elements of ten keys on a clock that advances 0-8 ms per element (dense: one ms every thirty
     * elements on average): most are up to {@link #WATERMARK_LAG} ms out of order, about one in
     * twelve 60-180 ms late (some within the allowed lateness of the lateness scenario, some
     * beyond). A watermark {@code clock - lag - 1} follows every fifteenth element. Values are
     * {@link #ONE} plus the element's index, so window contents show their order and a sum of
     * values counts its elements.
     */
    static List<Step> input(long seed, int elements, boolean dense) {
        Random random = new Random(seed);
        List<Step> steps = new ArrayList<>();
        long clock = 1_000;
        for (int i = 0; i < elements; i++) {
            clock += dense ? (random.nextInt(30) == 0 ? 1 : 0) : random.nextInt(9);
            String key = "k" + random.nextInt(KEYS);
            long timestamp =
                    random.nextInt(12) == 0
                            ? clock - 60 - random.nextInt(120)
                            : clock - random.nextInt((int) WATERMARK_LAG);
            steps.add(new Element(key, ONE | i, timestamp, clock));
            if (i % 15 == 14) {
                steps.add(new Mark(clock - WATERMARK_LAG - 1, clock));
            }
        }
        return steps;
    }

    // ------------------------------------------------------------------ driving harnesses

    record Result(List<String> output, int eventTimers, int processingTimers) {}

    /** Where a feeder's input stands: its processing time and last watermark. */
    record Position(long clock, long watermark) {}

    private Result straight(Scenario scenario, StateBackend backend, List<Step> input)
            throws Exception {
        Feeder feeder = new Feeder(scenario, () -> backend, 1);
        feeder.open(null);
        feeder.feed(input);
        return feeder.finish();
    }

    /**
     * The subtasks of one operator at one parallelism, fed like a keyed stream: elements to the
     * subtask owning their key group, watermarks and processing time to all.
     */
    private final class Feeder {
        private final Scenario scenario;
        private final Supplier<StateBackend> backends;
        private final int parallelism;
        private final List<
                        KeyedOneInputStreamOperatorTestHarness<
                                String, Tuple2<String, Long>, String>>
                subtasks = new ArrayList<>();
        private final List<String> output = new ArrayList<>();
        private long watermark = Long.MIN_VALUE;
        private long clock = Long.MIN_VALUE;

        Feeder(Scenario scenario, Supplier<StateBackend> backends, int parallelism) {
            this.scenario = scenario;
            this.backends = backends;
            this.parallelism = parallelism;
        }

        void open(OperatorSubtaskState[] states) throws Exception {
            for (int i = 0; i < parallelism; i++) {
                KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, String> h =
                        new KeyedOneInputStreamOperatorTestHarness<>(
                                scenario.operator().get(),
                                KEY,
                                Types.STRING,
                                MAX_PARALLELISM,
                                parallelism,
                                i);
                h.setStateBackend(backends.get());
                h.setCheckpointStorage(new FileSystemCheckpointStorage(checkpoints.toUri()));
                subtasks.add(h);
                if (states != null) {
                    h.initializeState(states[i]);
                }
                h.open();
            }
        }

        /**
         * Opens on the state of {@code previous}'s subtasks, repartitioned to this parallelism, and
         * replays what a real job would see again after a restore: the processing time, and the
         * last watermark (watermarks are not part of a snapshot; without it, elements that were
         * late before the restore would be taken).
         */
        void restoreFrom(Feeder previous, List<OperatorSubtaskState> snapshots) throws Exception {
            restoreFrom(previous.parallelism, previous.position(), snapshots);
        }

        void restoreFrom(
                int previousParallelism, Position position, List<OperatorSubtaskState> snapshots)
                throws Exception {
            OperatorSubtaskState state =
                    snapshots.size() == 1
                            ? snapshots.get(0)
                            : AbstractStreamOperatorTestHarness.repackageState(
                                    snapshots.toArray(new OperatorSubtaskState[0]));
            OperatorSubtaskState[] states = new OperatorSubtaskState[parallelism];
            for (int i = 0; i < parallelism; i++) {
                states[i] =
                        AbstractStreamOperatorTestHarness.repartitionOperatorState(
                                state, MAX_PARALLELISM, previousParallelism, parallelism, i);
            }
            open(states);
            assertStores(true);
            if (position.clock() != Long.MIN_VALUE) {
                advanceClock(position.clock());
            }
            if (position.watermark() != Long.MIN_VALUE) {
                watermark(position.watermark());
            }
        }

        Position position() {
            return new Position(clock, watermark);
        }

        /** The output so far, without closing. */
        List<String> currentOutput() {
            List<String> lines = new ArrayList<>();
            for (var h : subtasks) {
                for (StreamRecord<? extends String> r : h.extractOutputStreamRecords()) {
                    lines.add(r.getValue() + (r.hasTimestamp() ? " @" + r.getTimestamp() : ""));
                }
            }
            return lines;
        }

        void feed(List<Step> steps) throws Exception {
            for (Step step : steps) {
                advanceClock(step.clock());
                if (step instanceof Element e) {
                    int subtask =
                            KeyGroupRangeAssignment.assignKeyToParallelOperator(
                                    e.key(), MAX_PARALLELISM, parallelism);
                    subtasks.get(subtask)
                            .processElement(
                                    new StreamRecord<>(
                                            Tuple2.of(e.key(), e.value()), e.timestamp()));
                } else if (step instanceof Mark m) {
                    watermark(m.watermark());
                }
            }
        }

        private void advanceClock(long time) throws Exception {
            clock = time;
            for (var h : subtasks) {
                h.setProcessingTime(time);
            }
        }

        private void watermark(long time) throws Exception {
            watermark = time;
            for (var h : subtasks) {
                h.processWatermark(time);
            }
        }

        OperatorSubtaskState snapshot(long checkpointId) throws Exception {
            return snapshotAll(checkpointId).get(0);
        }

        OperatorSubtaskState savepoint(long checkpointId) throws Exception {
            return subtasks.get(0)
                    .snapshotWithLocalState(
                            checkpointId,
                            checkpointId * 1000,
                            SavepointType.savepoint(SavepointFormatType.CANONICAL))
                    .getJobManagerOwnedState();
        }

        List<OperatorSubtaskState> snapshotAll(long checkpointId) throws Exception {
            List<OperatorSubtaskState> states = new ArrayList<>();
            for (var h : subtasks) {
                states.add(h.snapshot(checkpointId, checkpointId * 1000));
            }
            for (var h : subtasks) {
                h.notifyOfCompletedCheckpoint(checkpointId);
            }
            return states;
        }

        /** Counts the pending timers, drains every time window, and closes. */
        Result finish() throws Exception {
            int eventTimers = 0;
            int processingTimers = 0;
            for (var h : subtasks) {
                eventTimers += h.numEventTimeTimers();
                processingTimers += h.numProcessingTimeTimers();
            }
            advanceClock(clock + DRAIN);
            watermark(clock);
            close();
            return new Result(output, eventTimers, processingTimers);
        }

        /** Checks the stores of FlowKV subtasks, collects their output, and closes them. */
        void close() throws Exception {
            assertStores(false);
            output.addAll(currentOutput());
            for (var h : subtasks) {
                h.close();
            }
            subtasks.clear();
        }

        List<String> output() {
            return output;
        }

        /**
         * Checks the stores FlowKV subtasks chose. Right after a restore, a state that got no
         * entries back is not bound yet; any state that is must already have its final store.
         */
        private void assertStores(boolean allowUnbound) {
            for (var h : subtasks) {
                if (h.getOperator().getKeyedStateBackend()
                        instanceof FlowKVKeyedStateBackend<?> b) {
                    StorePattern contents = b.storePattern("window-contents");
                    if (!(allowUnbound && contents == null)) {
                        assertThat(contents)
                                .as("%s: store of window-contents; %s", scenario, seed())
                                .isEqualTo(scenario.contents());
                    }
                    StorePattern mergingSet = b.storePattern("merging-window-set");
                    if (!(allowUnbound && mergingSet == null)) {
                        assertThat(mergingSet)
                                .as("%s: store of merging-window-set; %s", scenario, seed())
                                .isEqualTo(scenario.merging() ? StorePattern.GENERIC : null);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ what the input did

    /** Output lines by key, each key's lines in firing order (keys fire independently). */
    /**
     * The output with each run of consecutive lines of equal timestamp sorted: Flink fires timers
     * due at the same time in no particular order (FlowKV fires them key group by key group, the
     * heap backend in heap order), so only the order of firings at different times is part of the
     * contract.
     */
    private static List<String> inFiringOrder(List<String> output) {
        List<String> ordered = new ArrayList<>(output.size());
        int runStart = 0;
        for (int i = 1; i <= output.size(); i++) {
            if (i == output.size()
                    || !timestamp(output.get(i)).equals(timestamp(output.get(runStart)))) {
                List<String> run = new ArrayList<>(output.subList(runStart, i));
                Collections.sort(run);
                ordered.addAll(run);
                runStart = i;
            }
        }
        return ordered;
    }

    private static String timestamp(String line) {
        int at = line.lastIndexOf(" @");
        return at < 0 ? "" : line.substring(at);
    }

    private static Map<String, List<String>> byKey(List<String> output) {
        return output.stream()
                .collect(
                        Collectors.groupingBy(
                                line -> line.substring(0, line.indexOf(' ')),
                                LinkedHashMap::new,
                                Collectors.toList()));
    }

    /** Window contents of one output line: the part in brackets, comma separated. */
    private static int elements(String line) {
        String contents = line.substring(line.indexOf('[') + 1, line.indexOf(']'));
        return contents.isEmpty() ? 0 : contents.split(",").length;
    }

    private static String window(String line) {
        return line.substring(0, line.indexOf('['));
    }

    private static boolean someWindowHasSeveralElements(List<String> output) {
        return output.stream().anyMatch(line -> elements(line) >= 2);
    }

    private static boolean someWindowFiresTwice(List<String> output) {
        return output.stream()
                .collect(Collectors.groupingBy(WindowOperatorContractTest::window))
                .values()
                .stream()
                .anyMatch(firings -> firings.size() >= 2);
    }

    /** Some element shows in two firings: a window fired again (late) with what it had. */
    private static boolean someElementFiresAgain(List<String> output) {
        Set<String> shown = new HashSet<>();
        for (String line : output) {
            String key = line.substring(0, line.indexOf(' '));
            String contents = line.substring(line.indexOf('[') + 1, line.indexOf(']'));
            for (String element : contents.split(",")) {
                if (!element.isEmpty() && !shown.add(key + " " + element)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean someWindowFiresAgainWithMore(List<String> output) {
        Map<String, Integer> first = new HashMap<>();
        for (String line : output) {
            Integer before = first.putIfAbsent(window(line), elements(line));
            if (before != null && elements(line) > before) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ functions

    private static final class KeyOf implements KeySelector<Tuple2<String, Long>, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getKey(Tuple2<String, Long> value) {
            return value.f0;
        }
    }

    private static long index(long value) {
        return value & 0xFFFF_FFFFL;
    }

    private static String values(Iterable<Tuple2<String, Long>> elements) {
        return StreamSupport.stream(elements.spliterator(), false)
                .map(e -> String.valueOf(index(e.f1)))
                .collect(Collectors.joining(",", "[", "]"));
    }

    /** Emits the window's elements in iteration order. */
    private static final class ListProcess<W extends Window>
            extends ProcessWindowFunction<Tuple2<String, Long>, String, String, W> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple2<String, Long>> elements,
                Collector<String> out) {
            out.collect(key + " " + context.window() + " " + values(elements));
        }
    }

    /**
     * Also counts each window's firings in per-window state (cleared with the window) and the
     * elements each key has been shown in global state: value state in window and void namespaces.
     */
    private static final class CountingFirings
            extends ProcessWindowFunction<Tuple2<String, Long>, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        private static ValueStateDescriptor<Integer> firings() {
            return new ValueStateDescriptor<>("firings", Types.INT);
        }

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple2<String, Long>> elements,
                Collector<String> out)
                throws IOException {
            ValueState<Integer> firings = context.windowState().getState(firings());
            int firing = firings.value() == null ? 1 : firings.value() + 1;
            firings.update(firing);
            ValueState<Long> shown =
                    context.globalState().getState(new ValueStateDescriptor<>("shown", Types.LONG));
            long total =
                    (shown.value() == null ? 0 : shown.value())
                            + StreamSupport.stream(elements.spliterator(), false).count();
            shown.update(total);
            out.collect(
                    key
                            + " "
                            + context.window()
                            + " "
                            + values(elements)
                            + " firing "
                            + firing
                            + ", shown "
                            + total);
        }

        @Override
        public void clear(Context context) {
            context.windowState().getState(firings()).clear();
        }
    }

    private static final class ListApply
            implements WindowFunction<Tuple2<String, Long>, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void apply(
                String key,
                TimeWindow window,
                Iterable<Tuple2<String, Long>> input,
                Collector<String> out) {
            out.collect(key + " " + window + " " + values(input));
        }
    }

    /** Order-sensitive: the accumulator lists the values in the order they were added. */
    private static final class ConcatAggregate
            implements AggregateFunction<Tuple2<String, Long>, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String createAccumulator() {
            return "";
        }

        @Override
        public String add(Tuple2<String, Long> value, String accumulator) {
            long index = index(value.f1);
            return accumulator.isEmpty() ? String.valueOf(index) : accumulator + "," + index;
        }

        @Override
        public String getResult(String accumulator) {
            return accumulator;
        }

        @Override
        public String merge(String a, String b) {
            return a.isEmpty() ? b : b.isEmpty() ? a : a + "," + b;
        }
    }

    private static final class AggregateProcess
            extends ProcessWindowFunction<String, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key, Context context, Iterable<String> elements, Collector<String> out) {
            for (String accumulator : elements) {
                out.collect(key + " " + context.window() + " [" + accumulator + "]");
            }
        }
    }

    /**
     * Sums values, and so counts elements in the high half ({@link #ONE}), so that a merge that
     * loses or doubles an element shows. Commutative: merge order is not part of the contract.
     */
    private static final class SumReduce implements ReduceFunction<Tuple2<String, Long>> {
        private static final long serialVersionUID = 1L;

        @Override
        public Tuple2<String, Long> reduce(Tuple2<String, Long> a, Tuple2<String, Long> b) {
            return Tuple2.of(a.f0, a.f1 + b.f1);
        }
    }

    /** Emits the reduced value of a session, with as many placeholders as elements reduced. */
    private static final class CountingReduceProcess
            extends ProcessWindowFunction<Tuple2<String, Long>, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple2<String, Long>> elements,
                Collector<String> out) {
            for (Tuple2<String, Long> reduced : elements) {
                out.collect(countAndSum(key, context.window(), reduced.f1));
            }
        }
    }

    /** A sum of values as its element count (placeholders in brackets) and its sum of indexes. */
    private static String countAndSum(String key, TimeWindow window, long sumOfValues) {
        long count = sumOfValues / ONE;
        return key
                + " "
                + window
                + " ["
                + "x,".repeat((int) Math.max(0, count - 1))
                + (count > 0 ? "x" : "")
                + "] sum "
                + index(sumOfValues);
    }

    /** Sums values, like {@link SumReduce}, through a merging accumulator. */
    private static final class SumAggregate
            implements AggregateFunction<Tuple2<String, Long>, Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Tuple2<String, Long> value, Long accumulator) {
            return accumulator + value.f1;
        }

        @Override
        public Long getResult(Long accumulator) {
            return accumulator;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }

    private static final class CountingSumProcess
            extends ProcessWindowFunction<Long, String, String, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key, Context context, Iterable<Long> elements, Collector<String> out) {
            for (Long sum : elements) {
                out.collect(countAndSum(key, context.window(), sum));
            }
        }
    }
}
