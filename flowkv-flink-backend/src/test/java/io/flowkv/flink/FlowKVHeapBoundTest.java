package io.flowkv.flink;

import io.flowkv.flink.storage.StoreSelector;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Collections;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * FlowKV's Java heap does not grow with the number of keys: what it keeps per key lives off-heap
 * (inside its budget) or on disk. A dedup-shaped job (a {@code ValueState} per key, read, then set
 * on the first sight of the key) runs over many more keys than the index cache holds, and the heap
 * retained after a full GC may not grow by more than a few bytes per key between a small and a ten
 * times larger key count.
 */
class FlowKVHeapBoundTest {
    private static final int KEY_GROUPS = 128;
    private static final int FIRST = 200_000;
    private static final int ALL = 2_000_000;
    private static final int WINDOWS_FIRST = 50_000;
    private static final int WINDOWS_ALL = 500_000;

    /** Slack for GC noise; a heap-resident index alone would grow by ~60 MB over these keys. */
    private static final long MAX_GROWTH_BYTES = 16L << 20;

    @Test
    void shouldKeepHeapFlatWhileKeysGrowPastTheIndexCache() throws Exception {
        withBackend(
                "dedup",
                backend -> {
                    ValueState<Long> seen =
                            backend.getPartitionedState(
                                    VoidNamespace.INSTANCE,
                                    VoidNamespaceSerializer.INSTANCE,
                                    new ValueStateDescriptor<>("seen", LongSerializer.INSTANCE));
                    long firstSeen = dedup(backend, seen, 0, FIRST);
                    long before = retainedHeap();
                    firstSeen += dedup(backend, seen, FIRST, ALL);
                    // Every key a second time: all of them are found, none is new.
                    firstSeen += dedup(backend, seen, 0, ALL);
                    long after = retainedHeap();
                    System.out.printf(
                            "FlowKVHeapBoundTest dedup: retained heap %d -> %d bytes%n",
                            before, after);
                    assertThat(firstSeen).as("keys seen for the first time").isEqualTo(ALL);
                    assertThat(after - before)
                            .as(
                                    "heap growth from %d to %d keys (before %d, after %d bytes)",
                                    FIRST, ALL, before, after)
                            .isLessThan(MAX_GROWTH_BYTES);
                });
    }

    /**
     * Count and global windows live on the AUR store, one stat record per live (key, window): the
     * records page to disk past the cache, so neither the heap nor the budget grows with windows.
     */
    @Test
    void shouldKeepHeapFlatWhileLiveGlobalWindowsGrowPastTheCache() throws Exception {
        withBackend(
                "count-window",
                backend -> {
                    ListState<Long> contents =
                            backend.getPartitionedState(
                                    GlobalWindow.get(),
                                    new GlobalWindow.Serializer(),
                                    new ListStateDescriptor<>(
                                            StoreSelector.WINDOW_CONTENTS,
                                            LongSerializer.INSTANCE));
                    appendWindows(backend, contents, 0, WINDOWS_FIRST);
                    long before = retainedHeap();
                    appendWindows(backend, contents, WINDOWS_FIRST, WINDOWS_ALL);
                    // A second element in every window: each record is found again, most of them
                    // read back from the page files.
                    appendWindows(backend, contents, 0, WINDOWS_ALL);
                    long after = retainedHeap();
                    System.out.printf(
                            "FlowKVHeapBoundTest windows: retained heap %d -> %d bytes%n",
                            before, after);
                    for (int k = 0; k < WINDOWS_ALL; k += WINDOWS_ALL / 500) {
                        backend.setCurrentKey(spread(k));
                        assertThat(contents.get())
                                .as("window of key %d", k)
                                .containsExactly((long) k, (long) k);
                    }
                    assertThat(after - before)
                            .as(
                                    "heap growth from %d to %d live windows (before %d, after %d"
                                            + " bytes)",
                                    WINDOWS_FIRST, WINDOWS_ALL, before, after)
                            .isLessThan(MAX_GROWTH_BYTES);
                });
    }

