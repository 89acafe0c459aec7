package io.flowkv.flink.timers;

import io.flowkv.core.TestSeeds;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.queue.SortedQueueStore;
import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.TestBackends;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.concurrent.FutureUtils;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Timers stored by FlowKV ({@code state.backend.flowkv.timer-service: FLOWKV}): the same answers as
 * the heap queue under random use, and the same timers after full and incremental snapshots,
 * restored into stored or heap queues, at the same or at another key-group range.
 */
class FlowKVTimerQueueTest {
    /** Key groups of every backend and queue here, and of SpillingTimerQueueTest. */
    static final int KEY_GROUPS = 128;

    private static final String QUEUE = "_timer_state/event_user-timers";

    /** Heap limit of {@code timer-service: AUTO} here: 5,000 timers move, on restore too. */
    private static final long HEAP_LIMIT = 1_000;

    @TempDir Path temp;

    private final TestBackends backends = new TestBackends();

    @AfterEach
    void closeBackends() throws Exception {
        backends.close();
    }

    /**
     * Random adds (many equal timestamps, re-adds of fired and deleted timers), removes, peeks and
     * polls: the stored queue gives the heap queue's answers, and every timer comes out in
     * (timestamp, key group) order. A 1 KiB sorted buffer forces many runs and merges.
     */
    @Test
    void shouldAnswerLikeTheHeapQueue() throws Exception {
        long seed = TestSeeds.base();
        Random random = new Random(seed);
        KeyGroupRange range = new KeyGroupRange(16, 79);
        MemoryBudget budget = new MemoryBudget(16L << 20);
        KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Integer, VoidNamespace>> heap =
                new KeyGroupPartitionedQueueSet<>(
                        PriorityComparator.forPriorityComparableObjects(),
                        KeyExtractorFunction.forKeyedObjects(),
                        16,
                        range,
                        KEY_GROUPS);
        List<Integer> keys = new ArrayList<>();
        for (int k = 0; keys.size() < 300; k++) {
            if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, KEY_GROUPS))) {
                keys.add(k);
            }
        }
        try (FlowKVTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> stored =
                new FlowKVTimerQueue<>(
                        SortedQueueStore.open(temp.resolve("queue"), budget, 1024),
                        serializer(),
                        KeyExtractorFunction.forKeyedObjects(),
                        range,
                        KEY_GROUPS)) {
            long now = 0;
            for (int op = 0; op < 40_000; op++) {
                String where = "seed " + seed + " op " + op;
                int dice = random.nextInt(10);
                if (dice < 5) {
                    TimerHeapInternalTimer<Integer, VoidNamespace> timer =
                            timer(now + random.nextInt(50), keys.get(random.nextInt(keys.size())));
                    heap.add(timer(timer));
                    String before = describe(stored.peek());
                    if (!stored.add(timer(timer))) {
                        assertThat(describe(stored.peek()))
                                .as(where + " head after an add that said it is unchanged")
                                .isEqualTo(before);
                    }
                } else if (dice < 7) {
                    TimerHeapInternalTimer<Integer, VoidNamespace> timer =
                            timer(now + random.nextInt(50), keys.get(random.nextInt(keys.size())));
                    // remove() answers whether the head may have changed, not whether the
                    // timer was there: the sizes (checked below) tell that.
                    heap.remove(timer(timer));
                    String before = random.nextBoolean() ? describe(stored.peek()) : null;
                    if (!stored.remove(timer(timer)) && before != null) {
                        assertThat(describe(stored.peek()))
                                .as(where + " head after a remove that said it is unchanged")
                                .isEqualTo(before);
                    }
                } else {
                    TimerHeapInternalTimer<Integer, VoidNamespace> expected = heap.peek();
                    TimerHeapInternalTimer<Integer, VoidNamespace> actual = stored.peek();
                    assertThat(describe(actual))
                            .as(where + " peek")
                            .isEqualTo(sameOrder(expected, actual, heap));
                    if (dice == 9 && expected != null) {
                        // Among equal (timestamp, key group) the two may choose different timers;
                        // poll the stored queue's choice from both.
                        assertThat(heap.getSubsetForKeyGroup(group(actual)).contains(actual))
                                .as("%s polled %s in the heap queue", where, describe(actual))
                                .isTrue();
                        heap.remove(timer(actual));
                        assertThat(describe(stored.poll()))
                                .as(where + " poll")
                                .isEqualTo(describe(actual));
                        now = actual.getTimestamp();
                    }
                }
                if (op % 64 == 0) {
                    // size() may scan the whole store: checked now and then.
                    assertThat(stored.size()).as(where + " size").isEqualTo(heap.size());
                }
            }
            assertThat(stored.size()).as("seed %d: size", seed).isEqualTo(heap.size());
            Set<String> rest = new TreeSet<>();
            TimerHeapInternalTimer<Integer, VoidNamespace> t;
            while ((t = heap.poll()) != null) {
                rest.add(describe(t));
            }
            Set<String> storedRest = new TreeSet<>();
            stored.forEachSerialized(
                    (kg, bytes) -> storedRest.add(kg + ":" + java.util.Arrays.toString(bytes)));
            assertThat(storedRest.size()).isEqualTo(rest.size());
            TimerHeapInternalTimer<Integer, VoidNamespace> last = null;
            Set<String> polled = new TreeSet<>();
            while ((t = stored.poll()) != null) {
                if (last != null) {
                    assertThat(order(last, t))
                            .as("seed %d: %s then %s", seed, last, t)
                            .isLessThanOrEqualTo(0);
                }
                polled.add(describe(t));
                last = t;
            }
            assertThat(polled).as("seed %d: timers left", seed).isEqualTo(rest);
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    /**
     * Timers of a stored queue ({@code FLOWKV}, or {@code AUTO} past its heap limit) survive a full
     * snapshot (the canonical layout savepoints use) and an incremental checkpoint, restored into a
     * stored, a heap and an {@code AUTO} queue, whole and split in two key-group ranges.
     */
    @ParameterizedTest(name = "source={0}, incremental={1}, savepoint={2}")
    @CsvSource({
        "FLOWKV,false,false",
        "FLOWKV,true,false",
        "FLOWKV,false,true",
        "AUTO,false,false",
        "AUTO,true,false",
        "AUTO,false,true"
    })
    void shouldRestoreStoredTimers(
            FlowKVOptions.TimerService sourceService, boolean incremental, boolean savepoint)
            throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, KEY_GROUPS - 1);
        FlowKVKeyedStateBackend<Integer> source =
                backend(all, List.of(), incremental, sourceService);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue =
                source.create(QUEUE, serializer());
        Set<String> expected = new TreeSet<>();
        for (int k = 0; k < 5_000; k++) {
            TimerHeapInternalTimer<Integer, VoidNamespace> timer = timer(k % 97, k);
            queue.add(timer);
            expected.add(describe(timer));
        }
        for (int k = 0; k < 5_000; k += 7) {
            queue.remove(timer(k % 97, k));
            expected.remove(describe(timer(k % 97, k)));
        }
        Object registered =
                source.priorityQueues().getRegisteredPQStates().get(QUEUE).getPriorityQueue();
        assertThat(registered)
                .as("the queue of %s (heap limit %d)", sourceService, HEAP_LIMIT)
                .isInstanceOf(
                        sourceService == FlowKVOptions.TimerService.AUTO
                                ? SpillingTimerQueue.class
                                : FlowKVTimerQueue.class);
        assertThat(FlowKVTimerQueue.storedBehind(registered))
                .as("its timers in a store")
                .isNotNull();
        KeyedStateHandle handle =
                FutureUtils.runIfNotDoneAndGet(
                                source.snapshot(
                                        1,
                                        1,
                                        streamFactory(),
                                        savepoint
                                                ? CheckpointOptions.alignedNoTimeout(
                                                        SavepointType.savepoint(
                                                                org.apache.flink.core.execution
                                                                        .SavepointFormatType
                                                                        .CANONICAL),
                                                        org.apache.flink.runtime.state
                                                                .CheckpointStorageLocationReference
                                                                .getDefault())
                                                : CheckpointOptions
                                                        .forCheckpointWithDefaultLocation()))
                        .getJobManagerOwnedSnapshot();
        if (incremental) {
            // The stored timers travel as a file of the checkpoint, not inside its metadata.
            assertThat(
                            ((org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle)
                                            handle)
                                    .getSharedState().stream()
                                            .map(h -> h.getLocalPath())
                                            .filter(p -> p.startsWith("timers-chk-1/"))
                                            .count())
                    .as("timer files in the checkpoint")
                    .isEqualTo(1);
        }
        // Changes after the snapshot are not in it.
        queue.add(timer(1_000, 1));
        queue.poll();

        for (FlowKVOptions.TimerService service : FlowKVOptions.TimerService.values()) {
            FlowKVKeyedStateBackend<Integer> whole =
                    backend(all, List.of(handle), incremental, service);
            assertThat(drain(whole.create(QUEUE, serializer())))
                    .as("restored whole into %s", service)
                    .isEqualTo(expected);
            Set<String> halves = new TreeSet<>();
            for (KeyGroupRange half :
                    List.of(KeyGroupRange.of(0, 63), KeyGroupRange.of(64, KEY_GROUPS - 1))) {
                FlowKVKeyedStateBackend<Integer> part =
                        backend(half, List.of(handle.getIntersection(half)), incremental, service);
                Set<String> timers = drain(part.create(QUEUE, serializer()));
                for (String timer : timers) {
                    int key = Integer.parseInt(timer.substring(timer.indexOf('/') + 1));
                    assertThat(
                                    half.contains(
                                            KeyGroupRangeAssignment.assignToKeyGroup(
                                                    key, KEY_GROUPS)))
                            .as("timer %s restored into %s", timer, half)
                            .isTrue();
                }
                halves.addAll(timers);
            }
            assertThat(halves).as("restored in two halves into %s", service).isEqualTo(expected);
        }
    }

    /**
     * An {@code AUTO} queue that was stored when its incremental checkpoint was taken is restored
     * stored, whole or into half the key groups, even holding fewer timers than its heap limit: the
     * timer file goes into the store as it is, and the queue does not move again at its next add. A
     * heap queue given the same checkpoint reads the file timer by timer.
     */
    @Test
    void shouldRestoreAStoredAutoQueueStored() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, KEY_GROUPS - 1);
        FlowKVKeyedStateBackend<Integer> source =
                backend(all, List.of(), true, FlowKVOptions.TimerService.AUTO);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue =
                source.create(QUEUE, serializer());
        Set<String> expected = new TreeSet<>();
        for (int k = 0; k < 2 * HEAP_LIMIT; k++) {
            queue.add(timer(k % 13, k));
        }
        for (int k = 0; k < 2 * HEAP_LIMIT; k++) {
            if (k % 4 == 0) {
                expected.add(describe(timer(k % 13, k)));
            } else {
                queue.remove(timer(k % 13, k));
            }
        }
        assertThat(expected).hasSizeLessThan((int) HEAP_LIMIT);
        KeyedStateHandle handle =
                FutureUtils.runIfNotDoneAndGet(
                                source.snapshot(
                                        1,
                                        1,
                                        streamFactory(),
                                        CheckpointOptions.forCheckpointWithDefaultLocation()))
                        .getJobManagerOwnedSnapshot();

        for (KeyGroupRange range : List.of(all, KeyGroupRange.of(0, 63))) {
            FlowKVKeyedStateBackend<Integer> restored =
                    backend(
                            range,
                            List.of(handle.getIntersection(range)),
                            true,
                            FlowKVOptions.TimerService.AUTO);
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> again =
                    restored.create(QUEUE, serializer());
            Object underneath =
                    restored.priorityQueues().getRegisteredPQStates().get(QUEUE).getPriorityQueue();
            assertThat(FlowKVTimerQueue.storedBehind(underneath))
                    .as("restored into %s with %d timers: stored", range, again.size())
                    .isNotNull();
            Set<String> timers = drain(again);
            Set<String> inRange = new TreeSet<>();
            for (String timer : expected) {
                int key = Integer.parseInt(timer.substring(timer.indexOf('/') + 1));
                if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                    inRange.add(timer);
                }
            }
            assertThat(timers).as("timers restored into %s", range).isEqualTo(inRange);
        }

        FlowKVKeyedStateBackend<Integer> onHeap =
                backend(all, List.of(handle), true, FlowKVOptions.TimerService.HEAP);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> heap =
                onHeap.create(QUEUE, serializer());
        assertThat(
                        FlowKVTimerQueue.storedBehind(
                                onHeap.priorityQueues()
                                        .getRegisteredPQStates()
                                        .get(QUEUE)
                                        .getPriorityQueue()))
                .isNull();
        assertThat(drain(heap)).isEqualTo(expected);
    }

    /** Polls every timer, checking (timestamp, key group) order. */
    private static Set<String> drain(
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue) {
        Set<String> out = new TreeSet<>();
        TimerHeapInternalTimer<Integer, VoidNamespace> last = null;
        TimerHeapInternalTimer<Integer, VoidNamespace> t;
        while ((t = queue.poll()) != null) {
            if (last != null) {
                assertThat(order(last, t)).as("%s then %s", last, t).isLessThanOrEqualTo(0);
            }
            out.add(describe(t));
            last = t;
        }
        return out;
    }

    /**
     * What the heap's head should be described as: the stored head when both heads share
     * (timestamp, key group) and the stored one is in the heap (either is a correct head), else the
     * heap's own.
     */
    private static String sameOrder(
            TimerHeapInternalTimer<Integer, VoidNamespace> heapHead,
            TimerHeapInternalTimer<Integer, VoidNamespace> storedHead,
            KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Integer, VoidNamespace>> heap) {
        if (heapHead != null
                && storedHead != null
                && order(heapHead, storedHead) == 0
                && heap.getSubsetForKeyGroup(group(storedHead)).contains(storedHead)) {
            return describe(storedHead);
        }
        return describe(heapHead);
    }

    static int order(
            TimerHeapInternalTimer<Integer, VoidNamespace> a,
            TimerHeapInternalTimer<Integer, VoidNamespace> b) {
        int byTime = Long.compare(a.getTimestamp(), b.getTimestamp());
        return byTime != 0 ? byTime : Integer.compare(group(a), group(b));
    }

    static int group(TimerHeapInternalTimer<Integer, VoidNamespace> timer) {
        return KeyGroupRangeAssignment.assignToKeyGroup(timer.getKey(), KEY_GROUPS);
    }

    static String describe(TimerHeapInternalTimer<Integer, VoidNamespace> timer) {
        return timer == null ? "none" : timer.getTimestamp() + "/" + timer.getKey();
    }

    static TimerHeapInternalTimer<Integer, VoidNamespace> timer(long time, int key) {
        return new TimerHeapInternalTimer<>(time, key, VoidNamespace.INSTANCE);
    }

    /** A fresh copy: the heap queue keeps the object it is given. */
    static TimerHeapInternalTimer<Integer, VoidNamespace> timer(
            TimerHeapInternalTimer<Integer, VoidNamespace> timer) {
        return timer(timer.getTimestamp(), timer.getKey());
    }

    private static TimerSerializer<Integer, VoidNamespace> serializer() {
        return new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);
    }

    private CheckpointStreamFactory streamFactory() throws Exception {
        return TestBackends.streamFactory(temp);
    }

    private FlowKVKeyedStateBackend<Integer> backend(
            KeyGroupRange range,
            List<KeyedStateHandle> handles,
            boolean incremental,
            FlowKVOptions.TimerService timers)
            throws Exception {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        config.set(FlowKVOptions.TIMER_SERVICE, timers);
        config.set(FlowKVOptions.TIMER_HEAP_LIMIT, HEAP_LIMIT);
        return backends.create("timer_op", KEY_GROUPS, range, handles, config);
    }
}
