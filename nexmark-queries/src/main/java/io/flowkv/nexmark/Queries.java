package io.flowkv.nexmark;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.JoinFunction;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.util.Arrays;

/**
 * The queries as DataStream jobs. Every query ends in a stream of {@link Output} records, four
 * longs whose meaning each query's method documents; {@code Reference} in the tests computes the
 * same records with plain loops. Every operator has a stable uid (also its name), so a savepoint
 * maps back onto the job and {@code state.backend.flowkv.pattern-override} can name it.
 */
public final class Queries {

    /** The result record of every query: four longs. */
    public static final class Output {
        public static final TypeInformation<Tuple4<Long, Long, Long, Long>> TYPE =
                Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG);

        private Output() {}

        public static Tuple4<Long, Long, Long, Long> of(long a, long b, long c, long d) {
            return Tuple4.of(a, b, c, d);
        }
    }

    private static final TypeInformation<Tuple3<Long, Long, Long>> AUCTION_COUNT_TYPE =
            Types.TUPLE(Types.LONG, Types.LONG, Types.LONG);

    private Queries() {}

    /** The generated events with their timestamps and bounded-out-of-orderness watermarks. */
    public static DataStream<Event> events(
            StreamExecutionEnvironment env,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params) {
        WatermarkStrategy<Event> watermarks =
                WatermarkStrategy.<Event>forBoundedOutOfOrderness(params.outOfOrderness())
                        .withTimestampAssigner((event, previous) -> event.dateTime());
        return env.fromSource(new NexmarkSource(generator, maxRate), watermarks, "nexmark-source")
                .uid("nexmark-source");
    }

    /**
     * The whole job: source, {@code query}, and the {@link Checksum} of its output into a
     * discarding sink.
     */
    public static void buildJob(
            StreamExecutionEnvironment env,
            Query query,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params) {
        buildJob(env, query, generator, maxRate, params, null);
    }

    /**
     * As {@link #buildJob(StreamExecutionEnvironment, Query, GeneratorConfig, double,
     * QueryParams)}, with a {@link LatencyRecorder} writing to {@code latencyPrefix} before the
     * checksum when it is not null.
     */
    public static void buildJob(
            StreamExecutionEnvironment env,
            Query query,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params,
            String latencyPrefix) {
        buildJob(env, query, generator, maxRate, params, latencyPrefix, false);
    }

    /**
     * As {@link #buildJob(StreamExecutionEnvironment, Query, GeneratorConfig, double, QueryParams,
     * String)}, with a {@link FailOnce} after the source when {@code failOnce}.
     */
    static void buildJob(
            StreamExecutionEnvironment env,
            Query query,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params,
            String latencyPrefix,
            boolean failOnce) {
        DataStream<Event> events = events(env, generator, maxRate, params);
        if (failOnce) {
            events =
                    events.map(new FailOnce(), events.getType()).uid("fail-once").name("fail-once");
        }
        DataStream<Tuple4<Long, Long, Long, Long>> output = build(query, events, params);
        if (latencyPrefix != null) {
            int field = LatencyRecorder.windowEndField(query);
            if (field < 0) {
                throw new IllegalArgumentException(
                        query.id() + "'s output has no window end to measure latency against");
            }
            output =
                    output.map(new LatencyRecorder(latencyPrefix, field), Output.TYPE)
                            .uid("latency")
                            .name("latency");
        }
        output.flatMap(new Checksum(), Types.LONG)
                .uid("checksum")
                .name("checksum")
                .sinkTo(new DiscardingSink<>())
                .uid("discard")
                .name("discard");
    }

    /** Builds {@code query} over {@code events}. */
    public static DataStream<Tuple4<Long, Long, Long, Long>> build(
            Query query, DataStream<Event> events, QueryParams params) {
        switch (query) {
            case Q5:
                return q5(events, params, false);
            case Q5_APPEND:
                return q5(events, params, true);
            case Q7:
                return q7(events, params, false);
            case Q7_SESSION:
                return q7(events, params, true);
            case Q8:
                return q8(events, params);
            case Q11:
                return q11(events, params);
            case Q11_MEDIAN:
                return q11Median(events, params);
            case Q12:
                return q12(events, params);
            case DEDUP:
                return GeneralWorkloads.dedup(events);
            case MAP_JOIN:
                return GeneralWorkloads.mapJoin(events, params);
            case TIMERS:
                return GeneralWorkloads.timers(events, params);
            case COUNT:
                return GeneralWorkloads.count(events);
            case CUSTOM:
                return GeneralWorkloads.custom(events, params);
            default:
                throw new IllegalArgumentException("Unknown query " + query);
        }
    }

    private static DataStream<Bid> bids(DataStream<Event> events) {
        return events.flatMap(new OfType<>(Bid.class)).returns(Bid.class).uid("bids").name("bids");
    }

    /**
     * Q5 / Q5-Append: bids per auction in sliding windows (size {@code window}, slide {@code
     * slide}), then per window the auctions with the most bids. Output {@code (window end, auction,
     * bid count, 0)}, one record per auction tied for the most bids.
     *
     * <p>The first stage emits {@code (auction, window end, count)} at the window's max timestamp,
     * so a tumbling window of one slide in the second stage holds exactly one first-stage window.
     * Q5 aggregates it incrementally (RMW); Q5-Append buffers it and scans it on firing (AAR).
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> q5(
            DataStream<Event> events, QueryParams params, boolean append) {
        String prefix = append ? "q5-append" : "q5";
        DataStream<Tuple3<Long, Long, Long>> counts =
                bids(events)
                        .keyBy(Bid::auction, Types.LONG)
                        .window(SlidingEventTimeWindows.of(params.window(), params.slide()))
                        .aggregate(
                                new CountBids(),
                                new EmitAuctionCount(),
                                Types.LONG,
                                Types.LONG,
                                AUCTION_COUNT_TYPE)
                        .uid(prefix + "-count")
                        .name(prefix + "-count");
        var perWindow =
                counts.keyBy(c -> c.f1, Types.LONG)
                        .window(TumblingEventTimeWindows.of(params.slide()));
        if (append) {
            return perWindow
                    .process(new TopAuctionsOnFire(), Output.TYPE)
                    .uid(prefix + "-top")
                    .name(prefix + "-top");
        }
        return perWindow
                .aggregate(
                        new TopAuctions(),
                        new EmitTopAuctions(),
                        TypeInformation.of(long[].class),
                        TypeInformation.of(long[].class),
                        Output.TYPE)
                .uid(prefix + "-top")
                .name(prefix + "-top");
    }

    /**
     * Q7 / Q7-Session: the highest bid per bidder in tumbling windows of {@code window} (or
     * sessions with {@code gap}), every bid buffered until the window fires. Output {@code (bidder,
     * window end, highest price, bid count)}.
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> q7(
            DataStream<Event> events, QueryParams params, boolean session) {
        String name = session ? "q7-session-window" : "q7-window";
        var keyed = bids(events).keyBy(Bid::bidder, Types.LONG);
        var windowed =
                session
                        ? keyed.window(EventTimeSessionWindows.withGap(params.gap()))
                        : keyed.window(TumblingEventTimeWindows.of(params.window()));
        return windowed.process(new HighestBid(), Output.TYPE).uid(name).name(name);
    }

    /**
     * Q8: persons joined with the auctions they open ({@code person.id == auction.seller}) in
     * tumbling windows of {@code window}. Output {@code (person id, auction id, person time,
     * auction time)}.
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> q8(
            DataStream<Event> events, QueryParams params) {
        DataStream<Person> persons =
                events.flatMap(new OfType<>(Person.class))
                        .returns(Person.class)
                        .uid("persons")
                        .name("persons");
        DataStream<Auction> auctions =
                events.flatMap(new OfType<>(Auction.class))
                        .returns(Auction.class)
                        .uid("auctions")
                        .name("auctions");
        return persons.join(auctions)
                .where(Person::id, Types.LONG)
                .equalTo(Auction::seller, Types.LONG)
                .window(TumblingEventTimeWindows.of(params.window()))
                .apply(new NewSellerJoin(), Output.TYPE)
                .uid("q8-join")
                .name("q8-join");
    }

    /**
     * Q11: bids per bidder session ({@code gap}), counted incrementally. Output {@code (bidder,
     * session end, bid count, session start)}.
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> q11(
            DataStream<Event> events, QueryParams params) {
        return bids(events)
                .keyBy(Bid::bidder, Types.LONG)
                .window(EventTimeSessionWindows.withGap(params.gap()))
                .aggregate(
                        new CountBids(),
                        new EmitSessionCount(),
                        Types.LONG,
                        Types.LONG,
                        Output.TYPE)
                .uid("q11-window")
                .name("q11-window");
    }

    /**
     * Q11-Median: the median bid price per bidder session ({@code gap}), the lower middle of the
     * sorted prices. Output {@code (bidder, session end, median price, bid count)}.
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> q11Median(
            DataStream<Event> events, QueryParams params) {
        return bids(events)
                .keyBy(Bid::bidder, Types.LONG)
                .window(EventTimeSessionWindows.withGap(params.gap()))
                .process(new MedianPrice(), Output.TYPE)
                .uid("q11-median-window")
                .name("q11-median-window");
    }

    /**
     * Q12: the running bid count per bidder in a global window, emitted every {@code window} of
     * event time: at each period end {@code T} at which the bidder has bids in the period, output
     * {@code (bidder, T, bids with timestamp <= T, 0)}.
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> q12(
            DataStream<Event> events, QueryParams params) {
        long period = params.window().toMillis();
        return bids(events)
                .keyBy(Bid::bidder, Types.LONG)
                .window(GlobalWindows.create())
                .trigger(new PeriodicEventTimeTrigger(period))
                .aggregate(
                        new PeriodCounts(period),
                        new EmitRunningCount(period),
                        TypeInformation.of(long[].class),
                        TypeInformation.of(long[].class),
                        Output.TYPE)
                .uid("q12-window")
                .name("q12-window");
    }

    // ---------------------------------------------------------------- functions

    /** Keeps the events of one type (bids, persons or auctions). */
    static final class OfType<T extends Event> implements FlatMapFunction<Event, T> {
        private static final long serialVersionUID = 1L;
        private final Class<T> type;

        OfType(Class<T> type) {
            this.type = type;
        }

        @Override
        public void flatMap(Event event, Collector<T> out) {
            if (type.isInstance(event)) {
                out.collect(type.cast(event));
            }
        }
    }

    /** Counts bids. */
    static final class CountBids implements AggregateFunction<Bid, Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Bid bid, Long count) {
            return count + 1;
        }

        @Override
        public Long getResult(Long count) {
            return count;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }

    /** {@code (auction, window end, count)}. */
    static final class EmitAuctionCount
            extends ProcessWindowFunction<Long, Tuple3<Long, Long, Long>, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long auction,
                Context context,
                Iterable<Long> counts,
                Collector<Tuple3<Long, Long, Long>> out) {
            long count = counts.iterator().next();
            out.collect(Tuple3.of(auction, context.window().getEnd(), count));
        }
    }

    /**
     * The auctions with the highest count, incrementally: {@code [max count, auction...]}, a new
     * array on every change so no backend ever sees an accumulator mutated in place.
     */
    static final class TopAuctions
            implements AggregateFunction<Tuple3<Long, Long, Long>, long[], long[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public long[] createAccumulator() {
            return new long[] {-1};
        }

        @Override
        public long[] add(Tuple3<Long, Long, Long> value, long[] acc) {
            long count = value.f2;
            if (count > acc[0]) {
                return new long[] {count, value.f0};
            } else if (count == acc[0]) {
                long[] more = Arrays.copyOf(acc, acc.length + 1);
                more[acc.length] = value.f0;
                return more;
            }
            return acc;
        }

        @Override
        public long[] getResult(long[] acc) {
            return acc;
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            if (a[0] != b[0]) {
                return a[0] > b[0] ? a : b;
            }
            long[] both = Arrays.copyOf(a, a.length + b.length - 1);
            System.arraycopy(b, 1, both, a.length, b.length - 1);
            return both;
        }
    }

    /** One record per top auction of the window. */
    static final class EmitTopAuctions
            extends ProcessWindowFunction<
                    long[], Tuple4<Long, Long, Long, Long>, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long windowEnd,
                Context context,
                Iterable<long[]> results,
                Collector<Tuple4<Long, Long, Long, Long>> out) {
            long[] top = results.iterator().next();
            for (int i = 1; i < top.length; i++) {
                out.collect(Output.of(windowEnd, top[i], top[0], 0));
            }
        }
    }

    /** Q5-Append's second stage: scans the buffered counts of the window. */
    static final class TopAuctionsOnFire
            extends ProcessWindowFunction<
                    Tuple3<Long, Long, Long>, Tuple4<Long, Long, Long, Long>, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long windowEnd,
                Context context,
                Iterable<Tuple3<Long, Long, Long>> counts,
                Collector<Tuple4<Long, Long, Long, Long>> out) {
            long max = -1;
            for (Tuple3<Long, Long, Long> c : counts) {
                max = Math.max(max, c.f2);
            }
            for (Tuple3<Long, Long, Long> c : counts) {
                if (c.f2 == max) {
                    out.collect(Output.of(windowEnd, c.f0, max, 0));
                }
            }
        }
    }

    /** {@code (bidder, window end, highest price, bid count)} over the buffered bids. */
    static final class HighestBid
            extends ProcessWindowFunction<Bid, Tuple4<Long, Long, Long, Long>, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long bidder,
                Context context,
                Iterable<Bid> bids,
                Collector<Tuple4<Long, Long, Long, Long>> out) {
            long max = Long.MIN_VALUE;
            long count = 0;
            for (Bid bid : bids) {
                max = Math.max(max, bid.price());
                count++;
            }
            out.collect(Output.of(bidder, context.window().getEnd(), max, count));
        }
    }

    /** {@code (person id, auction id, person time, auction time)}. */
    static final class NewSellerJoin
            implements JoinFunction<Person, Auction, Tuple4<Long, Long, Long, Long>> {
        private static final long serialVersionUID = 1L;

        @Override
        public Tuple4<Long, Long, Long, Long> join(Person person, Auction auction) {
            return Output.of(person.id(), auction.id(), person.dateTime(), auction.dateTime());
        }
    }

    /** {@code (bidder, session end, count, session start)}. */
    static final class EmitSessionCount
            extends ProcessWindowFunction<Long, Tuple4<Long, Long, Long, Long>, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long bidder,
                Context context,
                Iterable<Long> counts,
                Collector<Tuple4<Long, Long, Long, Long>> out) {
            TimeWindow w = context.window();
            out.collect(Output.of(bidder, w.getEnd(), counts.iterator().next(), w.getStart()));
        }
    }

    /** {@code (bidder, session end, median price, count)}: median = lower middle element. */
    static final class MedianPrice
            extends ProcessWindowFunction<Bid, Tuple4<Long, Long, Long, Long>, Long, TimeWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long bidder,
                Context context,
                Iterable<Bid> bids,
                Collector<Tuple4<Long, Long, Long, Long>> out) {
            long[] prices = new long[16];
            int n = 0;
            for (Bid bid : bids) {
                if (n == prices.length) {
                    prices = Arrays.copyOf(prices, n * 2);
                }
                prices[n++] = bid.price();
            }
            Arrays.sort(prices, 0, n);
            out.collect(Output.of(bidder, context.window().getEnd(), prices[(n - 1) / 2], n));
        }
    }

    /**
     * Fires the global window at the end of every period of event time in which the key received an
     * element, and records the period end where {@link EmitRunningCount} can read it.
     */
    static final class PeriodicEventTimeTrigger extends Trigger<Object, GlobalWindow> {
        private static final long serialVersionUID = 1L;

        static final ValueStateDescriptor<Long> FIRE_TIME =
                new ValueStateDescriptor<>("q12-fire-time", Types.LONG);

        private final long period;

        PeriodicEventTimeTrigger(long period) {
            this.period = period;
        }

        @Override
        public TriggerResult onElement(
                Object element, long timestamp, GlobalWindow window, TriggerContext ctx) {
            ctx.registerEventTimeTimer(periodEnd(timestamp, period));
            return TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onEventTime(long time, GlobalWindow window, TriggerContext ctx)
                throws Exception {
            ctx.getPartitionedState(FIRE_TIME).update(time);
            return TriggerResult.FIRE;
        }

        @Override
        public TriggerResult onProcessingTime(long time, GlobalWindow window, TriggerContext ctx) {
            return TriggerResult.CONTINUE;
        }

        @Override
        public void clear(GlobalWindow window, TriggerContext ctx) {
            ctx.getPartitionedState(FIRE_TIME).clear();
        }
    }

    /** The last timestamp of the period holding {@code timestamp}. */
    static long periodEnd(long timestamp, long period) {
        return Math.floorDiv(timestamp, period) * period + period - 1;
    }

    /**
     * Bid counts by period: {@code [period0, count0, period1, count1, ...]}, periods ascending.
     * Bids reach the window before the watermark fires the periods before theirs, by an amount that
     * depends on when the sources emit watermarks (wall-clock time), so no period may be folded
     * away on the data alone; {@link EmitRunningCount} sums the periods up to the one that fired.
     * The array stays short because a NEXMark bidder is active only for a limited stretch of the
     * stream (the last 1000 people, or a hot bidder for 100 people).
     */
    static final class PeriodCounts implements AggregateFunction<Bid, long[], long[]> {
        private static final long serialVersionUID = 1L;

        private final long period;

        PeriodCounts(long period) {
            this.period = period;
        }

        @Override
        public long[] createAccumulator() {
            return new long[0];
        }

        @Override
        public long[] add(Bid bid, long[] acc) {
            return increment(acc, Math.floorDiv(bid.dateTime(), period), 1);
        }

        /** A new array: no backend ever sees an accumulator mutated in place. */
        private static long[] increment(long[] acc, long p, long count) {
            int i = 0;
            while (i < acc.length && acc[i] < p) {
                i += 2;
            }
            if (i < acc.length && acc[i] == p) {
                long[] next = acc.clone();
                next[i + 1] += count;
                return next;
            }
            long[] next = new long[acc.length + 2];
            System.arraycopy(acc, 0, next, 0, i);
            next[i] = p;
            next[i + 1] = count;
            System.arraycopy(acc, i, next, i + 2, acc.length - i);
            return next;
        }

        @Override
        public long[] getResult(long[] acc) {
            return acc;
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            long[] merged = a;
            for (int i = 0; i < b.length; i += 2) {
                merged = increment(merged, b[i], b[i + 1]);
            }
            return merged;
        }
    }

    /** {@code (bidder, T, bids up to T, 0)} for the period end {@code T} that fired. */
    static final class EmitRunningCount
            extends ProcessWindowFunction<
                    long[], Tuple4<Long, Long, Long, Long>, Long, GlobalWindow> {
        private static final long serialVersionUID = 1L;

        private final long period;

        EmitRunningCount(long period) {
            this.period = period;
        }

        @Override
        public void process(
                Long bidder,
                Context context,
                Iterable<long[]> results,
                Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            long fireTime =
                    context.windowState().getState(PeriodicEventTimeTrigger.FIRE_TIME).value();
            long firedPeriod = Math.floorDiv(fireTime, period);
            long[] acc = results.iterator().next();
            long count = 0;
            for (int i = 0; i < acc.length && acc[i] <= firedPeriod; i += 2) {
                count += acc[i + 1];
            }
            out.collect(Output.of(bidder, fireTime, count, 0));
        }
    }
}
