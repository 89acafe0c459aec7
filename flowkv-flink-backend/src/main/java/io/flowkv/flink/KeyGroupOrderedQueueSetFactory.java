package io.flowkv.flink;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;

import javax.annotation.Nonnull;

/**
 * Flink's heap timer queues, with one change: timers due at the same time come out key group by key
 * group, in ascending key-group order.
 *
 * <p>Flink's {@link HeapPriorityQueueSet} is one heap over all key groups, so the timers of a
 * window that ends at the same instant for every key fire in an order that jumps between key groups
 * at every step. The AAR store keeps a window partition per key group and loads a firing window one
 * partition at a time; in heap order it would reload partitions over and over once the budget holds
 * fewer than all of them (measured: a window holding 4x the budget read 50 times over). Flink
 * promises no order among timers with equal timestamps, so ordering them by key group changes no
 * result: it only makes a firing window's reads sequential per partition. The order is kept by
 * {@link KeyGroupPartitionedQueueSet}, a heap per key group under a heap of key groups.
 */
final class KeyGroupOrderedQueueSetFactory extends HeapPriorityQueueSetFactory {
    private static final int MINIMUM_CAPACITY = 128;

    private final KeyGroupRange keyGroupRange;
    private final int totalKeyGroups;

    KeyGroupOrderedQueueSetFactory(KeyGroupRange keyGroupRange, int totalKeyGroups) {
        super(keyGroupRange, totalKeyGroups, MINIMUM_CAPACITY);
        this.keyGroupRange = keyGroupRange;
        this.totalKeyGroups = totalKeyGroups;
    }

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            HeapPriorityQueueSet<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return new KeyGroupPartitionedQueueSet<>(
                PriorityComparator.forPriorityComparableObjects(),
                KeyExtractorFunction.forKeyedObjects(),
                MINIMUM_CAPACITY,
                keyGroupRange,
                totalKeyGroups);
    }
}
