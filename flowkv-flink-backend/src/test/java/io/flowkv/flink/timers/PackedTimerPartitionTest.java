package io.flowkv.flink.timers;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;

import java.util.ConcurrentModificationException;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One key group's packed timers against a sorted model, as a session window uses them. */
class PackedTimerPartitionTest {
    private static final TimerPacking PACKING =
            TimerPacking.of(
                    new TimerSerializer<>(LongSerializer.INSTANCE, new TimeWindow.Serializer()));

    private record Model(long time, long key, long start) implements Comparable<Model> {
        @Override
        public int compareTo(Model o) {
            int c = Long.compare(time, o.time);
            c = c != 0 ? c : Long.compare(key, o.key);
            return c != 0 ? c : Long.compare(start, o.start);
        }

        TimerHeapInternalTimer<Long, TimeWindow> timer() {
            return new TimerHeapInternalTimer<>(time, key, new TimeWindow(start, time + 1));
        }
    }

    @Test
    void matchesASortedModelWhileGrowingAndShrinking() {
        Random random = new Random(20261129);
        PackedTimerPartition<TimerHeapInternalTimer<Long, TimeWindow>> partition =
                new PackedTimerPartition<>(PACKING);
        TreeSet<Model> model = new TreeSet<>();
        for (int round = 0; round < 6; round++) {
            // Fill to a few thousand timers, then drain most of them: the arrays double and halve.
            int target = 500 + random.nextInt(4000);
            while (model.size() < target) {
                step(random, partition, model, 0.8);
            }
            while (model.size() > target / 20) {
                step(random, partition, model, 0.1);
            }
        }
        while (!model.isEmpty()) {
            pollAndCheck(partition, model);
        }
        assertThat(partition.isEmpty()).isTrue();
        assertThat(partition.poll()).isNull();
        assertThat(partition.peek()).isNull();
    }

    private static void step(
            Random random,
            PackedTimerPartition<TimerHeapInternalTimer<Long, TimeWindow>> partition,
            TreeSet<Model> model,
            double addShare) {
        double op = random.nextDouble();
        Model oldHead = model.isEmpty() ? null : model.first();
        Object oldHeadObject = partition.peek();
        if (op < addShare) {
            Model m = new Model(random.nextInt(5_000), random.nextInt(300), random.nextInt(3));
            int change = partition.add(m.timer());
            assertThat(change != KeyGroupPartitionedQueueSet.Partition.UNCHANGED)
                    .isEqualTo(model.add(m));
        } else if (op < addShare + (1 - addShare) * 0.7 && !model.isEmpty()) {
            // Remove a timer that is there (as a merging window does), or one that is not.
            Model m =
                    random.nextInt(4) == 0
                            ? new Model(random.nextInt(5_000), random.nextInt(300), 0)
                            : model.ceiling(new Model(random.nextInt(5_000), -1, -1));
            if (m == null) {
                m = model.first();
            }
            int change = partition.remove(m.timer());
            assertThat(change != KeyGroupPartitionedQueueSet.Partition.UNCHANGED)
                    .isEqualTo(model.remove(m));
        } else if (!model.isEmpty()) {
            pollAndCheck(partition, model);
        }
        assertThat(partition.size()).isEqualTo(model.size());
        if (model.isEmpty()) {
            assertThat(partition.peek()).isNull();
            return;
        }
        TimerHeapInternalTimer<Long, TimeWindow> head = partition.peek();
        assertThat(head.getTimestamp()).isEqualTo(model.first().time);
        assertThat(model)
                .contains(
                        new Model(
                                head.getTimestamp(),
                                head.getKey(),
                                head.getNamespace().getStart()));
        assertThat(partition.peek())
                .as("the head object is kept while the head stays")
                .isSameAs(head);
        if (oldHead != null && oldHeadObject != null && model.first().time != oldHead.time) {
            assertThat(head).as("a new head is a new object").isNotSameAs(oldHeadObject);
        }
    }

    /** Polls a timer of the model's first timestamp (equal ones in any order) and removes it. */
    private static void pollAndCheck(
            PackedTimerPartition<TimerHeapInternalTimer<Long, TimeWindow>> partition,
            TreeSet<Model> model) {
        TimerHeapInternalTimer<Long, TimeWindow> polled = partition.poll();
        assertThat(polled.getTimestamp()).isEqualTo(model.first().time);
        Model got =
                new Model(polled.getTimestamp(), polled.getKey(), polled.getNamespace().getStart());
        assertThat(model.remove(got)).as("polled " + got).isTrue();
    }

    @Test
    void theSetViewHoldsEveryTimerOnceAndFailsFastAfterAChange() {
        PackedTimerPartition<TimerHeapInternalTimer<Long, TimeWindow>> partition =
                new PackedTimerPartition<>(PACKING);
        Set<String> expected = new HashSet<>();
        for (long key = 0; key < 100; key++) {
            Model m = new Model(1_000 - key, key, 7);
            partition.add(m.timer());
            expected.add(m.time + "/" + key);
        }
        Set<String> seen = new HashSet<>();
        for (TimerHeapInternalTimer<Long, TimeWindow> t : partition.asSet()) {
            assertThat(t.getNamespace().getStart()).isEqualTo(7);
            seen.add(t.getTimestamp() + "/" + t.getKey());
        }
        assertThat(seen).isEqualTo(expected);
        assertThat(partition.asSet()).hasSize(100);
        assertThat(partition.asSet().contains(new Model(950, 50, 7).timer())).isTrue();
        assertThat(partition.asSet().contains(new Model(950, 50, 8).timer())).isFalse();

        Iterator<TimerHeapInternalTimer<Long, TimeWindow>> it = partition.asSet().iterator();
        it.next();
        partition.poll();
        assertThatThrownBy(it::hasNext).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void aPackedTimerCannotBeAdjustedInPlace() {
        PackedTimerPartition<TimerHeapInternalTimer<Long, TimeWindow>> partition =
                new PackedTimerPartition<>(PACKING);
        TimerHeapInternalTimer<Long, TimeWindow> timer = new Model(5, 1, 0).timer();
        partition.add(timer);
        assertThat(partition.holds(timer)).isTrue();
        assertThatThrownBy(() -> partition.adjust(timer))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("packed");
    }
}
