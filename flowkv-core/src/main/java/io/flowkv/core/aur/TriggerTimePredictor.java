package io.flowkv.core.aur;

/**
 * Estimates when a window will be read (its estimated trigger time, ETT) from the window's bytes
 * and the largest timestamp appended to it so far ({@code Long.MIN_VALUE} if none: Flink's list
 * state passes no element timestamps, so in Flink a predictor sees the window's serialized bytes
 * only). The AUR store calls it on the first append of a window and on every append that raises the
 * window's maximum timestamp, unless the engine has set the window's trigger time explicitly
 * ({@link AurStore#setTriggerTime}, timers). ETTs are in the time of the engine's timers (event
 * time for event-time windows).
 *
 * <p>A predictor must not promise a time earlier than the real trigger: predictive batch read only
 * pays off if windows are not read before their ETT. Return {@link #UNKNOWN} when no estimate is
 * possible (count or global windows); such windows are never prefetched.
 */
@FunctionalInterface
public interface TriggerTimePredictor {
    long UNKNOWN = Long.MAX_VALUE;

    long estimate(byte[] window, long maxTimestamp);

    /**
     * The default: a window serialized as Flink's {@code TimeWindow.Serializer} writes it (16
     * bytes: start then end, big-endian longs) is taken for a session's state window, whose length
     * is the session gap, so ETT = max timestamp + gap. Anything else is {@link #UNKNOWN}.
     */
    static TriggerTimePredictor sessionGap() {
        return SessionGapPredictor.INSTANCE;
    }

    /** Never estimates: every window is read on demand unless its ETT is set explicitly. */
    static TriggerTimePredictor unknown() {
        return (window, maxTimestamp) -> UNKNOWN;
    }
}
