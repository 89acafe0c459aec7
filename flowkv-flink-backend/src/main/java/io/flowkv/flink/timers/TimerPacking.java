package io.flowkv.flink.timers;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import javax.annotation.Nullable;

/**
 * How a timer whose key and namespace are plain numbers is kept as longs ({@link
 * PackedTimerPartition}): its timestamp, its key ({@code Long} or {@code Integer}), then its
 * namespace's fields (a {@link TimeWindow}'s start and end, a {@code Long}, or nothing for {@link
 * VoidNamespace} and {@link GlobalWindow}, whose instances are all equal). A queue holding such
 * timers keeps no timer object: the objects Flink hands it die young instead of being copied by
 * every young collection while their window is open, and a lookup compares longs in one array
 * instead of loading a timer, its key and its window. Objects are made again only for what leaves
 * the queue or is read from it.
 *
 * <p>Equality is the timer's own ({@link TimerHeapInternalTimer#equals}): timestamp, then key and
 * namespace by {@code equals}, which for these types is equality of the packed longs.
 */
final class TimerPacking {

    private enum KeyKind {
        LONG,
        INT
    }

    private enum NamespaceKind {
        TIME_WINDOW(2),
        LONG(1),
        VOID(0),
        GLOBAL(0);

        final int words;

        NamespaceKind(int words) {
            this.words = words;
        }
    }

    private final KeyKind key;
    private final NamespaceKind namespace;

    /** Longs per timer: timestamp, key, namespace fields. */
    final int stride;

    private TimerPacking(KeyKind key, NamespaceKind namespace) {
        this.key = key;
        this.namespace = namespace;
        this.stride = 2 + namespace.words;
    }

    /**
     * The packing of the timers {@code serializer} writes, or null when their key or namespace is
     * not one of the types above (those queues keep timer objects).
     */
    @Nullable
    static TimerPacking of(TypeSerializer<?> serializer) {
        if (!(serializer instanceof TimerSerializer)) {
            return null;
        }
        TimerSerializer<?, ?> timers = (TimerSerializer<?, ?>) serializer;
        KeyKind key = keyKind(timers.getKeySerializer());
        NamespaceKind namespace = namespaceKind(timers.getNamespaceSerializer());
        return key == null || namespace == null ? null : new TimerPacking(key, namespace);
    }

    @Nullable
    private static KeyKind keyKind(TypeSerializer<?> serializer) {
        if (serializer instanceof LongSerializer) {
            return KeyKind.LONG;
        }
        if (serializer instanceof IntSerializer) {
            return KeyKind.INT;
        }
        return null;
    }

    @Nullable
    private static NamespaceKind namespaceKind(TypeSerializer<?> serializer) {
        if (serializer instanceof TimeWindow.Serializer) {
            return NamespaceKind.TIME_WINDOW;
        }
        if (serializer instanceof LongSerializer) {
            return NamespaceKind.LONG;
        }
        if (serializer instanceof VoidNamespaceSerializer) {
            return NamespaceKind.VOID;
        }
        if (serializer instanceof GlobalWindow.Serializer) {
            return NamespaceKind.GLOBAL;
        }
        return null;
    }

    /** Writes {@code timer} at {@code records[at..at + stride)}. */
    void pack(TimerHeapInternalTimer<?, ?> timer, long[] records, int at) {
        records[at] = timer.getTimestamp();
        records[at + 1] = keyOf(timer);
        switch (namespace) {
            case TIME_WINDOW:
                TimeWindow window = (TimeWindow) timer.getNamespace();
                records[at + 2] = window.getStart();
                records[at + 3] = window.getEnd();
                break;
            case LONG:
                records[at + 2] = (Long) timer.getNamespace();
                break;
            default:
                checkNamespace(timer.getNamespace());
        }
    }

    /** Whether the timer packed at {@code at} equals {@code timer}. */
    boolean matches(TimerHeapInternalTimer<?, ?> timer, long[] records, int at) {
        if (records[at] != timer.getTimestamp() || records[at + 1] != keyOf(timer)) {
            return false;
        }
        switch (namespace) {
            case TIME_WINDOW:
                TimeWindow window = (TimeWindow) timer.getNamespace();
                return records[at + 2] == window.getStart() && records[at + 3] == window.getEnd();
            case LONG:
                return records[at + 2] == (Long) timer.getNamespace();
            default:
                checkNamespace(timer.getNamespace());
                return true;
        }
    }

    /** A hash of {@code timer}'s packed longs: what {@link #hash(long[], int)} gives them. */
    int hash(TimerHeapInternalTimer<?, ?> timer) {
        long h = mix(mix(0, timer.getTimestamp()), keyOf(timer));
        switch (namespace) {
            case TIME_WINDOW:
                TimeWindow window = (TimeWindow) timer.getNamespace();
                return finish(mix(mix(h, window.getStart()), window.getEnd()));
            case LONG:
                return finish(mix(h, (Long) timer.getNamespace()));
            default:
                return finish(h);
        }
    }

    /** The hash of the timer packed at {@code at}. */
    int hash(long[] records, int at) {
        long h = 0;
        for (int i = 0; i < stride; i++) {
            h = mix(h, records[at + i]);
        }
        return finish(h);
    }

    /** A new timer object equal to the one packed at {@code at}. */
    TimerHeapInternalTimer<Object, Object> unpack(long[] records, int at) {
        // Not a conditional expression: it would box both arms as Long.
        Object k;
        if (key == KeyKind.LONG) {
            k = Long.valueOf(records[at + 1]);
        } else {
            k = Integer.valueOf((int) records[at + 1]);
        }
        Object n;
        switch (namespace) {
            case TIME_WINDOW:
                n = new TimeWindow(records[at + 2], records[at + 3]);
                break;
            case LONG:
                n = Long.valueOf(records[at + 2]);
                break;
            case VOID:
                n = VoidNamespace.INSTANCE;
                break;
            default:
                n = GlobalWindow.get();
        }
        return new TimerHeapInternalTimer<>(records[at], k, n);
    }

    private long keyOf(TimerHeapInternalTimer<?, ?> timer) {
        Object k = timer.getKey();
        return key == KeyKind.LONG ? (Long) k : (Integer) k;
    }

    private void checkNamespace(Object n) {
        boolean fits =
                namespace == NamespaceKind.VOID
                        ? n instanceof VoidNamespace
                        : n instanceof GlobalWindow;
        if (!fits) {
            throw new ClassCastException(
                    "a timer of namespace "
                            + n.getClass().getName()
                            + " in a queue of "
                            + namespace
                            + " namespaces");
        }
    }

    /**
     * One long more into the hash: a multiply after every XOR, the timestamp's too, so that
     * differences in two fields cannot cancel (timestamp and key XORed together before any multiply
     * made every pair with equal {@code timestamp ^ key} collide: timers of one window registered
     * at several timestamps for several keys did, a trigger's periodic timers).
     */
    private static long mix(long h, long v) {
        return (h ^ v) * 0x9E3779B97F4A7C15L;
    }

    private static int finish(long h) {
        return (int) (h ^ (h >>> 29) ^ (h >>> 47));
    }

    @Override
    public String toString() {
        return "TimerPacking{key=" + key + ", namespace=" + namespace + "}";
    }
}
