package io.flowkv.flink.timers;

import io.flowkv.core.TestSeeds;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.queue.SortedQueueStore;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static io.flowkv.flink.timers.FlowKVTimerQueueTest.KEY_GROUPS;
import static io.flowkv.flink.timers.FlowKVTimerQueueTest.describe;
import static io.flowkv.flink.timers.FlowKVTimerQueueTest.group;
import static io.flowkv.flink.timers.FlowKVTimerQueueTest.order;
import static io.flowkv.flink.timers.FlowKVTimerQueueTest.timer;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code timer-service: AUTO}: a queue on the heap up to its limit, then in FlowKV's store, giving
 * the heap queue's answers before, during and after the move.
 */
class SpillingTimerQueueTest {
    private static final int LIMIT = 500;

    @TempDir Path temp;

    private int stores;

    /**
     * Random adds, removes, peeks and polls against a heap queue as the reference, with timers
     * growing past the limit halfway: the same heads (up to ties in (timestamp, key group)), the
     * same sizes, the same timers left, and the timers in the store after the limit.
     */
    @Test
    void shouldAnswerLikeTheHeapQueueAcrossTheMove() throws Exception {
        long seed = TestSeeds.base();
        Random random = new Random(seed);
        KeyGroupRange range = KeyGroupRange.of(0, KEY_GROUPS - 1);
        MemoryBudget budget = new MemoryBudget(16L << 20);
        KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Integer, VoidNamespace>> reference =
                heap(range);
        SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue =
                spilling(range, budget);
        long now = 0;
        int sizeWhenMoved = -1;
        for (int op = 0; op < 20_000; op++) {
            String where = "seed " + seed + " op " + op;
            // Mostly adds in the first half (past the limit), balanced afterwards.
            int dice = random.nextInt(op < 10_000 ? 8 : 12);
            if (dice < 6) {
                TimerHeapInternalTimer<Integer, VoidNamespace> timer =
                        timer(now + random.nextInt(200), random.nextInt(5_000));
                reference.add(timer(timer));
                queue.add(timer(timer));
                if (sizeWhenMoved < 0 && queue.stored() != null) {
                    sizeWhenMoved = reference.size();
                }
            } else if (dice < 8) {
                TimerHeapInternalTimer<Integer, VoidNamespace> timer =
                        timer(now + random.nextInt(200), random.nextInt(5_000));
                reference.remove(timer(timer));
                queue.remove(timer(timer));
            } else {
                TimerHeapInternalTimer<Integer, VoidNamespace> expected = reference.peek();
                TimerHeapInternalTimer<Integer, VoidNamespace> actual = queue.peek();
                assertThat(actual == null).as(where + " empty").isEqualTo(expected == null);
                if (actual != null) {
                    assertThat(order(actual, expected)).as(where + " peek order").isZero();
                    assertThat(reference.getSubsetForKeyGroup(group(actual)).contains(actual))
                            .as("%s head %s in the reference", where, describe(actual))
                            .isTrue();
                    if (dice >= 10) {
                        reference.remove(timer(actual));
                        assertThat(describe(queue.poll()))
                                .as(where + " poll")
                                .isEqualTo(describe(actual));
                        now = actual.getTimestamp();
                    }
                }
            }
            if (op % 97 == 0) {
                assertThat(queue.size()).as(where + " size").isEqualTo(reference.size());
            }
        }
        assertThat(sizeWhenMoved)
                .as("seed %d: size at the add that moved the timers", seed)
                .isBetween(LIMIT, LIMIT + 1);
        assertThat(queue.stored()).as("seed %d: stored after the limit", seed).isNotNull();
        assertThat(budget.used()).as("budget held by the stored queue").isPositive();
        assertThat(drain(queue)).as("seed %d: timers left", seed).isEqualTo(drainSet(reference));
        queue.close();
        assertThat(budget.used()).as("budget after close").isZero();
    }

    /**
     * A budget that cannot pay the store keeps the timers on the heap (no failure reaches the job),
     * and the queue tries again once it has doubled.
     */
    @Test
    void shouldStayOnTheHeapWhenTheBudgetCannotPay() throws Exception {
        KeyGroupRange range = KeyGroupRange.of(0, KEY_GROUPS - 1);
        MemoryBudget budget = new MemoryBudget(1024);
        SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue =
                spilling(range, budget);
        Set<String> expected = new TreeSet<>();
        for (int k = 0; k < 4 * LIMIT; k++) {
            queue.add(timer(k % 31, k));
            expected.add(describe(timer(k % 31, k)));
        }
        assertThat(queue.stored()).isNull();
        assertThat(stores)
                .as("attempts to open a store: at the limit and at twice it")
                .isEqualTo(2);
        assertThat(queue.size()).isEqualTo(4 * LIMIT);
        assertThat(drain(queue)).isEqualTo(expected);
    }

