package io.flowkv.nexmark;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Workloads on general keyed state, beside the paper's window queries: what a real job keeps in a
 * process function rather than a window. Their outputs are independent of arrival order, so every
 * backend and parallelism gives the same checksum: a source reader runs ahead of the others by any
 * amount, but no event arrives after the watermark has passed its timestamp.
 *
 * <ul>
 *   <li>{@code dedup}: the first bid of every (auction, bidder) pair; a {@code ValueState} per
 *       pair.
 *   <li>{@code map-join}: bids joined with their auction, buffered per auction in a {@code
 *       MapState} until the end of their period ({@code window}); hot auctions hold thousands of
 *       entries. Emits per auction and period the bids, the highest price and the seller.
 *   <li>{@code timers}: every bid arms an event-time timer per (auction, bidder) pair {@code gap}
 *       after its time; each firing emits the pair, the time and how many of the pair's timers have
 *       fired so far (a {@code ValueState} per pair).
 *   <li>{@code count}: bids per auction in count windows of {@link #COUNT_WINDOW} ({@code
 *       countWindow} with a process function: the AUR store, global windows without a trigger
 *       time). Which bids share a window depends on arrival order, so each firing emits only what
 *       does not: the auction, the firing's number (a per-key {@code ValueState} in the window
 *       function's global state) and how many elements the window held (always {@link
 *       #COUNT_WINDOW}; a backend losing or repeating an element changes it).
 *   <li>{@code custom}: q7's highest bid per bidder, in tumbling windows of {@code window} that a
 *       custom, non-merging assigner ({@link StaggeredWindows}) shifts by an offset of each
 *       bidder's own: every bidder's windows end at other times, so they fire per key all through
 *       the run instead of all keys at once (the paper's unaligned reads on a window that Flink
 *       does not call a session).
 * </ul>
 */
final class GeneralWorkloads {
    private GeneralWorkloads() {}

    /** One long per (auction, bidder) pair; distinct for bidder ids below 10^9. */
    static long pair(long auction, long bidder) {
        return auction * 1_000_000_007L + bidder;
    }

    /**
     * The user key of a bid in the map-join buffer: one per (time, bidder) among bids less than
     * 2^24 ms (4.6 hours) apart, which is all a buffer holds at once.
     */
    static long bidKey(long dateTime, long bidder) {
        return bidder << 24 | (dateTime & 0xFF_FFFFL);
    }

    /** Output {@code (pair, 0, 0, 0)} once per pair. */
    static DataStream<Tuple4<Long, Long, Long, Long>> dedup(DataStream<Event> events) {
        return bids(events)
                .keyBy(b -> pair(b.auction(), b.bidder()), Types.LONG)
                .process(new FirstSeen(), Queries.Output.TYPE)
                .uid("dedup")
                .name("dedup");
    }

    /**
     * Output {@code (auction, period end, bids in the period, highest price * 1_000_003 + seller)}
     * per auction and period with bids; the seller is 0 once the auction has been closed (its
     * {@code expires} plus one period) or if the auction was never seen.
     */
    static DataStream<Tuple4<Long, Long, Long, Long>> mapJoin(
            DataStream<Event> events, QueryParams params) {
        long period = params.window().toMillis();
        DataStream<Auction> auctions =
                events.flatMap(new Queries.OfType<>(Auction.class))
                        .returns(Auction.class)
                        .uid("auctions")
                        .name("auctions");
        return auctions.connect(bids(events))
                .keyBy(Auction::id, Bid::auction, Types.LONG)
                .process(new BufferedJoin(period), Queries.Output.TYPE)
                .uid("map-join")
                .name("map-join");
    }

    /** Output {@code (pair, timer time, timers of the pair fired so far, 0)} per firing. */
    static DataStream<Tuple4<Long, Long, Long, Long>> timers(
            DataStream<Event> events, QueryParams params) {
        return bids(events)
                .keyBy(b -> pair(b.auction(), b.bidder()), Types.LONG)
                .process(new ArmTimers(params.gap().toMillis()), Queries.Output.TYPE)
                .uid("timers")
                .name("timers");
    }

    /** Elements per count window of the {@code count} workload. */
    static final int COUNT_WINDOW = 20;

    /** Output {@code (auction, firing number of the auction, elements in the window, 0)}. */
    static DataStream<Tuple4<Long, Long, Long, Long>> count(DataStream<Event> events) {
        return bids(events)
                .keyBy(Bid::auction, Types.LONG)
                .countWindow(COUNT_WINDOW)
                .process(new CountFired(), Queries.Output.TYPE)
                .uid("count")
                .name("count");
    }

    /** Output {@code (bidder, window end, highest price, bid count)} per bidder and window. */
    static DataStream<Tuple4<Long, Long, Long, Long>> custom(
            DataStream<Event> events, QueryParams params) {
        return bids(events)
                .keyBy(Bid::bidder, Types.LONG)
                .window(new StaggeredWindows(params.window().toMillis()))
                .process(new Queries.HighestBid(), Queries.Output.TYPE)
                .uid("custom")
                .name("custom");
    }

    private static DataStream<Bid> bids(DataStream<Event> events) {
        return events.flatMap(new Queries.OfType<>(Bid.class))
                .returns(Bid.class)
                .uid("bids")
                .name("bids");
    }