    /**
     * With {@code timer-service: FLOWKV}, timers live in FlowKV's sorted store; with {@code AUTO}
     * (the default) they move there past the heap limit (here below the first batch): registering
     * ten times more does not grow the heap, and they fire in (timestamp, key group) order. (On the
     * heap queue the same timers grow it by ~50 MB.)
     */
    @ParameterizedTest(name = "timer-service {0}")
    @EnumSource(
            value = FlowKVOptions.TimerService.class,
            names = {"FLOWKV", "AUTO"})
    void shouldKeepHeapFlatWhileStoredTimersGrow(FlowKVOptions.TimerService service)
            throws Exception {
        withBackend(
                "timers",
                service,
                backend -> {
                    KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>>
                            timers =
                                    backend.create(
                                            "_timer_state/event_user-timers",
                                            new TimerSerializer<>(
                                                    IntSerializer.INSTANCE,
                                                    VoidNamespaceSerializer.INSTANCE));
                    addTimers(timers, 0, WINDOWS_FIRST);
                    long before = retainedHeap();
                    addTimers(timers, WINDOWS_FIRST, WINDOWS_ALL);
                    // Each timer a second time: already there, nothing added.
                    addTimers(timers, 0, WINDOWS_ALL);
                    long after = retainedHeap();
                    System.out.printf(
                            "FlowKVHeapBoundTest timers: retained heap %d -> %d bytes%n",
                            before, after);
                    assertThat(timers.size()).isEqualTo(WINDOWS_ALL);
                    long lastTime = Long.MIN_VALUE;
                    int lastGroup = -1;
                    for (int i = 0; i < WINDOWS_ALL; i++) {
                        TimerHeapInternalTimer<Integer, VoidNamespace> timer = timers.poll();
                        int group =
                                KeyGroupRangeAssignment.assignToKeyGroup(
                                        timer.getKey(), KEY_GROUPS);
                        assertThat(
                                        timer.getTimestamp() > lastTime
                                                || (timer.getTimestamp() == lastTime
                                                        && group >= lastGroup))
                                .as(
                                        "timer %d (%s) after (%d, group %d)",
                                        i, timer, lastTime, lastGroup)
                                .isTrue();
                        lastTime = timer.getTimestamp();
                        lastGroup = group;
                    }
                    assertThat(timers.poll()).isNull();
                    assertThat(after - before)
                            .as(
                                    "heap growth from %d to %d timers (before %d, after %d bytes)",
                                    WINDOWS_FIRST, WINDOWS_ALL, before, after)
                            .isLessThan(MAX_GROWTH_BYTES);
                });
    }

    /** One timer per key of {@code [from, to)}, due at one of 1,000 instants. */
    private static void addTimers(
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers,
            int from,
            int to) {
        for (int k = from; k < to; k++) {
            timers.add(new TimerHeapInternalTimer<>(k % 1_000, spread(k), VoidNamespace.INSTANCE));
        }
    }

    private interface BackendTest {
        void run(FlowKVKeyedStateBackend<Integer> backend) throws Exception;
    }

    private void withBackend(String operator, BackendTest test) throws Exception {
        withBackend(operator, FlowKVOptions.TimerService.HEAP, test);
    }

    private void withBackend(
            String operator, FlowKVOptions.TimerService timerService, BackendTest test)
            throws Exception {
        Configuration config = new Configuration();
        config.set(FlowKVOptions.TIMER_SERVICE, timerService);
        config.set(FlowKVOptions.TIMER_HEAP_LIMIT, WINDOWS_FIRST / 2L);
        // A small cache, so that most of the index (and of the AUR window table) lives in page
        // files.
        config.set(FlowKVOptions.INDEX_CACHE_SIZE, MemorySize.parse("1mb"));
        // The object cache is on the heap by design, bounded: full before the first measurement,
        // it must not grow after it either.
        config.set(FlowKVOptions.OBJECT_CACHE_SIZE, MemorySize.parse("4mb"));
        try (TestBackends backends = new TestBackends()) {
            test.run(
                    backends.create(
                            operator,
                            KEY_GROUPS,
                            KeyGroupRange.of(0, KEY_GROUPS - 1),
                            Collections.emptyList(),
                            config));
        }
    }

    /** Appends the key's number to the global window of each key of {@code [from, to)}. */
    private static void appendWindows(
            FlowKVKeyedStateBackend<Integer> backend, ListState<Long> contents, int from, int to)
            throws Exception {
        for (int k = from; k < to; k++) {
            backend.setCurrentKey(spread(k));
            contents.add((long) k);
        }
    }

    /** Spreads the keys over the key groups as a hash partitioner would. */
    private static int spread(int k) {
        return k * 0x9E3779B1;
    }

    /** Sets each key of {@code [from, to)} not seen yet; returns how many were new. */
    private static long dedup(
            FlowKVKeyedStateBackend<Integer> backend, ValueState<Long> seen, int from, int to)
            throws Exception {
        long fresh = 0;
        for (int k = from; k < to; k++) {
            backend.setCurrentKey(spread(k));
            Long v = seen.value();
            if (v == null) {
                seen.update((long) k);
                fresh++;
            } else if (v != k) {
                throw new AssertionError("key " + k + " holds " + v);
            }
        }
        return fresh;
    }

    private static long retainedHeap() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
        }
        return least;
    }
}
