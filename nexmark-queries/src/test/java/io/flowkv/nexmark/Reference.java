package io.flowkv.nexmark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

/**
 * The queries' results computed with plain loops over the event list: no Flink, no windows API.
 * Each method returns the records {@link Queries} documents for the query, as {@code long[4]}.
 */
final class Reference {

    private Reference() {}

    static List<long[]> compute(Query query, List<Event> events, QueryParams params) {
        switch (query) {
            case Q5:
            case Q5_APPEND:
                return q5(bids(events), params);
            case Q7:
                return q7(bids(events), params);
            case Q7_SESSION:
                return perSession(bids(events), params, Reference::highestBid);
            case Q8:
                return q8(events, params);
            case Q11:
                return perSession(
                        bids(events),
                        params,
                        (bidder, s, e, prices) -> new long[] {bidder, e, prices.length, s});
            case Q11_MEDIAN:
                return perSession(
                        bids(events),
                        params,
                        (bidder, s, e, prices) -> {
                            long[] sorted = prices.clone();
                            Arrays.sort(sorted);
                            return new long[] {
                                bidder, e, sorted[(sorted.length - 1) / 2], sorted.length
                            };
                        });
            case Q12:
                return q12(bids(events), params);
            case DEDUP:
                return dedup(bids(events));
            case MAP_JOIN:
                return mapJoin(events, params);
            case TIMERS:
                return timers(bids(events), params);
            case COUNT:
                return count(bids(events));
            case CUSTOM:
                return custom(bids(events), params);
            default:
                throw new IllegalArgumentException("Unknown query " + query);
        }
    }

    private static List<long[]> count(List<Bid> bids) {
        Map<Long, Long> seen = new HashMap<>();
        List<long[]> out = new ArrayList<>();
        for (Bid b : bids) {
            long n = seen.merge(b.auction(), 1L, Long::sum);
            if (n % GeneralWorkloads.COUNT_WINDOW == 0) {
                out.add(
                        new long[] {
                            b.auction(),
                            n / GeneralWorkloads.COUNT_WINDOW,
                            GeneralWorkloads.COUNT_WINDOW,
                            0
                        });
            }
        }
        return out;
    }

    private static List<long[]> dedup(List<Bid> bids) {
        Set<Long> seen = new HashSet<>();
        List<long[]> out = new ArrayList<>();
        for (Bid b : bids) {
            long pair = GeneralWorkloads.pair(b.auction(), b.bidder());
            if (seen.add(pair)) {
                out.add(new long[] {pair, 0, 0, 0});
            }
        }
        return out;
    }

    private static List<long[]> timers(List<Bid> bids, QueryParams params) {
        long gap = params.gap().toMillis();
        Map<Long, TreeSet<Long>> armed = new HashMap<>();
        for (Bid b : bids) {
            armed.computeIfAbsent(
                            GeneralWorkloads.pair(b.auction(), b.bidder()), k -> new TreeSet<>())
                    .add(b.dateTime() + gap);
        }
        List<long[]> out = new ArrayList<>();
        armed.forEach(
                (pair, times) -> {
                    long n = 0;
                    for (long t : times) {
                        out.add(new long[] {pair, t, ++n, 0});
                    }
                });
        return out;
    }

    private static List<long[]> mapJoin(List<Event> events, QueryParams params) {
        long period = params.window().toMillis();
        Map<Long, Auction> auctions = new HashMap<>();
        // (auction, period end) -> (time, bidder) -> highest price
        Map<List<Long>, Map<List<Long>, Long>> periods = new HashMap<>();
        for (Event e : events) {
            if (e instanceof Auction a) {
                auctions.put(a.id(), a);
            } else if (e instanceof Bid b) {
                periods.computeIfAbsent(
                                List.of(b.auction(), Queries.periodEnd(b.dateTime(), period)),
                                k -> new HashMap<>())
                        .merge(List.of(b.dateTime(), b.bidder()), b.price(), Math::max);
            }
        }
        List<long[]> out = new ArrayList<>();
        periods.forEach(
                (id, bids) -> {
                    long auction = id.get(0);
                    long end = id.get(1);
                    Auction a = auctions.get(auction);
                    long forgetAt =
                            a == null
                                    ? Long.MIN_VALUE
                                    : Queries.periodEnd(a.expires(), period) + period;
                    long seller = end <= forgetAt ? a.seller() : 0;
                    long highest =
                            bids.values().stream().mapToLong(Long::longValue).max().orElse(0);
                    out.add(new long[] {auction, end, bids.size(), highest * 1_000_003L + seller});
                });
        return out;
    }

    /** Order-independent fingerprint, as {@link Checksum} computes it in the job. */
    static Fingerprint fingerprint(List<long[]> records) {
        long sum = 0;
        for (long[] r : records) {
            sum += Checksum.hash(r[0], r[1], r[2], r[3]);
        }
        return new Fingerprint(records.size(), sum);
    }

    private static List<Bid> bids(List<Event> events) {
        List<Bid> bids = new ArrayList<>();
        for (Event e : events) {
            if (e instanceof Bid b) {
                bids.add(b);
            }
        }
        return bids;
    }

