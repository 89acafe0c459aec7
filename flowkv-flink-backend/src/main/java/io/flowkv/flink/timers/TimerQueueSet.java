package io.flowkv.flink.timers;

import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;

import javax.annotation.Nullable;

import java.util.Collection;

/**
 * The base of FlowKV's timer queues. They extend {@link HeapPriorityQueueSet} only because Flink's
 * snapshot and restore wrapper accepts nothing else; each keeps its timers its own way and
 * overrides every public operation, so the superclass's heap stays empty and holds one slot.
 */
abstract class TimerQueueSet<T extends HeapPriorityQueueElement> extends HeapPriorityQueueSet<T> {

    TimerQueueSet(
            PriorityComparator<T> comparator,
            KeyExtractorFunction<T> keyExtractor,
            KeyGroupRange keyGroupRange,
            int totalKeyGroups) {
        super(comparator, keyExtractor, 1, keyGroupRange, totalKeyGroups);
    }

    /** A queue whose superclass heap is never compared in. */
    TimerQueueSet(
            KeyExtractorFunction<T> keyExtractor, KeyGroupRange keyGroupRange, int totalKeyGroups) {
        this((left, right) -> 0, keyExtractor, keyGroupRange, totalKeyGroups);
    }

    @Override
    public final void addAll(@Nullable Collection<? extends T> toAdd) {
        if (toAdd != null) {
            for (T element : toAdd) {
                add(element);
            }
        }
    }
}
