package io.flowkv.flink.timers;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.CloseableIterator;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KeyGroupPartitionedQueueSetTest {
    private static final int KEY_GROUPS = 128;
    private static final KeyGroupRange RANGE = new KeyGroupRange(16, 79);

    private static final class Entry {
        final long time;
        final long key;
        final int group;

        Entry(long time, long key) {
            this.time = time;
            this.key = key;
            this.group = KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS);
        }
    }

    /** (time, key group) is the order the queue promises; the key only makes entries distinct. */
    private static final Comparator<Entry> PROMISED =
            Comparator.<Entry>comparingLong(e -> e.time)
                    .thenComparingInt(e -> e.group)
                    .thenComparingLong(e -> e.key);

    @ParameterizedTest(name = "packed={0}")
    @ValueSource(booleans = {false, true})
    void behavesLikeAnOrderedSetUnderRandomOperations(boolean packed) {
        Random random = new Random(11);
        KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>> queue =
                newQueue(packed);
        TreeSet<Entry> model = new TreeSet<>(PROMISED);
        List<Long> keys = keysInRange(random, 400);

        for (int step = 0; step < 60_000; step++) {
            int op = random.nextInt(10);
            long key = keys.get(random.nextInt(keys.size()));
            // Few distinct times, so most comparisons are ties broken by key group.
            long time = 1000L * random.nextInt(4);
            Entry entry = new Entry(time, key);
            Entry oldHead = model.isEmpty() ? null : model.first();
            if (op < 5) {
                boolean added = model.add(entry);
                boolean headChanged = queue.add(timer(time, key));
                assertThat(queue.size()).isEqualTo(model.size());
                if (!added) {
                    assertThat(headChanged).isFalse();
                }
                assertHead(queue, model, oldHead, headChanged);
                if (random.nextBoolean()) {
                    // A window operator registers each timer twice (trigger, then cleanup).
                    assertThat(queue.add(timer(time, key))).isFalse();
                    assertThat(queue.size()).isEqualTo(model.size());
                }
            } else if (op < 7) {
                boolean removed = model.remove(entry);
                boolean headChanged = queue.remove(timer(time, key));
                assertThat(queue.size()).isEqualTo(model.size());
                if (!removed) {
                    assertThat(headChanged).isFalse();
                }
                assertHead(queue, model, oldHead, headChanged);
            } else {
                TimerHeapInternalTimer<Long, VoidNamespace> polled = queue.poll();
                Entry expected = model.pollFirst();
                if (expected == null) {
                    assertThat(polled).isNull();
                } else {
                    // Among equal (time, key group) any element may come first.
                    assertThat(polled.getTimestamp()).isEqualTo(expected.time);
                    Entry got = new Entry(polled.getTimestamp(), polled.getKey());
                    assertThat(got.group).isEqualTo(expected.group);
                    model.add(expected);
                    assertThat(model.remove(got)).isTrue();
                }
            }
            assertThat(queue.isEmpty()).isEqualTo(model.isEmpty());
        }
        assertContents(queue, model);
    }

    @ParameterizedTest(name = "packed={0}")
    @ValueSource(booleans = {false, true})
    void aTimerAddedAgainAfterItLeftIsQueuedAgain(boolean packed) {
        KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>> queue =
                newQueue(packed);
        long key = keysInRange(new Random(7), 1).get(0);
        assertThat(queue.add(timer(5, key))).isTrue();
        assertThat(queue.add(timer(5, key))).isFalse();
        assertThat(queue.size()).isEqualTo(1);

        assertThat(queue.poll().getTimestamp()).isEqualTo(5);
        assertThat(queue.add(timer(5, key))).as("after poll").isTrue();
        assertThat(queue.size()).isEqualTo(1);

        assertThat(queue.remove(timer(5, key))).isTrue();
        assertThat(queue.add(timer(5, key))).as("after remove").isTrue();
        assertThat(queue.size()).isEqualTo(1);

        queue.clear();
        assertThat(queue.add(timer(5, key))).as("after clear").isTrue();
        assertThat(queue.size()).isEqualTo(1);
        assertThat(queue.poll()).isNotNull();
        assertThat(queue.poll()).isNull();
    }

    @ParameterizedTest(name = "packed={0}")
    @ValueSource(booleans = {false, true})
    void snapshotViewsHoldEveryElementOnce(boolean packed) {
        Random random = new Random(3);
        KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>> queue =
                newQueue(packed);
        TreeSet<Entry> model = new TreeSet<>(PROMISED);
        for (long key : keysInRange(random, 500)) {
            long time = random.nextInt(50);
            queue.add(timer(time, key));
            model.add(new Entry(time, key));
        }
        assertContents(queue, model);

        Object[] small = queue.toArray(new Object[3]);
        assertThat(small).hasSize(model.size());
        Object[] large = queue.toArray(new Object[model.size() + 2]);
        assertThat(large[model.size()]).isNull();

        queue.clear();
        assertThat(queue.isEmpty()).isTrue();
        assertThat(queue.peek()).isNull();
        assertThat(queue.poll()).isNull();
        assertThat(queue.iterator().hasNext()).isFalse();
    }

    @ParameterizedTest(name = "packed={0}")
    @ValueSource(booleans = {false, true})
    void rejectsKeysOutsideItsKeyGroupRange(boolean packed) {
        Random random = new Random(5);
        KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>> queue =
                newQueue(packed);
        long outside;
        do {
            outside = random.nextLong();
        } while (RANGE.contains(KeyGroupRangeAssignment.assignToKeyGroup(outside, KEY_GROUPS)));
        long key = outside;
        assertThatThrownBy(() -> queue.add(timer(1, key)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not contain key group");
    }

    private static void assertHead(
            KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>> queue,
            TreeSet<Entry> model,
            Entry oldHead,
            boolean reportedChange) {
        Entry newHead = model.isEmpty() ? null : model.first();
        TimerHeapInternalTimer<Long, VoidNamespace> head = queue.peek();
        if (newHead == null) {
            assertThat(head).isNull();
            return;
        }
        assertThat(head.getTimestamp()).isEqualTo(newHead.time);
        assertThat(KeyGroupRangeAssignment.assignToKeyGroup(head.getKey(), KEY_GROUPS))
                .isEqualTo(newHead.group);
        boolean sameSlot =
                oldHead != null && oldHead.time == newHead.time && oldHead.group == newHead.group;
        if (!sameSlot) {
            // A head of another (time, key group) is a change the caller must hear about.
            assertThat(reportedChange).isTrue();
        }
    }

    private static void assertContents(
            KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>> queue,
            TreeSet<Entry> model) {
        Set<String> expected = new HashSet<>();
        for (Entry e : model) {
            expected.add(e.time + "/" + e.key);
        }
        Set<String> iterated = new HashSet<>();
        int count = 0;
        CloseableIterator<TimerHeapInternalTimer<Long, VoidNamespace>> it = queue.iterator();
        while (it.hasNext()) {
            TimerHeapInternalTimer<Long, VoidNamespace> t = it.next();
            iterated.add(t.getTimestamp() + "/" + t.getKey());
            count++;
        }
        assertThat(count).isEqualTo(model.size());
        assertThat(iterated).isEqualTo(expected);

        Set<String> dumped = new HashSet<>();
        for (Object o : queue.toArray(new Object[0])) {
            @SuppressWarnings("unchecked")
            TimerHeapInternalTimer<Long, VoidNamespace> t =
                    (TimerHeapInternalTimer<Long, VoidNamespace>) o;
            dumped.add(t.getTimestamp() + "/" + t.getKey());
        }
        assertThat(dumped).isEqualTo(expected);

        int bySubsets = 0;
        for (int group = RANGE.getStartKeyGroup(); group <= RANGE.getEndKeyGroup(); group++) {
            for (TimerHeapInternalTimer<Long, VoidNamespace> t :
                    queue.getSubsetForKeyGroup(group)) {
                assertThat(KeyGroupRangeAssignment.assignToKeyGroup(t.getKey(), KEY_GROUPS))
                        .isEqualTo(group);
                bySubsets++;
            }
        }
        assertThat(bySubsets).isEqualTo(model.size());
    }

    private static KeyGroupPartitionedQueueSet<TimerHeapInternalTimer<Long, VoidNamespace>>
            newQueue(boolean packed) {
        return new KeyGroupPartitionedQueueSet<>(
                PriorityComparator.forPriorityComparableObjects(),
                KeyExtractorFunction.forKeyedObjects(),
                4,
                RANGE,
                KEY_GROUPS,
                packed
                        ? TimerPacking.of(
                                new TimerSerializer<>(
                                        LongSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE))
                        : null);
    }

    private static List<Long> keysInRange(Random random, int count) {
        List<Long> keys = new ArrayList<>();
        while (keys.size() < count) {
            long key = random.nextLong();
            if (RANGE.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static TimerHeapInternalTimer<Long, VoidNamespace> timer(long time, long key) {
        return new TimerHeapInternalTimer<>(time, key, VoidNamespace.INSTANCE);
    }
}
