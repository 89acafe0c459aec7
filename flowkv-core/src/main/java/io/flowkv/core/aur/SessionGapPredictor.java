package io.flowkv.core.aur;

/**
 * ETT = max timestamp + (end - start) of a 16-byte big-endian {@code TimeWindow}: for a session
 * window of gap g the state window is the first element's window {@code [t, t + g)}, so its length
 * is the gap, and the session cannot close before its last element's timestamp plus the gap.
 */
final class SessionGapPredictor implements TriggerTimePredictor {
    static final SessionGapPredictor INSTANCE = new SessionGapPredictor();

    private SessionGapPredictor() {}

    @Override
    public long estimate(byte[] window, long maxTimestamp) {
        if (window.length != 16 || maxTimestamp == Long.MIN_VALUE) {
            return UNKNOWN;
        }
        long start = readLongBE(window, 0);
        long end = readLongBE(window, 8);
        long gap = end - start;
        if (gap <= 0 || end < start) {
            return UNKNOWN;
        }
        long ett = maxTimestamp + gap;
        // Saturate instead of wrapping: an overflowing estimate means "not in any useful future".
        return ett < maxTimestamp ? UNKNOWN : ett;
    }

    static long readLongBE(byte[] b, int o) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[o + i] & 0xFFL);
        }
        return v;
    }
}
