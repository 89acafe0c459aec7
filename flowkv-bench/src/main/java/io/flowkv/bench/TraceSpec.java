package io.flowkv.bench;

import java.util.Locale;

/**
 * The size and shape of one trace. Times are in milliseconds of event time.
 *
 * @param pattern which generator
 * @param keys distinct keys
 * @param events events (one per append or per sliding-window assignment group)
 * @param windowLength tumbling/sliding window size, or the session gap for AUR
 * @param windowsPerEvent sliding windows each event falls into (RMW; 1 = tumbling)
 * @param eventsPerWindow events per tumbling window (AAR) or per slide (RMW)
 * @param valueLength bytes per appended value (AAR, AUR)
 * @param zipfExponent skew of key activity (AUR)
 * @param activityEpochs how many times the set of active keys drifts over the trace (AUR), so that
 *     long sessions of hot keys end
 * @param watermarkInterval events between watermarks (AUR)
 * @param seed seed of every random choice
 */
public record TraceSpec(
        Pattern pattern,
        int keys,
        int events,
        long windowLength,
        int windowsPerEvent,
        int eventsPerWindow,
        int valueLength,
        double zipfExponent,
        int activityEpochs,
        int watermarkInterval,
        long seed) {

    public static final long DEFAULT_SEED = 0x5EED_F10BL;

    /** Named sizes: {@code tiny} for tests, {@code quick} for a 2-minute run, {@code full}. */
    public static TraceSpec of(Pattern pattern, String size, long seed) {
        int scale =
                switch (size.toLowerCase(Locale.ROOT)) {
                    case "tiny" -> 0;
                    case "quick" -> 1;
                    case "full" -> 2;
                    default ->
                            throw new IllegalArgumentException(
                                    "size must be one of tiny, quick, full, was " + size);
                };
        return switch (pattern) {
            case AAR ->
                    new TraceSpec(
                            pattern,
                            pick(scale, 500, 40_000, 100_000),
                            pick(scale, 6_000, 600_000, 3_000_000),
                            60_000,
                            1,
                            pick(scale, 2_000, 300_000, 1_000_000),
                            100,
                            0,
                            1,
                            1,
                            seed);
            case RMW ->
                    new TraceSpec(
                            pattern,
                            pick(scale, 500, 30_000, 1_000_000),
                            pick(scale, 6_000, 100_000, 420_000),
                            60_000,
                            4,
                            pick(scale, 1_000, 20_000, 60_000),
                            0,
                            0,
                            1,
                            1,
                            seed);
            case AUR ->
                    new TraceSpec(
                            pattern,
                            pick(scale, 300, 100_000, 100_000),
                            pick(scale, 8_000, 600_000, 4_000_000),
                            pick(scale, 200, 20_000, 20_000),
                            1,
                            1,
                            100,
                            0.8,
                            pick(scale, 3, 2, 2),
                            pick(scale, 50, 200, 200),
                            seed);
        };
    }

    public TraceSpec withEvents(int n) {
        return new TraceSpec(
                pattern,
                keys,
                n,
                windowLength,
                windowsPerEvent,
                eventsPerWindow,
                valueLength,
                zipfExponent,
                activityEpochs,
                watermarkInterval,
                seed);
    }

    private static int pick(int scale, int tiny, int quick, int full) {
        return scale == 0 ? tiny : scale == 1 ? quick : full;
    }

    @Override
    public String toString() {
        return switch (pattern) {
            case AAR ->
                    String.format(
                            "aar: %,d keys, %,d events, tumbling windows of %,d events, %d B values",
                            keys, events, eventsPerWindow, valueLength);
            case RMW ->
                    String.format(
                            "rmw: %,d keys, %,d events, sliding windows (%d per event) sliding every %,d"
                                    + " events, 8-32 B aggregates",
                            keys, events, windowsPerEvent, eventsPerWindow);
            case AUR ->
                    String.format(
                            "aur: %,d keys (zipf %.2f, %d activity epochs), %,d events (1 per ms),"
                                    + " session gap %,d ms, %d B values",
                            keys, zipfExponent, activityEpochs, events, windowLength, valueLength);
        };
    }
}