    /**
     * A stored queue's snapshot (its timers in stored order) goes straight into the store of an
     * empty queue, which stays stored even below its limit; a queue holding timers, or one whose
     * budget cannot pay the store, reads nothing and says so (the restore then adds one by one).
     */
    @Test
    void shouldLoadAStoredSnapshotStraightIntoTheStore() throws Exception {
        KeyGroupRange range = KeyGroupRange.of(0, KEY_GROUPS - 1);
        SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> source =
                spilling(range, new MemoryBudget(1L << 20));
        Set<String> expected = new TreeSet<>();
        for (int k = 0; k < 2 * LIMIT; k++) {
            source.add(timer(k % 31, k));
        }
        for (int k = 0; k < 2 * LIMIT; k++) {
            if (k % 5 != 0) {
                source.remove(timer(k % 31, k));
            } else {
                expected.add(describe(timer(k % 31, k)));
            }
        }
        List<byte[]> snapshot = new ArrayList<>();
        source.stored()
                .forEachSerialized(
                        (keyGroup, timer) ->
                                snapshot.add(
                                        FlowKVTimerQueue.storedForm(
                                                keyGroup, timer, 0, timer.length)));
        assertThat(snapshot).hasSize(2 * LIMIT / 5);

        SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> restored =
                spilling(range, new MemoryBudget(1L << 20));
        assertThat(FlowKVTimerQueue.loadSnapshot(restored, snapshot.iterator())).isTrue();
        assertThat(restored.stored())
                .as("stored at %d timers, under the limit", 2 * LIMIT / 5)
                .isNotNull();
        assertThat(restored.size()).isEqualTo(2 * LIMIT / 5);
        assertThat(FlowKVTimerQueue.loadSnapshot(restored, snapshot.iterator()))
                .as("a second load into a queue that holds timers")
                .isFalse();
        assertThat(drain(restored)).isEqualTo(expected);

        SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> busy =
                spilling(range, new MemoryBudget(1L << 20));
        busy.add(timer(1, 1));
        Iterator<byte[]> untouched = snapshot.iterator();
        assertThat(FlowKVTimerQueue.loadSnapshot(busy, untouched)).isFalse();
        assertThat(untouched.hasNext()).as("nothing read").isTrue();
        assertThat(busy.stored()).isNull();

        SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> poor =
                spilling(range, new MemoryBudget(1024));
        assertThat(FlowKVTimerQueue.loadSnapshot(poor, untouched))
                .as("a budget that cannot pay the store")
                .isFalse();
        assertThat(untouched.hasNext()).as("nothing read").isTrue();
        assertThat(poor.stored()).isNull();
        assertThat(poor.isEmpty()).isTrue();
        assertThat(FlowKVTimerQueue.loadSnapshot(heap(range), List.of(snapshot.get(0)).iterator()))
                .as("a heap queue")
                .isFalse();
    }

    private SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> spilling(
            KeyGroupRange range, MemoryBudget budget) {
        return new SpillingTimerQueue<>(
                "timers",
                heap(range),
                LIMIT,
                () -> {
                    stores++;
                    try {
                        return new FlowKVTimerQueue<>(
                                SortedQueueStore.open(
                                        temp.resolve("store-" + stores), budget, 4096),
                                new TimerSerializer<>(
                                        IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE),
                                KeyExtractorFunction.forKeyedObjects(),
                                range,
                                KEY_GROUPS);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                },
                KeyExtractorFunction.forKeyedObjects(),
                range,
                KEY_GROUPS);
    }

    private static KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Integer, VoidNamespace>> heap(
            KeyGroupRange range) {
        return new KeyGroupPartitionedQueueSet<>(
                PriorityComparator.forPriorityComparableObjects(),
                KeyExtractorFunction.forKeyedObjects(),
                16,
                range,
                KEY_GROUPS);
    }

    /** Polls every timer, checking (timestamp, key group) order. */
    private static Set<String> drain(
            SpillingTimerQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue) {
        List<TimerHeapInternalTimer<Integer, VoidNamespace>> polled = new ArrayList<>();
        for (var t = queue.poll(); t != null; t = queue.poll()) {
            if (!polled.isEmpty()) {
                assertThat(order(polled.get(polled.size() - 1), t))
                        .as("%s after %s", describe(t), describe(polled.get(polled.size() - 1)))
                        .isLessThanOrEqualTo(0);
            }
            polled.add(t);
        }
        Set<String> out = new TreeSet<>();
        polled.forEach(t -> out.add(describe(t)));
        assertThat(out).as("timers polled twice").hasSize(polled.size());
        return out;
    }

    private static Set<String> drainSet(
            KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Integer, VoidNamespace>> queue) {
        Set<String> out = new TreeSet<>();
        for (var t = queue.poll(); t != null; t = queue.poll()) {
            out.add(describe(t));
        }
        return out;
    }
}
