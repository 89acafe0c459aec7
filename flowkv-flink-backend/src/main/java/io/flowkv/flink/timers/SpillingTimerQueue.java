package io.flowkv.flink.timers;

import io.flowkv.core.memory.MemoryBudgetExceededException;

import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.util.CloseableIterator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A timer queue that starts on the heap and moves into FlowKV's store once it holds more than a
 * bound ({@code state.backend.flowkv.timer-service: AUTO}): the heap queue's speed while timers are
 * few, the store's bounded heap when they are many.
 *
 * <p>Until the bound, every operation goes to a {@link KeyGroupPartitionedQueueSet}. The add that
 * would take it past the bound first opens a {@link FlowKVTimerQueue} and moves every heap timer
 * into it, written once as one sorted run ({@link FlowKVTimerQueue#moveFrom}); from then on the
 * queue is stored for the rest of this backend's life (a restore from a checkpoint taken while it
 * was stored restores it stored, {@link #loadStored}; other restores start on the heap again). Both
 * queues give the same order, (timestamp, key group), so moving changes no firing order. If the
 * budget cannot pay the store's staging buffer at that moment, the queue stays on the heap, says so
 * once, and tries again when it has doubled.
 *
 * <p>Snapshots ask {@link #stored()} which of the two forms to write.
 */
final class SpillingTimerQueue<T extends HeapPriorityQueueElement> extends TimerQueueSet<T>
        implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(SpillingTimerQueue.class);

    private final String name;
    private final KeyGroupPartitionedQueueSet<T> heap;
    private final Supplier<FlowKVTimerQueue<T>> openStore;

    /** Size at which the next add moves the heap timers into the store. */
    private long moveAt;

    /** The store, once the timers moved; null while they are on the heap. */
    @Nullable private FlowKVTimerQueue<T> stored;

    /** Why a move into the store failed half-way; the queue refuses every operation after it. */
    @Nullable private Exception failure;

    SpillingTimerQueue(
            String name,
            KeyGroupPartitionedQueueSet<T> heap,
            long heapLimit,
            Supplier<FlowKVTimerQueue<T>> openStore,
            KeyExtractorFunction<T> keyExtractor,
            KeyGroupRange keyGroupRange,
            int totalKeyGroups) {
        super(keyExtractor, keyGroupRange, totalKeyGroups);
        if (heapLimit < 1) {
            throw new IllegalArgumentException("heap limit " + heapLimit + " < 1");
        }
        this.name = name;
        this.heap = heap;
        this.moveAt = heapLimit;
        this.openStore = openStore;
    }

    /** The store the timers moved into, or null while they are on the heap. */
    @Nullable
    FlowKVTimerQueue<T> stored() {
        return stored;
    }

    private HeapPriorityQueueSet<T> active() {
        if (failure != null) {
            throw new IllegalStateException(
                    "FlowKV timer queue " + name + " lost timers in a failed move", failure);
        }
        return stored != null ? stored : heap;
    }

    @Override
    public boolean add(@Nonnull T element) {
        if (stored == null && failure == null && heap.size() >= moveAt) {
            moveToStore();
        }
        return active().add(element);
    }

    private void moveToStore() {
        FlowKVTimerQueue<T> store;
        try {
            store = openStore.get();
        } catch (MemoryBudgetExceededException e) {
            moveAt = Math.max(moveAt, heap.size()) * 2;
            LOG.warn(
                    "FlowKV timer queue {}: {} timers on the heap, but the managed-memory budget "
                            + "cannot pay the stored queue's staging buffer now ({}); they stay "
                            + "on the heap until {}",
                    name,
                    heap.size(),
                    e.getMessage(),
                    moveAt);
            return;
        }
        long moved = heap.size();
        long started = System.nanoTime();
        try {
            store.moveFrom(heap);
        } catch (IOException | RuntimeException e) {
            // The timers polled before the failure are in neither queue: this queue is unusable,
            // and the task's restore from its last checkpoint brings them back.
            failure = e;
            closeQuietly(store);
            throw new IllegalStateException(
                    "FlowKV timer queue "
                            + name
                            + ": moving "
                            + moved
                            + " timers from the heap into the store failed; the task must restore"
                            + " from its last checkpoint",
                    e);
        }
        stored = store;
        LOG.info(
                "FlowKV timer queue {}: {} timers moved from the heap into FlowKV's store in {} ms "
                        + "(timer-service AUTO, heap limit reached)",
                name,
                moved,
                (System.nanoTime() - started) / 1_000_000);
    }

    /**
     * Restores a stored queue's snapshot straight into this queue's store ({@link
     * FlowKVTimerQueue#loadAscending}): a queue that was stored when its checkpoint was taken is
     * restored stored, instead of onto the heap and then moved again at its next add past the
     * bound. Returns false, having read nothing, if this queue holds timers or the budget cannot
     * pay the store's staging buffer now (the caller then adds the timers one by one).
     */
    boolean loadStored(Iterator<byte[]> ascending) throws IOException {
        if (stored != null) {
            return stored.loadAscending(ascending);
        }
        if (failure != null || !heap.isEmpty()) {
            return false;
        }
        FlowKVTimerQueue<T> store;
        try {
            store = openStore.get();
        } catch (MemoryBudgetExceededException e) {
            LOG.warn(
                    "FlowKV timer queue {}: the managed-memory budget cannot pay the stored "
                            + "queue's staging buffer now ({}); its timers are restored onto the "
                            + "heap",
                    name,
                    e.getMessage());
            return false;
        }
        long started = System.nanoTime();
        try {
            store.loadAscending(ascending);
        } catch (IOException | RuntimeException e) {
            closeQuietly(store);
            throw e;
        }
        stored = store;
        LOG.info(
                "FlowKV timer queue {}: {} timers restored into FlowKV's store in {} ms "
                        + "(stored when checkpointed)",
                name,
                store.size(),
                (System.nanoTime() - started) / 1_000_000);
        return true;
    }

    @Nullable
    @Override
    public T peek() {
        return active().peek();
    }

    @Nullable
    @Override
    public T poll() {
        return active().poll();
    }

    @Override
    public boolean remove(@Nonnull T element) {
        return active().remove(element);
    }

    @Override
    public void adjustModifiedElement(@Nonnull T element) {
        active().adjustModifiedElement(element);
    }

    @Override
    public boolean isEmpty() {
        return active().isEmpty();
    }

    @Override
    public int size() {
        return active().size();
    }

    @Override
    public <O> O[] toArray(O[] array) {
        return active().toArray(array);
    }

    @Nonnull
    @Override
    public CloseableIterator<T> iterator() {
        return active().iterator();
    }

    @Override
    public void clear() {
        active().clear();
    }

    @Nonnull
    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        return active().getSubsetForKeyGroup(keyGroupId);
    }

    @Override
    public void close() throws IOException {
        heap.clear();
        if (stored != null) {
            stored.close();
        }
    }

    private static void closeQuietly(Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException | RuntimeException suppressed) {
            LOG.debug("Closing a timer store that failed to fill", suppressed);
        }
    }
}