    static final class FirstSeen
            extends KeyedProcessFunction<Long, Bid, Tuple4<Long, Long, Long, Long>> {
        private static final long serialVersionUID = 1L;
        private transient ValueState<Boolean> seen;

        @Override
        public void open(OpenContext context) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.BOOLEAN));
        }

        @Override
        public void processElement(
                Bid bid, Context ctx, Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            if (seen.value() == null) {
                seen.update(true);
                out.collect(Tuple4.of(ctx.getCurrentKey(), 0L, 0L, 0L));
            }
        }
    }

    static final class BufferedJoin
            extends KeyedCoProcessFunction<Long, Auction, Bid, Tuple4<Long, Long, Long, Long>> {
        private static final long serialVersionUID = 1L;
        private final long period;

        /** {@link #bidKey} -> {bid time, highest price of that time and bidder}. */
        private transient MapState<Long, long[]> buffered;

        /** {seller, time from which the auction is forgotten}. */
        private transient ValueState<long[]> auction;

        BufferedJoin(long period) {
            this.period = period;
        }

        @Override
        public void open(OpenContext context) {
            buffered =
                    getRuntimeContext()
                            .getMapState(
                                    new MapStateDescriptor<>(
                                            "bids",
                                            Types.LONG,
                                            PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
            auction =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "auction",
                                            PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        }

        @Override
        public void processElement1(
                Auction a, Context ctx, Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            long forgetAt = Queries.periodEnd(a.expires(), period) + period;
            auction.update(new long[] {a.seller(), forgetAt});
            ctx.timerService().registerEventTimeTimer(forgetAt);
        }

        @Override
        public void processElement2(
                Bid b, Context ctx, Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            long key = bidKey(b.dateTime(), b.bidder());
            long[] old = buffered.get(key);
            if (old == null || old[1] < b.price()) {
                buffered.put(key, new long[] {b.dateTime(), b.price()});
            }
            ctx.timerService().registerEventTimeTimer(Queries.periodEnd(b.dateTime(), period));
        }

        @Override
        public void onTimer(
                long time, OnTimerContext ctx, Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            long count = 0;
            long highest = 0;
            Iterator<Map.Entry<Long, long[]>> it = buffered.iterator();
            while (it.hasNext()) {
                long[] bid = it.next().getValue();
                if (bid[0] <= time) {
                    count++;
                    highest = Math.max(highest, bid[1]);
                    it.remove();
                }
            }
            long[] a = auction.value();
            if (count > 0) {
                long seller = a == null ? 0 : a[0];
                out.collect(
                        Tuple4.of(ctx.getCurrentKey(), time, count, highest * 1_000_003L + seller));
            }
            if (a != null && time >= a[1]) {
                auction.clear();
            }
        }
    }

    static final class ArmTimers
            extends KeyedProcessFunction<Long, Bid, Tuple4<Long, Long, Long, Long>> {
        private static final long serialVersionUID = 1L;
        private final long gap;
        private transient ValueState<Long> fired;

        ArmTimers(long gap) {
            this.gap = gap;
        }

        @Override
        public void open(OpenContext context) {
            fired = getRuntimeContext().getState(new ValueStateDescriptor<>("fired", Types.LONG));
        }

        @Override
        public void processElement(
                Bid bid, Context ctx, Collector<Tuple4<Long, Long, Long, Long>> out) {
            ctx.timerService().registerEventTimeTimer(bid.dateTime() + gap);
        }

        @Override
        public void onTimer(
                long time, OnTimerContext ctx, Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            Long before = fired.value();
            long now = before == null ? 1 : before + 1;
            fired.update(now);
            out.collect(Tuple4.of(ctx.getCurrentKey(), time, now, 0L));
        }
    }

    static final class CountFired
            extends ProcessWindowFunction<Bid, Tuple4<Long, Long, Long, Long>, Long, GlobalWindow> {
        private static final long serialVersionUID = 1L;
        private static final ValueStateDescriptor<Long> FIRED =
                new ValueStateDescriptor<>("fired", Types.LONG);

        @Override
        public void process(
                Long auction,
                Context context,
                Iterable<Bid> bids,
                Collector<Tuple4<Long, Long, Long, Long>> out)
                throws Exception {
            long n = 0;
            for (Bid ignored : bids) {
                n++;
            }
            ValueState<Long> fired = context.globalState().getState(FIRED);
            Long before = fired.value();
            long firing = before == null ? 1 : before + 1;
            fired.update(firing);
            out.collect(Tuple4.of(auction, firing, n, 0L));
        }
    }

    /**
     * Tumbling event-time windows of {@code size} whose boundaries are shifted per bidder by {@link
     * #offset}: a bid at {@code t} falls in {@code [start, start + size)} with {@code start = t -
     * floorMod(t - offset, size)}. Not a merging assigner, and not one Flink ships.
     */
    static final class StaggeredWindows extends WindowAssigner<Object, TimeWindow> {
        private static final long serialVersionUID = 1L;

        private final long size;

        StaggeredWindows(long size) {
            if (size <= 0) {
                throw new IllegalArgumentException("window size must be > 0 ms, was " + size);
            }
            this.size = size;
        }

        /** The bidder's shift of its window boundaries, in {@code [0, size)}. */
        static long offset(long bidder, long size) {
            return Math.floorMod((bidder * 0x9E37_79B9_7F4A_7C15L) >>> 1, size);
        }

        static long start(long bidder, long time, long size) {
            return time - Math.floorMod(time - offset(bidder, size), size);
        }

        @Override
        public Collection<TimeWindow> assignWindows(
                Object element, long timestamp, WindowAssignerContext context) {
            long start = start(((Bid) element).bidder(), timestamp, size);
            return List.of(new TimeWindow(start, start + size));
        }

        @Override
        public Trigger<Object, TimeWindow> getDefaultTrigger() {
            return EventTimeTrigger.create();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig config) {
            return new TimeWindow.Serializer();
        }

        @Override
        public boolean isEventTime() {
            return true;
        }

        @Override
        public String toString() {
            return "StaggeredWindows(" + size + ")";
        }
    }
}
