package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;
import io.flowkv.nexmark.Workload;
import io.flowkv.nexmark.sql.SqlQuery;

import java.util.Locale;

/**
 * Events and window lengths per query and scale, and the estimate of the window state each run
 * holds at its peak.
 *
 * <p>The estimate counts serialized bytes from the generator's event sizes (the generator pads
 * persons, auctions and bids to 200, 500 and 100 bytes on average; 1 person, 3 auctions and 46 bids
 * per 50 events), without the stores' own overhead:
 *
 * <ul>
 *   <li>Q7: the bids of one tumbling window, {@code min(events, window * rate) * 46/50 * 100 B}.
 *   <li>Q7-Session, Q11-Median: every bid whose bidder's session is still open; a session stays
 *       open until {@code gap} after its bidder's last bid, so at least the bids of the last {@code
 *       gap * rate} events: {@code min(events, gap * rate) * 46/50 * 100 B}.
 *   <li>Q8: the persons and auctions of one tumbling window, each with the join's one-byte tag:
 *       {@code min(events, window * rate) * (201 + 3 * 501) / 50 B}.
 *   <li>Q5, Q5-Append: the first stage's counters, one per auction and sliding window, 32 B each (8
 *       B key, 16 B window, 8 B count); about {@code 3/50} of the events in a window open an
 *       auction, plus the 100 in flight, and every auction is in {@code window / slide} windows.
 *       Q5-Append's second stage buffers one {@code (auction, window end, count)} tuple (24 B) per
 *       auction of a first-stage window.
 *   <li>Q11: one 32 B counter per open session (bidders seen in the last {@code gap}: one person
 *       per 50 events plus the 1,000 active ones). Q12: one 40 B accumulator per bidder seen.
 * </ul>
 *
 * <p>At {@code large} the append queries are sized to hold {@code stateFactor} times the managed
 * memory: Q7 in one tumbling window that spans the whole run, Q7-Session and Q11-Median with a gap
 * that spans the whole run (so the peak is at the end), Q8 likewise. Q5-Append's state is per
 * auction counters, which grow with {@code window / slide} updates per bid; reaching the factor
 * would need hundreds of updates per bid, so its plan is a fixed, expensive-but-feasible one and
 * its estimate is printed against the budget like the others.
 *
 * <p>The SQL queries' windows are fixed in their SQL text (10 s, sliding by 2 s for HOP), and their
 * regular joins, group aggregates, dedup and TopN keep state that grows with the events; they get
 * {@link #SQL_EVENTS} at {@code large} (or {@code --events}) and no estimate: their report shows
 * the state measured on disk instead. {@code --event-rate} raises their events per second of event
 * time, so that each fixed window holds more events and more state.
 */
final class ScalePlan {

    static final long EVENT_RATE = 100_000;
    static final double BID_SHARE = 46.0 / 50;
    static final double BID_BYTES = 100;
    static final double Q8_BYTES_PER_EVENT = (201 + 3 * 501) / 50.0;
    static final double AUCTIONS_PER_EVENT = 3.0 / 50;
    static final long AUCTIONS_IN_FLIGHT = 100;
    static final long ACTIVE_PEOPLE = 1000;

    private ScalePlan() {}

    /** One query's run parameters. */
    record QueryPlan(
            Workload query,
            long events,
            long eventRate,
            long windowMs,
            long slideMs,
            long gapMs,
            long stateEstimateBytes) {

        String describe(long managedBytes) {
            if (query instanceof SqlQuery) {
                return String.format(
                        Locale.ROOT,
                        "%-10s events=%,d rate=%,d/s of event time (windows as in the SQL; state"
                                + " measured, not estimated)",
                        query.id(),
                        events,
                        eventRate);
            }
            return String.format(
                    Locale.ROOT,
                    "%-10s events=%,d window=%s slide=%s gap=%s est. state %s = %.2fx managed",
                    query.id(),
                    events,
                    seconds(windowMs),
                    seconds(slideMs),
                    seconds(gapMs),
                    MemoryBudget.mb(stateEstimateBytes),
                    (double) stateEstimateBytes / managedBytes);
        }

        private static String seconds(long ms) {
            return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
        }
    }

    static boolean isAppend(Query q) {
        return switch (q) {
            case Q7, Q7_SESSION, Q8, Q11_MEDIAN, Q5_APPEND -> true;
            default -> false;
        };
    }

    /** Events of a SQL query's run at {@code large}. */
    static final long SQL_EVENTS = 10_000_000;

    /**
     * The plan of {@code w} at {@code scale} ("small" or "large"); {@code eventsOverride} > 0 sets
     * the events of a run.
     */
    static QueryPlan plan(
            Workload w, String scale, long managedBytes, double stateFactor, long eventsOverride) {
        return plan(w, scale, managedBytes, stateFactor, eventsOverride, 0);
    }

