package io.flowkv.flink.timers;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.queue.SortedQueueStore;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The backend's timer queues: Flink's timers stored by FlowKV ({@link FlowKVTimerQueue}, off the
 * heap) when {@code state.backend.flowkv.timer-service} is {@code FLOWKV}, on the heap until a
 * bound and stored beyond it ({@link SpillingTimerQueue}) when it is {@code AUTO}, heap queues
 * otherwise. Either way, timers due at the same time come out key group by key group, in ascending
 * key-group order. On the heap, timers whose key is a {@code Long} or {@code Integer} and whose
 * namespace is a {@code TimeWindow}, a {@code Long}, {@code VoidNamespace} or {@code GlobalWindow}
 * are kept packed as longs ({@link TimerPacking}), others as objects.
 *
 * <p>Flink's {@link HeapPriorityQueueSet} is one heap over all key groups, so the timers of a
 * window that ends at the same instant for every key fire in an order that jumps between key groups
 * at every step. The AAR store keeps a window partition per key group and loads a firing window one
 * partition at a time; in heap order it would reload partitions over and over once the budget holds
 * fewer than all of them (measured: a window holding 4x the budget read 50 times over). Flink
 * promises no order among timers with equal timestamps, so ordering them by key group changes no
 * result: it only makes a firing window's reads sequential per partition. On the heap the order is
 * kept by {@link KeyGroupPartitionedQueueSet}, a heap per key group under a heap of key groups; in
 * the store by the key group written after the timestamp.
 *
 * <p>Only queues of Flink's {@link TimerSerializer} (every timer service's) go to the store: its
 * byte layout starts with the timestamp, which the store's order needs. Any other element type
 * stays on the heap.
 */
@Internal
public final class KeyGroupOrderedQueueSetFactory extends HeapPriorityQueueSetFactory {
    private static final Logger LOG = LoggerFactory.getLogger(KeyGroupOrderedQueueSetFactory.class);
    private static final int MINIMUM_CAPACITY = 128;

    /** The stored queue's sorted in-memory buffer, on the heap (bounded, not charged). */
    static final long MEMTABLE_BYTES = 256 * 1024;

    private final KeyGroupRange keyGroupRange;
    private final int totalKeyGroups;
    @Nullable private final Stored stored;

    /** {@link Stored#heapLimit} of {@code timer-service: FLOWKV}: no heap phase. */
    public static final long STORED_FROM_THE_START = 0;

    /**
     * Where stored queues live, the budget they charge, and how many timers a queue holds on the
     * heap before it moves into the store ({@link #STORED_FROM_THE_START}: none). Null keeps every
     * queue on the heap.
     */
    public record Stored(Path directory, MemoryBudget budget, long heapLimit) {}

    public KeyGroupOrderedQueueSetFactory(
            KeyGroupRange keyGroupRange, int totalKeyGroups, @Nullable Stored stored) {
        super(keyGroupRange, totalKeyGroups, MINIMUM_CAPACITY);
        this.keyGroupRange = keyGroupRange;
        this.totalKeyGroups = totalKeyGroups;
        this.stored = stored;
    }

    KeyGroupOrderedQueueSetFactory(KeyGroupRange keyGroupRange, int totalKeyGroups) {
        this(keyGroupRange, totalKeyGroups, null);
    }

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            HeapPriorityQueueSet<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        TimerPacking packing = TimerPacking.of(byteOrderedElementSerializer);
        if (stored == null || !(byteOrderedElementSerializer instanceof TimerSerializer)) {
            return heapQueue(packing);
        }
        if (stored.heapLimit() == STORED_FROM_THE_START) {
            return openStored(stateName, byteOrderedElementSerializer);
        }
        return new SpillingTimerQueue<>(
                stateName,
                heapQueue(packing),
                stored.heapLimit(),
                () -> openStored(stateName, byteOrderedElementSerializer),
                KeyExtractorFunction.forKeyedObjects(),
                keyGroupRange,
                totalKeyGroups);
    }

    private <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupPartitionedQueueSet<T> heapQueue(@Nullable TimerPacking packing) {
        if (packing != null) {
            LOG.debug("FlowKV heap timer queue: timers packed as longs ({})", packing);
        }
        return new KeyGroupPartitionedQueueSet<>(
                PriorityComparator.forPriorityComparableObjects(),
                KeyExtractorFunction.forKeyedObjects(),
                MINIMUM_CAPACITY,
                keyGroupRange,
                totalKeyGroups,
                packing);
    }

    private <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            FlowKVTimerQueue<T> openStored(String stateName, TypeSerializer<T> serializer) {
        try {
            Path dir =
                    Files.createDirectories(
                            stored.directory()
                                    .resolve(
                                            "timers-"
                                                    + stateName.replaceAll("[^A-Za-z0-9_-]", "_")
                                                    + "-"
                                                    + UUID.randomUUID()));
            SortedQueueStore store = SortedQueueStore.open(dir, stored.budget(), MEMTABLE_BYTES);
            LOG.info("FlowKV timer queue {}: stored off the heap in {}", stateName, dir);
            return new FlowKVTimerQueue<>(
                    store,
                    serializer.duplicate(),
                    KeyExtractorFunction.forKeyedObjects(),
                    keyGroupRange,
                    totalKeyGroups);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "FlowKV could not create the timer queue " + stateName + ": " + e.getMessage(),
                    e);
        }
    }
}
