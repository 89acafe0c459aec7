package io.flowkv.nexmark;

import java.io.Serializable;

/**
 * Parameters of the NEXMark event stream. Event {@code n} (0-based) has event time {@code baseTime
 * + n * 1000 / eventRate} ms, so the stream covers {@code events / eventRate} seconds of event time
 * however fast it is generated.
 *
 * @param events number of events in the stream
 * @param eventRate events per second of event time (the inter-event delay is its inverse)
 * @param baseTime event time of event 0, epoch milliseconds
 * @param hotAuctionRatio a bid goes to the hot auction with probability 1 - 1/ratio
 * @param hotBiddersRatio a bid comes from a hot bidder with probability 1 - 1/ratio
 * @param hotSellersRatio an auction is opened by a hot seller with probability 1 - 1/ratio
 * @param avgPersonBytes average serialized size of a person, reached by padding
 * @param avgAuctionBytes average serialized size of an auction
 * @param avgBidBytes average serialized size of a bid
 */
public record GeneratorConfig(
        long events,
        long eventRate,
        long baseTime,
        int hotAuctionRatio,
        int hotBiddersRatio,
        int hotSellersRatio,
        int avgPersonBytes,
        int avgAuctionBytes,
        int avgBidBytes)
        implements Serializable {

    /** 2025-01-01T00:00:00Z: a fixed base so runs are reproducible. */
    public static final long DEFAULT_BASE_TIME = 1_735_689_600_000L;

    public GeneratorConfig {
        if (events < 0) {
            throw new IllegalArgumentException("events must be >= 0, got " + events);
        }
        if (eventRate <= 0) {
            throw new IllegalArgumentException("eventRate must be > 0, got " + eventRate);
        }
        if (hotAuctionRatio < 1 || hotBiddersRatio < 1 || hotSellersRatio < 1) {
            throw new IllegalArgumentException("hot ratios must be >= 1");
        }
    }

    /** The standard model (hot ratios 2/4/4, sizes 200/500/100 B) for {@code events} events. */
    public static GeneratorConfig of(long events, long eventRate) {
        return new GeneratorConfig(events, eventRate, DEFAULT_BASE_TIME, 2, 4, 4, 200, 500, 100);
    }

    /** This configuration with event 0 at {@code baseTime}. */
    public GeneratorConfig withBaseTime(long baseTime) {
        return new GeneratorConfig(
                events,
                eventRate,
                baseTime,
                hotAuctionRatio,
                hotBiddersRatio,
                hotSellersRatio,
                avgPersonBytes,
                avgAuctionBytes,
                avgBidBytes);
    }

    /** Event time of event {@code n}. */
    public long timestampOf(long n) {
        return baseTime + n * 1000 / eventRate;
    }
}
