package io.flowkv.flink.timers;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.util.CloseableIterator;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.util.Collection;
import java.util.Set;

/**
 * A timer queue as the timer service sees it: every timer registered or deleted through it is also
 * reported to {@link Listener}, which turns a window's timers into the AUR store's trigger time for
 * it. Restores and snapshots use the queue underneath, not this view, so only the timers the job
 * itself registers are reported.
 */
@Internal
public final class TriggerTimeFeed<T> implements KeyGroupedInternalPriorityQueue<T> {

    /** Hears of timers registered and deleted; must not touch the queue. */
    public interface Listener {
        void timerAdded(Object timer);

        void timerRemoved(Object timer);
    }

    private final KeyGroupedInternalPriorityQueue<T> queue;
    private final Listener listener;

    public TriggerTimeFeed(KeyGroupedInternalPriorityQueue<T> queue, Listener listener) {
        this.queue = queue;
        this.listener = listener;
    }

    @Override
    public boolean add(@Nonnull T element) {
        boolean headChanged = queue.add(element);
        listener.timerAdded(element);
        return headChanged;
    }

    @Override
    public boolean remove(@Nonnull T element) {
        boolean headChanged = queue.remove(element);
        listener.timerRemoved(element);
        return headChanged;
    }

    @Override
    public void addAll(@Nullable Collection<? extends T> toAdd) {
        if (toAdd != null) {
            for (T element : toAdd) {
                add(element);
            }
        }
    }

    @Nullable
    @Override
    public T poll() {
        return queue.poll();
    }

    @Nullable
    @Override
    public T peek() {
        return queue.peek();
    }

    @Override
    public boolean isEmpty() {
        return queue.isEmpty();
    }

    @Override
    public int size() {
        return queue.size();
    }

    @Nonnull
    @Override
    public CloseableIterator<T> iterator() {
        return queue.iterator();
    }

    @Nonnull
    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        return queue.getSubsetForKeyGroup(keyGroupId);
    }
}
