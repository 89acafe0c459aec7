package io.flowkv.flink.state;

import io.flowkv.flink.storage.StorePattern;
import io.flowkv.flink.storage.StoreSelector;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.operators.InternalTimer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The list states of a window operator that tell the AUR store when a window will be read: its
 * window contents, and for session windows its merging window set. {@link FlowKVListState#create}
 * reports each list state here as it is created, so the pair is known by type, not looked up by
 * name and cast.
 *
 * <ul>
 *   <li>Session windows: the merging window set's updates carry each merged window's end, which the
 *       window contents store takes as the window's trigger time.
 *   <li>Count, global and custom windows: the operator's timers are the trigger times; the timer
 *       service reports them through {@link #timer}. A timer's namespace is its window; the
 *       earliest pending timer of a window is when its trigger will read it.
 * </ul>
 */
@Internal
public final class WindowStates<K> {
    private static final Logger LOG = LoggerFactory.getLogger(WindowStates.class);

    private FlowKVListState<K, Object, ?> windowContents;
    private FlowKVListState<K, ?, ?> mergingWindowSet;
    private boolean timerFeedBroken;

    @SuppressWarnings("unchecked")
    void listStateCreated(String name, FlowKVListState<K, ?, ?> state) {
        if (StoreSelector.WINDOW_CONTENTS.equals(name)) {
            windowContents = (FlowKVListState<K, Object, ?>) state;
        } else if (StoreSelector.MERGING_WINDOW_SET.equals(name)) {
            mergingWindowSet = state;
            state.cacheLists();
        }
        if (windowContents != null && mergingWindowSet != null) {
            mergingWindowSet.feedTriggerTimesTo(windowContents);
        }
    }

    /**
     * A timer was registered ({@code added}) or deleted: the trigger time of its window, if the
     * window contents are on the AUR store and no merging window set gives the times instead.
     * Elements of other priority queues are not timers and are ignored.
     */
    @SuppressWarnings("unchecked")
    public void timer(Object element, boolean added) {
        if (timerFeedBroken
                || !(element instanceof InternalTimer)
                || windowContents == null
                || mergingWindowSet != null
                || windowContents.pattern() != StorePattern.AUR) {
            return;
        }
        InternalTimer<K, Object> timer = (InternalTimer<K, Object>) element;
        try {
            windowContents.triggerTime(
                    timer.getKey(), timer.getNamespace(), timer.getTimestamp(), added);
        } catch (ClassCastException e) {
            // The timers' namespaces are not the windows of the contents state: no feed.
            timerFeedBroken = true;
            LOG.info(
                    "FlowKV: timers of this operator are not keyed by its window contents'"
                            + " windows ({}); the AUR store predicts from timestamps only",
                    e.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
