package io.flowkv.flink.snapshot;

import org.apache.flink.annotation.Internal;

/**
 * When each store instance of a backend flushes its write buffer between checkpoints, so that a
 * checkpoint's synchronous part does not flush every instance's whole buffer at the same instant
 * (the latency spike that ShadowSync, ../shared/papers/002, is about).
 *
 * <p>The interval is learnt from the checkpoints themselves: the time between the last two. After a
 * checkpoint, the {@code parts} instances times {@code rounds} pre-flushes are spread evenly over
 * the next interval, instance after instance: pre-flush {@code j} falls at {@code (j + 1/2) /
 * (parts * rounds)} of it and flushes instance {@code j % parts}. At the barrier an instance then
 * holds what arrived since its last pre-flush, on average {@code 1 / (2 * rounds)} of an interval,
 * and every pause before it flushes one instance's share. Nothing is scheduled before the second
 * checkpoint, or with {@code rounds} 0.
 */
@Internal
public final class PreFlushSchedule {
    public static final int NONE = -1;

    private final int rounds;
    private long lastCheckpointNanos = Long.MIN_VALUE;
    private long intervalNanos;
    private int parts;
    private int next;
    private int total;

    public PreFlushSchedule(int rounds) {
        if (rounds < 0) {
            throw new IllegalArgumentException("rounds must be >= 0, was " + rounds);
        }
        this.rounds = rounds;
    }

    /** A checkpoint's synchronous part ran at {@code nowNanos}; {@code parts} instances exist. */
    public void checkpointed(long nowNanos, int parts) {
        if (lastCheckpointNanos != Long.MIN_VALUE && nowNanos > lastCheckpointNanos) {
            intervalNanos = nowNanos - lastCheckpointNanos;
        }
        lastCheckpointNanos = nowNanos;
        this.parts = parts;
        this.next = 0;
        this.total = intervalNanos > 0 ? parts * rounds : 0;
    }

    /**
     * The instance whose pre-flush is due at {@code nowNanos}, or {@link #NONE}; each due pre-flush
     * is returned once. Pre-flushes missed while the task was busy elsewhere are skipped to the
     * latest one due, so a late task flushes one instance, not a burst of them.
     */
    public int due(long nowNanos) {
        if (next >= total) {
            return NONE;
        }
        long elapsed = nowNanos - lastCheckpointNanos;
        // The last pre-flush whose time has come: floor(elapsed / step - 1/2).
        long latest = Math.floorDiv(2 * elapsed * total - intervalNanos, 2 * intervalNanos);
        if (latest < next) {
            return NONE;
        }
        int j = (int) Math.min(latest, total - 1);
        next = j + 1;
        return j % parts;
    }

    /** The learnt interval between checkpoints, ns; 0 before the second checkpoint. */
    long intervalNanos() {
        return intervalNanos;
    }
}
