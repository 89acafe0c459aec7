package io.flowkv.flink.timers;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class KeyGroupOrderedQueueSetFactoryTest {
    private static final int KEY_GROUPS = 128;

    @Test
    void timersDueTogetherComeOutKeyGroupByKeyGroup() {
        // A sub-range, as a subtask of a parallel job has.
        KeyGroupRange range = new KeyGroupRange(32, 95);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Long, VoidNamespace>> queue =
                new KeyGroupOrderedQueueSetFactory(range, KEY_GROUPS)
                        .create(
                                "window-timers",
                                new TimerSerializer<>(
                                        LongSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE));
        Random random = new Random(7);
        Set<Long> keys = new HashSet<>();
        int added = 0;
        while (keys.size() < 3000) {
            long key = random.nextLong();
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                continue;
            }
            keys.add(key);
            // Two windows per key, ending at 10_000 and 20_000, added in random order.
            long first = random.nextBoolean() ? 10_000 : 20_000;
            assertThat(queue.add(timer(first, key)) || added > 0).isTrue();
            queue.add(timer(30_000 - first, key));
            added += 2;
            // Registering a timer again keeps one copy, as Flink's queues do.
            queue.add(timer(first, key));
        }
        assertThat(queue.size()).isEqualTo(added);

        long lastTime = Long.MIN_VALUE;
        int lastGroup = -1;
        int switches = 0;
        int polled = 0;
        TimerHeapInternalTimer<Long, VoidNamespace> t;
        while ((t = queue.poll()) != null) {
            polled++;
            int group = KeyGroupRangeAssignment.assignToKeyGroup(t.getKey(), KEY_GROUPS);
            assertThat(t.getTimestamp()).isGreaterThanOrEqualTo(lastTime);
            if (t.getTimestamp() == lastTime) {
                assertThat(group).isGreaterThanOrEqualTo(lastGroup);
            }
            if (group != lastGroup) {
                switches++;
            }
            lastTime = t.getTimestamp();
            lastGroup = group;
        }
        assertThat(polled).isEqualTo(added);
        // Each of the two instants visits each key group once.
        assertThat(switches).isLessThanOrEqualTo(2 * range.getNumberOfKeyGroups());
    }

    private static TimerHeapInternalTimer<Long, VoidNamespace> timer(long time, long key) {
        return new TimerHeapInternalTimer<>(time, key, VoidNamespace.INSTANCE);
    }
}
