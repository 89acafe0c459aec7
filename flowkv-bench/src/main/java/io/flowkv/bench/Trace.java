package io.flowkv.bench;

import java.util.Arrays;

/**
 * A recorded sequence of store operations, generated once and replayed against every target so that
 * all of them do exactly the same work. Held column-wise in primitive arrays: replaying a trace
 * allocates nothing per operation.
 *
 * <p>A window is identified by its start; its serialized form is Flink's {@code TimeWindow} layout
 * (start, end as big-endian longs) with {@code end = start + windowLength}.
 */
public final class Trace {
    /** Append one value (of {@link #valueLength} bytes) to the list of (key, window). */
    static final byte APPEND = 0;

    /** Read the whole list of (key, window), as a window fire does. */
    static final byte GET_LIST = 1;

    /** Read the aggregate of (key, window), as a window fire does. */
    static final byte GET_VALUE = 2;

    /** Drop (key, window), as {@code clear()} after a fire does. */
    static final byte REMOVE = 3;

    /** Read the aggregate of (key, window), fold one event into it, write it back. */
    static final byte UPDATE = 4;

    /** Tell the store the estimated trigger time of (key, window); only FlowKV AUR uses it. */
    static final byte TRIGGER = 5;

    final Pattern pattern;
    final String description;
    final long windowLength;
    final int valueLength;
    final int size;
    final byte[] ops;
    final int[] keys;
    final long[] windows;

    /** Event timestamp for {@link #APPEND}, trigger time for {@link #TRIGGER}, else 0. */
    final long[] times;

    private Trace(Builder b, String description) {
        this.pattern = b.pattern;
        this.description = description;
        this.windowLength = b.windowLength;
        this.valueLength = b.valueLength;
        this.size = b.size;
        this.ops = Arrays.copyOf(b.ops, b.size);
        this.keys = Arrays.copyOf(b.keys, b.size);
        this.windows = Arrays.copyOf(b.windows, b.size);
        this.times = Arrays.copyOf(b.times, b.size);
    }

    public Pattern pattern() {
        return pattern;
    }

    public String description() {
        return description;
    }

    public int size() {
        return size;
    }

    /** Store calls the trace makes: an update is a get and a put; trigger hints are not counted. */
    public long storeOperations() {
        long n = 0;
        for (int i = 0; i < size; i++) {
            byte op = ops[i];
            n += op == UPDATE ? 2 : op == TRIGGER ? 0 : 1;
        }
        return n;
    }

    /** Bytes of values appended or put over the whole trace (what a store must absorb). */
    public long bytesWritten() {
        long n = 0;
        for (int i = 0; i < size; i++) {
            if (ops[i] == APPEND) {
                n += valueLength;
            } else if (ops[i] == UPDATE) {
                n += aggregateLength(keys[i]);
            }
        }
        return n;
    }

    /** RMW aggregates are 8 to 32 bytes, fixed per key, like small accumulators of mixed types. */
    static int aggregateLength(int key) {
        return 8 * (1 + (key & 3));
    }

    static final class Builder {
        private final Pattern pattern;
        private final long windowLength;
        private final int valueLength;
        private int size;
        private byte[] ops = new byte[1 << 16];
        private int[] keys = new int[1 << 16];
        private long[] windows = new long[1 << 16];
        private long[] times = new long[1 << 16];

        Builder(Pattern pattern, long windowLength, int valueLength) {
            this.pattern = pattern;
            this.windowLength = windowLength;
            this.valueLength = valueLength;
        }

        Builder add(byte op, int key, long window, long time) {
            if (size == ops.length) {
                int capacity = size * 2;
                ops = Arrays.copyOf(ops, capacity);
                keys = Arrays.copyOf(keys, capacity);
                windows = Arrays.copyOf(windows, capacity);
                times = Arrays.copyOf(times, capacity);
            }
            ops[size] = op;
            keys[size] = key;
            windows[size] = window;
            times[size] = time;
            size++;
            return this;
        }

        Trace build(String description) {
            return new Trace(this, description);
        }
    }
}
