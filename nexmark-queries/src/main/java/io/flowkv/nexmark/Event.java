package io.flowkv.nexmark;

import org.apache.flink.api.common.typeinfo.TypeInfo;

/**
 * One NEXMark event: a new person, a new auction or a bid. Every event carries its event time
 * ({@link #dateTime()}, epoch milliseconds), which the source assigns as the record timestamp.
 */
@TypeInfo(EventSerializers.EventTypeInfoFactory.class)
public sealed interface Event permits Person, Auction, Bid {

    /** Event time in epoch milliseconds. */
    long dateTime();
}
