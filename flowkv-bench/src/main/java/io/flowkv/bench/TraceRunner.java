package io.flowkv.bench;

import io.flowkv.core.ListStore;
import io.flowkv.core.Store;
import io.flowkv.core.StoreStats;
import io.flowkv.core.TriggerTimes;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.ValueStore;

import java.io.IOException;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Replays a {@link Trace} against one {@link Target}'s store. Keys, windows and values are rebuilt
 * from the trace into reused scratch arrays, so the replay itself allocates nothing and costs every
 * target the same. Everything read is folded into a checksum: equal checksums mean the targets
 * returned the same bytes in the same order.
 */
public final class TraceRunner {
    private static final int DISK_SAMPLES = 16;

    private final byte[] key = new byte[8];
    private final byte[] window = new byte[16];
    private final byte[][] aggregates = new byte[33][];
    private final CRC32C crc = new CRC32C();
    private byte[] value = new byte[0];
    private long valuesRead;
    private long bytesRead;
    private byte[] aggregate;
    private boolean aggregateFound;

    private final ValueConsumer checksum =
            (buffer, offset, length) -> {
                crc.update(buffer, offset, length);
                valuesRead++;
                bytesRead += length;
            };

    private final ValueConsumer aggregateReader =
            (buffer, offset, length) -> {
                if (length != aggregate.length) {
                    throw new IllegalStateException(
                            "aggregate of " + length + " bytes, expected " + aggregate.length);
                }
                System.arraycopy(buffer, offset, aggregate, 0, length);
                aggregateFound = true;
                valuesRead++;
                bytesRead += length;
            };

    /** What one replay did and how long it took. */
    public record Result(
            long storeOperations,
            long nanos,
            long checksum,
            long valuesRead,
            long bytesRead,
            long peakDiskBytes,
            double hitRatio,
            double readAmplification,
            StoreStats stats) {

        public double opsPerSecond() {
            return storeOperations * 1e9 / nanos;
        }
    }

    public Result run(Trace trace, Target target) throws IOException {
        reset(trace);
        long peakDisk = 0;
        int chunk = Math.max(1, trace.size / DISK_SAMPLES);
        long elapsed = 0;
        for (int from = 0; from < trace.size; from += chunk) {
            long start = System.nanoTime();
            replay(trace, target.store(), from, Math.min(trace.size, from + chunk));
            elapsed += System.nanoTime() - start;
            peakDisk = Math.max(peakDisk, target.diskBytes());
        }
        StoreStats stats = target.store().stats();
        long sum =
                (crc.getValue() * 0x9E3779B97F4A7C15L + valuesRead) * 0x9E3779B97F4A7C15L
                        + bytesRead;
        return new Result(
                trace.storeOperations(),
                elapsed,
                sum,
                valuesRead,
                bytesRead,
                peakDisk,
                stats.hitRatio(),
                stats.readAmplification(),
                stats);
    }

    /** Clears the checksum and counters before a replay of {@code trace}. */
    public void reset(Trace trace) {
        crc.reset();
        valuesRead = 0;
        bytesRead = 0;
        if (value.length != trace.valueLength) {
            value = new byte[trace.valueLength];
        }
    }

    /**
     * Replays trace records {@code [from, to)}; returns the store operations made. A trace leaves
     * its stores empty (every window fired and cleared), so replaying it again from the start on
     * the same store is valid.
     */
    public long replay(Trace trace, Store store, int from, int to) throws IOException {
        ListStore lists = store instanceof ListStore l ? l : null;
        ValueStore values = store instanceof ValueStore v ? v : null;
        TriggerTimes triggers = store instanceof TriggerTimes t ? t : null;
        long ops = 0;
        for (int i = from; i < to; i++) {
            encodeKey(trace.keys[i]);
            encodeWindow(trace.windows[i], trace.windowLength);
            switch (trace.ops[i]) {
                case Trace.APPEND -> {
                    fill(value, i);
                    lists.append(key, window, value, trace.times[i]);
                    ops++;
                }
                case Trace.TRIGGER -> {
                    if (triggers != null) {
                        triggers.setTriggerTime(key, window, trace.times[i]);
                    }
                }
                case Trace.GET_LIST -> {
                    if (!lists.get(key, window, checksum)) {
                        throw new IllegalStateException(
                                "no list at op " + i + " of a fired window");
                    }
                    crc.update(0x7C);
                    ops++;
                }
                case Trace.GET_VALUE -> {
                    if (!values.get(key, window, checksum)) {
                        throw new IllegalStateException(
                                "no value at op " + i + " of a fired window");
                    }
                    ops++;
                }
                case Trace.REMOVE -> {
                    if (lists != null) {
                        lists.remove(key, window);
                    } else {
                        values.remove(key, window);
                    }
                    ops++;
                }
                case Trace.UPDATE -> {
                    update(values, i, trace.keys[i]);
                    ops += 2;
                }
                default -> throw new IllegalStateException("unknown op " + trace.ops[i]);
            }
        }
        return ops;
    }

    /** An aggregating state's add(): read the accumulator, fold the event in, write it back. */
    private void update(ValueStore target, int op, int k) throws IOException {
        int length = Trace.aggregateLength(k);
        aggregate = aggregates[length];
        if (aggregate == null) {
            aggregate = aggregates[length] = new byte[length];
        }
        aggregateFound = false;
        target.get(key, window, aggregateReader);
        if (aggregateFound) {
            crc.update(aggregate, 0, length);
        } else {
            Arrays.fill(aggregate, (byte) 0);
        }
        long x = mix(op);
        for (int lane = 0; lane < length; lane += 8) {
            long acc = readLong(aggregate, lane);
            writeLong(aggregate, lane, acc * 31 + (x >>> lane));
        }
        target.put(key, window, aggregate);
    }

    private void encodeKey(int k) {
        writeLong(key, 0, k);
    }

    private void encodeWindow(long start, long length) {
        writeLong(window, 0, start);
        writeLong(window, 8, start + length);
    }

    /** Deterministic value bytes of the append at trace position {@code op}. */
    private static void fill(byte[] v, int op) {
        long x = mix(op);
        int i = 0;
        for (; i + 8 <= v.length; i += 8) {
            writeLong(v, i, x);
            x = x * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L;
        }
        for (; i < v.length; i++) {
            v[i] = (byte) (x >>> (i & 7) * 8);
        }
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    private static void writeLong(byte[] b, int pos, long v) {
        for (int i = 7; i >= 0; i--) {
            b[pos + i] = (byte) v;
            v >>>= 8;
        }
    }

    private static long readLong(byte[] b, int pos) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[pos + i] & 0xFF);
        }
        return v;
    }
}