    /**
     * As above; {@code sqlEventRate} > 0 sets a SQL query's events per second of event time (its
     * windows are fixed in the SQL, so a higher rate puts more events and more state in each).
     */
    static QueryPlan plan(
            Workload w,
            String scale,
            long managedBytes,
            double stateFactor,
            long eventsOverride,
            long sqlEventRate) {
        if (!scale.equals("small") && !scale.equals("large")) {
            throw new IllegalArgumentException(
                    "--scale must be small or large, got '" + scale + "'");
        }
        if (w instanceof SqlQuery) {
            long events =
                    eventsOverride > 0
                            ? eventsOverride
                            : scale.equals("large") ? SQL_EVENTS : 1_000_000;
            long rate = sqlEventRate > 0 ? sqlEventRate : EVENT_RATE;
            return new QueryPlan(w, events, rate, 10_000, 2_000, 10_000, 0);
        }
        Query q = (Query) w;
        long windowMs = 10_000;
        long slideMs = 5_000;
        long gapMs = 10_000;
        long events;
        switch (scale) {
            case "small" -> events = eventsOverride > 0 ? eventsOverride : 1_000_000;
            default -> { // "large", as checked above
                double target = stateFactor * managedBytes;
                switch (q) {
                    case Q7 -> {
                        windowMs = alignedWindowSeconds(target / (BID_SHARE * BID_BYTES)) * 1000;
                        events = windowMs * EVENT_RATE / 1000;
                    }
                    case Q8 -> {
                        windowMs = alignedWindowSeconds(target / Q8_BYTES_PER_EVENT) * 1000;
                        events = windowMs * EVENT_RATE / 1000;
                    }
                    case Q7_SESSION, Q11_MEDIAN -> {
                        gapMs = secondsFor(target / (BID_SHARE * BID_BYTES)) * 1000;
                        events = gapMs * EVENT_RATE / 1000;
                    }
                    case Q5_APPEND, Q5 -> {
                        windowMs = 60_000;
                        slideMs = 10_000;
                        events = 6_000_000;
                    }
                    // General-state workloads, sized for their keys, not for --state-factor.
                    case DEDUP -> events = 175_000_000; // about 50M (auction, bidder) pairs
                    case MAP_JOIN -> {
                        windowMs = 720_000; // hot auctions buffer 10k+ bids per period
                        events = 144_000_000;
                    }
                    case TIMERS -> {
                        gapMs = 450_000; // about 40M timers armed at once
                        events = 90_000_000;
                    }
                    case COUNT -> events = 40_000_000;
                    case CUSTOM -> {
                        // A bidder's open window holds half a window's bids on average: twice
                        // q7's window holds the target, and two windows let every bidder fire.
                        windowMs = secondsFor(2 * target / (BID_SHARE * BID_BYTES)) * 1000;
                        events = 2 * windowMs * EVENT_RATE / 1000;
                    }
                    default -> events = 10_000_000;
                }
                if (eventsOverride > 0) {
                    events = eventsOverride;
                }
            }
        }
        return new QueryPlan(
                q,
                events,
                EVENT_RATE,
                windowMs,
                slideMs,
                gapMs,
                estimate(q, events, EVENT_RATE, windowMs, slideMs, gapMs));
    }

    private static long secondsFor(double events) {
        return (long) Math.ceil(events / EVENT_RATE);
    }

    /**
     * Seconds of a tumbling window holding at least {@code events} that starts with the stream:
     * Flink aligns tumbling windows to multiples of their size since the epoch, and the generator's
     * base time is a midnight, so the size must divide a day.
     */
    static long alignedWindowSeconds(double events) {
        long seconds = Math.max(1, secondsFor(events));
        while (DAY_SECONDS % seconds != 0) {
            seconds++;
        }
        return seconds;
    }

    static final long DAY_SECONDS = 86_400;

    /** Elements per count window of the {@code count} workload (GeneralWorkloads.COUNT_WINDOW). */
    static final int COUNT_WINDOW = 20;

    /** Distinct (auction, bidder) pairs per event (measured: 2.94M pairs in 10M events). */
    static final double PAIRS_PER_EVENT = 0.29;

    /**
     * The estimated peak window state in bytes; see the class comment. 0 for a SQL query (not
     * estimated).
     */
    static long estimate(
            Workload w, long events, long rate, long windowMs, long slideMs, long gapMs) {
        if (!(w instanceof Query q)) {
            return 0;
        }
        double inWindow = Math.min(events, (double) windowMs * rate / 1000);
        double inGap = Math.min(events, (double) gapMs * rate / 1000);
        double bytes =
                switch (q) {
                    case Q7 -> inWindow * BID_SHARE * BID_BYTES;
                    case CUSTOM -> inWindow * BID_SHARE * BID_BYTES / 2;
                    case Q7_SESSION, Q11_MEDIAN -> inGap * BID_SHARE * BID_BYTES;
                    case Q8 -> inWindow * Q8_BYTES_PER_EVENT;
                    case Q5, Q5_APPEND -> {
                        double auctions = inWindow * AUCTIONS_PER_EVENT + AUCTIONS_IN_FLIGHT;
                        double panes = Math.ceil((double) windowMs / slideMs);
                        double counters = auctions * panes * 32;
                        yield q == Query.Q5_APPEND ? counters + auctions * 24 : counters;
                    }
                    case Q11 -> (inGap / 50 + ACTIVE_PEOPLE) * 32;
                    case Q12 -> ((double) events / 50 + ACTIVE_PEOPLE) * 40;
                    case DEDUP -> events * PAIRS_PER_EVENT * 40;
                    case MAP_JOIN -> inWindow * BID_SHARE * 56;
                    case TIMERS -> inGap * BID_SHARE * 64 + events * PAIRS_PER_EVENT * 40;
                    // Bids of windows not yet full: on average half a window per auction.
                    case COUNT ->
                            Math.min(
                                            events * BID_SHARE,
                                            events * AUCTIONS_PER_EVENT * COUNT_WINDOW / 2.0)
                                    * BID_BYTES;
                };
        return (long) bytes;
    }
}
