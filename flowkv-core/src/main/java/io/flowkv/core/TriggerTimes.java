package io.flowkv.core;

/**
 * When the engine will read a window: what a store that predicts its reads (the AUR store) is told,
 * so that it loads the windows due next in one batch. The times are event times in milliseconds. A
 * store without prediction does not implement this.
 */
public interface TriggerTimes {

    /** The engine's exact trigger time of (key, window), replacing any estimate. */
    void setTriggerTime(byte[] key, byte[] window, long triggerTime);

    /**
     * A timer registered at {@code timerTime} for a window the store may hold; the earliest offered
     * timer of a window is its trigger time.
     */
    void offerTriggerTime(byte[] key, byte[] window, long timerTime);

    /** A timer of (key, window) at {@code timerTime} was deleted. */
    void withdrawTriggerTime(byte[] key, byte[] window, long timerTime);

    /** The trigger time the store holds for (key, window), or {@code Long.MAX_VALUE} if none. */
    long triggerTime(byte[] key, byte[] window);
}
