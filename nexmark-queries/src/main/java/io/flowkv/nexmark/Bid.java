package io.flowkv.nexmark;

import org.apache.flink.api.common.typeinfo.TypeInfo;

/** A bid of {@link #price()} cents by {@link #bidder()} (a person id) on an auction. */
@TypeInfo(EventSerializers.BidTypeInfoFactory.class)
public record Bid(
        long auction,
        long bidder,
        long price,
        String channel,
        String url,
        long dateTime,
        String extra)
        implements Event {}
