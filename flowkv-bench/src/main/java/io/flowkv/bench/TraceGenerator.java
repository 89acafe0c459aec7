package io.flowkv.bench;

import java.util.Arrays;
import java.util.BitSet;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * Generates the traces a Flink window operator would send to its "window-contents" state, with the
 * timer and watermark logic done here (offline) so that replay measures only the store.
 * Deterministic for a given {@link TraceSpec}.
 */
public final class TraceGenerator {
    private TraceGenerator() {}

    public static Trace generate(TraceSpec spec) {
        return switch (spec.pattern()) {
            case AAR -> aar(spec);
            case RMW -> rmw(spec);
            case AUR -> aur(spec);
        };
    }

    /**
     * Tumbling windows, events in time order, uniform keys. When the watermark passes a window's
     * end its timers fire one key at a time (in registration order, as Flink's heap timer queue
     * does for equal timestamps): read the key's list, then clear it.
     */
    static Trace aar(TraceSpec spec) {
        SplittableRandom random = new SplittableRandom(spec.seed());
        long length = spec.windowLength();
        Trace.Builder trace = new Trace.Builder(Pattern.AAR, length, spec.valueLength());
        KeySet inWindow = new KeySet(spec.keys());
        long window = 0;
        for (int i = 0; i < spec.events(); i++) {
            long w = (i / spec.eventsPerWindow()) * length;
            if (w != window) {
                inWindow.fire(trace, Trace.GET_LIST, window);
                window = w;
            }
            int key = random.nextInt(spec.keys());
            long timestamp = w + (i % spec.eventsPerWindow()) * length / spec.eventsPerWindow();
            trace.add(Trace.APPEND, key, w, timestamp);
            inWindow.add(key);
        }
        inWindow.fire(trace, Trace.GET_LIST, window);
        return trace.build(spec.toString());
    }

