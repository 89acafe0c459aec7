package io.flowkv.nexmark;

import org.apache.flink.api.common.typeinfo.TypeInfo;

/** An item put up for auction by {@link #seller()} (a person id). */
@TypeInfo(EventSerializers.AuctionTypeInfoFactory.class)
public record Auction(
        long id,
        String itemName,
        String description,
        long initialBid,
        long reserve,
        long dateTime,
        long expires,
        long seller,
        long category,
        String extra)
        implements Event {}
