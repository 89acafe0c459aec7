package io.flowkv.nexmark;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The events generated in this JVM over time, sampled every {@link #SAMPLE_MS} while a {@code
 * --fail-after} run's job runs, and what they say about its recovery ({@link #analyze}).
 */
final class RestoreTimeline {

    static final long SAMPLE_MS = 50;

    /** The throughput before the failure is measured over this long before the hold. */
    static final long BEFORE_MS = 5_000;

    /** The throughput after the restore is measured over windows this long... */
    static final long STEADY_WINDOW_MS = 1_000;

    /** ...and is steady again once a window reaches this share of the throughput before. */
    static final double STEADY_SHARE = 0.9;

    private final LongSupplier events;
    private final LongConsumer onSample;
    private final Thread sampler;
    private long[] times = new long[1024];
    private long[] counts = new long[1024];
    private int size;

    /** Samples {@code events}, and hands each sample to {@code onSample} as well. */
    RestoreTimeline(LongSupplier events, LongConsumer onSample) {
        this.events = events;
        this.onSample = onSample;
        this.sampler = new Thread(this::sample, "restore-timeline");
        sampler.setDaemon(true);
    }

    void start() {
        sampler.start();
    }

    private void sample() {
        while (!Thread.currentThread().isInterrupted()) {
            long count = events.getAsLong();
            add(System.currentTimeMillis(), count);
            onSample.accept(count);
            try {
                Thread.sleep(SAMPLE_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void add(long timeMs, long count) {
        if (size == times.length) {
            times = Arrays.copyOf(times, size * 2);
            counts = Arrays.copyOf(counts, size * 2);
        }
        times[size] = timeMs;
        counts[size] = count;
        size++;
    }

    void stop() throws InterruptedException {
        sampler.interrupt();
        sampler.join();
    }

    /** What one failure and restore took. Times are ms after the failure; -1 when unknown. */
    record Recovery(
            long failedAtEvents,
            long checkpointId,
            long restoredBytes,
            long restoreMs,
            long initStateMs,
            long steadyMs,
            double rateBefore) {

        /** The fields {@link NexmarkRunner} appends to its result line. */
        String fields() {
            return String.format(
                    Locale.ROOT,
                    " failed_at_events=%d restored_checkpoint=%d restored_bytes=%d restore_ms=%d"
                            + " init_state_ms=%d steady_ms=%d rate_before=%.0f",
                    failedAtEvents,
                    checkpointId,
                    restoredBytes,
                    restoreMs,
                    initStateMs,
                    steadyMs,
                    rateBefore);
        }
    }

    /**
     * The recovery from a failure at {@code failedAtMs} (epoch ms), whose sources were held back
     * from {@code heldAtMs} for the checkpoint it restores ({@link FailOnce}), and whose restore
     * Flink reported as a span ending at {@code restoreEndMs}:
     *
     * <ul>
     *   <li>{@code restoreMs}: from the failure until every subtask had restored its state and ran
     *       again (the span's end), i.e. until the stateful operators could take their first
     *       record;
     *   <li>{@code steadyMs}: from the failure until the start of the first {@link
     *       #STEADY_WINDOW_MS}, after the restore, in which the sources generated events at {@link
     *       #STEADY_SHARE} of their rate over the {@link #BEFORE_MS} before the hold; -1 if no such
     *       window came before the job ended.
     * </ul>
     */
    synchronized Recovery analyze(
            long heldAtMs,
            long failedAtMs,
            long failedAtEvents,
            long restoreEndMs,
            long checkpointId,
            long restoredBytes,
            long initStateMs) {
        return analyze(
                Arrays.copyOf(times, size),
                Arrays.copyOf(counts, size),
                heldAtMs,
                failedAtMs,
                failedAtEvents,
                restoreEndMs,
                checkpointId,
                restoredBytes,
                initStateMs);
    }

    static Recovery analyze(
            long[] times,
            long[] counts,
            long heldAtMs,
            long failedAtMs,
            long failedAtEvents,
            long restoreEndMs,
            long checkpointId,
            long restoredBytes,
            long initStateMs) {
        double before = rate(times, counts, heldAtMs - BEFORE_MS, heldAtMs);
        long steady = -1;
        int end = 0;
        for (int start = 0; start < times.length && before > 0; start++) {
            if (times[start] < restoreEndMs) {
                continue;
            }
            while (end < times.length && times[end] < times[start] + STEADY_WINDOW_MS) {
                end++;
            }
            if (end == times.length) {
                break;
            }
            double rate = (counts[end] - counts[start]) * 1000.0 / (times[end] - times[start]);
            if (rate >= STEADY_SHARE * before) {
                steady = times[start] - failedAtMs;
                break;
            }
        }
        return new Recovery(
                failedAtEvents,
                checkpointId,
                restoredBytes,
                restoreEndMs - failedAtMs,
                initStateMs,
                steady,
                before);
    }

    /** Events per second between the samples nearest {@code fromMs} and {@code toMs}. */
    static double rate(long[] times, long[] counts, long fromMs, long toMs) {
        int a = -1;
        int b = -1;
        for (int i = 0; i < times.length; i++) {
            if (a < 0 && times[i] >= fromMs) {
                a = i;
            }
            if (times[i] <= toMs) {
                b = i;
            }
        }
        if (a < 0 || b <= a || times[b] == times[a]) {
            return 0;
        }
        return (counts[b] - counts[a]) * 1000.0 / (times[b] - times[a]);
    }
}
