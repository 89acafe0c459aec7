package io.flowkv.flink.state;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * A cached merging window set of time windows: its {@code Tuple2<TimeWindow, TimeWindow>} pairs
 * (window, state window) as four longs each, in one array.
 *
 * <p>A session window operator reads its key's set at every element and replaces it whenever a
 * session grows. Cached as objects, the set is a chain of dependent loads (list, pair, two windows)
 * that has usually left the CPU caches since the key's last element, and every replacement is a new
 * chain that the cache keeps alive, so young collections copy it. Here a read is one array and
 * builds fresh pairs, which die young, and a replacement of the same size overwrites the array in
 * place.
 *
 * <p>{@link #copy} hands out fresh objects; the instance itself stays in the cache, where it is
 * read as a list by what writes cached lists back (eviction, snapshots, queryable state).
 */
@Internal
final class TimeWindowPairs extends AbstractList<Tuple2<TimeWindow, TimeWindow>>
        implements RandomAccess {
    private static final int LONGS_PER_PAIR = 4;

    /** Per pair: the window's start and end, then its state window's start and end. */
    private final long[] bounds;

    private TimeWindowPairs(int pairs) {
        this.bounds = new long[pairs * LONGS_PER_PAIR];
    }

    /**
     * Whether every element of {@code values} is a {@code Tuple2} of two {@link TimeWindow}s,
     * exactly those classes (a subclass could carry more than its bounds), and there is at least
     * one.
     */
    static boolean fits(List<?> values) {
        if (values.isEmpty()) {
            return false;
        }
        for (Object value : values) {
            if (value == null || value.getClass() != Tuple2.class) {
                return false;
            }
            Tuple2<?, ?> pair = (Tuple2<?, ?>) value;
            if (pair.f0 == null
                    || pair.f0.getClass() != TimeWindow.class
                    || pair.f1 == null
                    || pair.f1.getClass() != TimeWindow.class) {
                return false;
            }
        }
        return true;
    }

    /** The pairs of {@code values}, which {@link #fits}. */
    static TimeWindowPairs of(List<?> values) {
        TimeWindowPairs pairs = new TimeWindowPairs(values.size());
        pairs.fill(values);
        return pairs;
    }

    /**
     * Takes the pairs of {@code values} (which {@link #fits}) in place of this one's, if they are
     * as many; false, and unchanged, if not.
     */
    boolean refill(List<?> values) {
        if (values.size() * LONGS_PER_PAIR != bounds.length) {
            return false;
        }
        fill(values);
        return true;
    }

    private void fill(List<?> values) {
        int i = 0;
        for (Object value : values) {
            Tuple2<?, ?> pair = (Tuple2<?, ?>) value;
            TimeWindow window = (TimeWindow) pair.f0;
            TimeWindow stateWindow = (TimeWindow) pair.f1;
            bounds[i] = window.getStart();
            bounds[i + 1] = window.getEnd();
            bounds[i + 2] = stateWindow.getStart();
            bounds[i + 3] = stateWindow.getEnd();
            i += LONGS_PER_PAIR;
        }
    }

    /** An unmodifiable list of fresh pairs equal to these. */
    @SuppressWarnings("unchecked")
    <V> List<V> copy() {
        int size = size();
        if (size == 1) {
            return (List<V>) List.of(get(0));
        }
        Object[] pairs = new Object[size];
        for (int i = 0; i < size; i++) {
            pairs[i] = get(i);
        }
        return (List<V>) List.of(pairs);
    }

    @Override
    public Tuple2<TimeWindow, TimeWindow> get(int index) {
        int i = index * LONGS_PER_PAIR;
        if (index < 0 || i >= bounds.length) {
            throw new IndexOutOfBoundsException("Index " + index + ", size " + size());
        }
        return new Tuple2<>(
                new TimeWindow(bounds[i], bounds[i + 1]),
                new TimeWindow(bounds[i + 2], bounds[i + 3]));
    }

    @Override
    public int size() {
        return bounds.length / LONGS_PER_PAIR;
    }
}