    /**
     * Sliding windows ({@code windowsPerEvent} of them per event): each event reads, folds and
     * writes the aggregate of every window it falls into. A window fires when the watermark (the
     * time of the first event of a later slide) passes its end: get then clear per key.
     */
    static Trace rmw(TraceSpec spec) {
        SplittableRandom random = new SplittableRandom(spec.seed());
        int perEvent = spec.windowsPerEvent();
        long length = spec.windowLength();
        long slide = length / perEvent;
        Trace.Builder trace = new Trace.Builder(Pattern.RMW, length, 0);
        // Slot of the window starting at slide s: s mod (perEvent + 1); at most perEvent + 1 live.
        KeySet[] slots = new KeySet[perEvent + 1];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new KeySet(spec.keys());
        }
        long currentSlide = 0;
        for (int i = 0; i < spec.events(); i++) {
            long s = i / spec.eventsPerWindow();
            while (currentSlide < s) {
                currentSlide++;
                long fired = currentSlide - perEvent;
                slots[slotOf(fired, slots.length)].fire(trace, Trace.GET_VALUE, fired * slide);
            }
            int key = random.nextInt(spec.keys());
            // Flink's SlidingEventTimeWindows assigns the latest window first.
            for (int j = 0; j < perEvent; j++) {
                long start = s - j;
                trace.add(Trace.UPDATE, key, start * slide, 0);
                slots[slotOf(start, slots.length)].add(key);
            }
        }
        for (long fired = currentSlide - perEvent + 1; fired <= currentSlide; fired++) {
            slots[slotOf(fired, slots.length)].fire(trace, Trace.GET_VALUE, fired * slide);
        }
        return trace.build(spec.toString());
    }

    private static int slotOf(long slide, int slots) {
        return (int) Math.floorMod(slide, (long) slots);
    }

    /**
     * Session windows with gap g over keys of Zipf-distributed activity; one event per millisecond.
     * The set of active keys drifts {@code activityEpochs} times over the trace (the rank to key
     * mapping rotates) so that the sessions of hot keys end. Each event appends to its key's state
     * window (the first window of the session, fixed while the session grows) and moves the
     * session's trigger time to {@code lastEvent + g - 1}. Every {@code watermarkInterval} events
     * the watermark catches up and the sessions it passed fire in trigger-time order.
     */
    static Trace aur(TraceSpec spec) {
        SplittableRandom random = new SplittableRandom(spec.seed());
        int keys = spec.keys();
        long gap = spec.windowLength();
        Trace.Builder trace = new Trace.Builder(Pattern.AUR, gap, spec.valueLength());
        double[] cdf = zipfCdf(keys, spec.zipfExponent());
        int[] keyOfRank = shuffledIdentity(keys, random);
        long[] sessionStart = new long[keys];
        long[] lastEvent = new long[keys];
        Arrays.fill(sessionStart, -1);
        // Trigger times packed as ett << 21 | key; entries of sessions that grew are stale.
        PriorityQueue<Long> timers = new PriorityQueue<>();
        int epochLength = Math.max(1, spec.events() / spec.activityEpochs());
        int drift = keys / 7 + 1;
        for (int i = 0; i < spec.events(); i++) {
            long now = i;
            if (i % spec.watermarkInterval() == 0) {
                fireSessions(trace, timers, sessionStart, lastEvent, gap, now);
            }
            int rank = zipfRank(cdf, random.nextDouble());
            int key = keyOfRank[(int) ((rank + (long) (i / epochLength) * drift) % keys)];
            if (sessionStart[key] >= 0 && now >= lastEvent[key] + gap) {
                // The session ended but the watermark has not caught up with it yet; Flink would
                // keep both sessions until it does. Fire the old one now so a key has at most one
                // live session, which keeps the trace simple and reads every byte appended.
                trace.add(Trace.GET_LIST, key, sessionStart[key], 0);
                trace.add(Trace.REMOVE, key, sessionStart[key], 0);
                sessionStart[key] = -1;
            }
            if (sessionStart[key] < 0) {
                sessionStart[key] = now;
            }
            lastEvent[key] = now;
            long ett = now + gap - 1;
            trace.add(Trace.APPEND, key, sessionStart[key], now);
            trace.add(Trace.TRIGGER, key, sessionStart[key], ett);
            timers.add(ett << 21 | key);
        }
        fireSessions(trace, timers, sessionStart, lastEvent, gap, Long.MAX_VALUE >> 22);
        return trace.build(spec.toString());
    }

    private static void fireSessions(
            Trace.Builder trace,
            PriorityQueue<Long> timers,
            long[] sessionStart,
            long[] lastEvent,
            long gap,
            long watermark) {
        while (!timers.isEmpty() && (timers.peek() >>> 21) <= watermark) {
            long timer = timers.poll();
            int key = (int) (timer & ((1 << 21) - 1));
            long ett = timer >>> 21;
            if (sessionStart[key] >= 0 && lastEvent[key] + gap - 1 == ett) {
                trace.add(Trace.GET_LIST, key, sessionStart[key], 0);
                trace.add(Trace.REMOVE, key, sessionStart[key], 0);
                sessionStart[key] = -1;
            }
        }
    }

    private static double[] zipfCdf(int n, double exponent) {
        double[] cdf = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += 1.0 / Math.pow(i + 1, exponent);
            cdf[i] = sum;
        }
        for (int i = 0; i < n; i++) {
            cdf[i] /= sum;
        }
        return cdf;
    }

    private static int zipfRank(double[] cdf, double u) {
        int i = Arrays.binarySearch(cdf, u);
        return Math.min(cdf.length - 1, i >= 0 ? i : -i - 1);
    }

    private static int[] shuffledIdentity(int n, SplittableRandom random) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        return a;
    }

    /**
     * Keys with data in one window. They fire as Flink's timer queue fires equal timestamps: key
     * group by key group (it keeps a heap per key group and drains the head group while timestamps
     * tie), and in the order they were first added within a key group. Key groups are taken in
     * ascending order here; Flink's order across key groups is its heap's, which no store can
     * exploit beyond the grouping.
     */
    private static final class KeySet {
        private final BitSet present;
        private int[] order = new int[1024];
        private int size;

        KeySet(int keys) {
            present = new BitSet(keys);
        }

        void add(int key) {
            if (!present.get(key)) {
                present.set(key);
                if (size == order.length) {
                    order = Arrays.copyOf(order, size * 2);
                }
                order[size++] = key;
            }
        }

        void fire(Trace.Builder trace, byte read, long window) {
            long[] byGroup = new long[size];
            for (int i = 0; i < size; i++) {
                byGroup[i] = (long) RocksDbStore.keyGroup(order[i]) << 32 | i;
            }
            Arrays.sort(byGroup);
            for (long entry : byGroup) {
                int key = order[(int) entry];
                trace.add(read, key, window, 0);
                trace.add(Trace.REMOVE, key, window, 0);
            }
            present.clear();
            size = 0;
        }
    }
}