    private static List<long[]> q5(List<Bid> bids, QueryParams params) {
        long size = params.window().toMillis();
        long slide = params.slide().toMillis();
        // window end -> auction -> count
        Map<Long, Map<Long, Long>> counts = new HashMap<>();
        for (Bid b : bids) {
            long ts = b.dateTime();
            long lastStart = ts - Math.floorMod(ts, slide);
            for (long start = lastStart; start > ts - size; start -= slide) {
                counts.computeIfAbsent(start + size, k -> new HashMap<>())
                        .merge(b.auction(), 1L, Long::sum);
            }
        }
        List<long[]> out = new ArrayList<>();
        counts.forEach(
                (end, perAuction) -> {
                    long max =
                            perAuction.values().stream().mapToLong(Long::longValue).max().orElse(0);
                    perAuction.forEach(
                            (auction, count) -> {
                                if (count == max) {
                                    out.add(new long[] {end, auction, count, 0});
                                }
                            });
                });
        return out;
    }

    private static List<long[]> q7(List<Bid> bids, QueryParams params) {
        long size = params.window().toMillis();
        return highestBidPerWindow(
                bids, b -> b.dateTime() - Math.floorMod(b.dateTime(), size) + size);
    }

    /** q7 in windows shifted per bidder ({@link GeneralWorkloads.StaggeredWindows}). */
    private static List<long[]> custom(List<Bid> bids, QueryParams params) {
        long size = params.window().toMillis();
        return highestBidPerWindow(
                bids,
                b ->
                        GeneralWorkloads.StaggeredWindows.start(b.bidder(), b.dateTime(), size)
                                + size);
    }

    /**
     * {@code (bidder, window end, highest price, bids)} per bidder and the window ending at {@code
     * end}.
     */
    private static List<long[]> highestBidPerWindow(List<Bid> bids, ToLongFunction<Bid> end) {
        // (bidder, window end) -> [max, count]
        Map<List<Long>, long[]> windows = new HashMap<>();
        for (Bid b : bids) {
            long[] w =
                    windows.computeIfAbsent(
                            List.of(b.bidder(), end.applyAsLong(b)),
                            k -> new long[] {Long.MIN_VALUE, 0});
            w[0] = Math.max(w[0], b.price());
            w[1]++;
        }
        List<long[]> out = new ArrayList<>();
        windows.forEach((k, w) -> out.add(new long[] {k.get(0), k.get(1), w[0], w[1]}));
        return out;
    }

    private static long[] highestBid(long bidder, long start, long end, long[] prices) {
        return new long[] {bidder, end, Arrays.stream(prices).max().orElseThrow(), prices.length};
    }

    /** What a session query emits for one session. */
    interface SessionResult {
        long[] of(long bidder, long start, long end, long[] prices);
    }

    /**
     * Sessions per bidder: a bid at {@code t} opens {@code [t, t + gap)}; windows that touch or
     * overlap merge, as Flink's {@code TimeWindow.intersects} does.
     */
    private static List<long[]> perSession(
            List<Bid> bids, QueryParams params, SessionResult result) {
        long gap = params.gap().toMillis();
        Map<Long, List<Bid>> byBidder = new TreeMap<>();
        for (Bid b : bids) {
            byBidder.computeIfAbsent(b.bidder(), k -> new ArrayList<>()).add(b);
        }
        List<long[]> out = new ArrayList<>();
        byBidder.forEach(
                (bidder, list) -> {
                    list.sort((x, y) -> Long.compare(x.dateTime(), y.dateTime()));
                    int from = 0;
                    long start = list.get(0).dateTime();
                    long end = start + gap;
                    for (int i = 1; i <= list.size(); i++) {
                        if (i == list.size() || list.get(i).dateTime() > end) {
                            long[] prices = new long[i - from];
                            for (int j = from; j < i; j++) {
                                prices[j - from] = list.get(j).price();
                            }
                            out.add(result.of(bidder, start, end, prices));
                            if (i < list.size()) {
                                from = i;
                                start = list.get(i).dateTime();
                                end = start + gap;
                            }
                        } else {
                            end = Math.max(end, list.get(i).dateTime() + gap);
                        }
                    }
                });
        return out;
    }

    private static List<long[]> q8(List<Event> events, QueryParams params) {
        long size = params.window().toMillis();
        Map<List<Long>, List<Person>> persons = new HashMap<>();
        for (Event e : events) {
            if (e instanceof Person p) {
                persons.computeIfAbsent(
                                List.of(p.id(), Math.floorDiv(p.dateTime(), size)),
                                k -> new ArrayList<>())
                        .add(p);
            }
        }
        List<long[]> out = new ArrayList<>();
        for (Event e : events) {
            if (e instanceof Auction a) {
                List<Person> sellers =
                        persons.getOrDefault(
                                List.of(a.seller(), Math.floorDiv(a.dateTime(), size)), List.of());
                for (Person p : sellers) {
                    out.add(new long[] {p.id(), a.id(), p.dateTime(), a.dateTime()});
                }
            }
        }
        return out;
    }

    private static List<long[]> q12(List<Bid> bids, QueryParams params) {
        long period = params.window().toMillis();
        Map<Long, TreeMap<Long, Long>> perBidder = new HashMap<>();
        for (Bid b : bids) {
            perBidder
                    .computeIfAbsent(b.bidder(), k -> new TreeMap<>())
                    .merge(Math.floorDiv(b.dateTime(), period), 1L, Long::sum);
        }
        List<long[]> out = new ArrayList<>();
        perBidder.forEach(
                (bidder, periods) -> {
                    long running = 0;
                    for (Map.Entry<Long, Long> p : periods.entrySet()) {
                        running += p.getValue();
                        out.add(new long[] {bidder, p.getKey() * period + period - 1, running, 0});
                    }
                });
        return out;
    }
}
