package io.flowkv.nexmark;

import org.apache.flink.api.common.typeinfo.TypeInfo;

/** A person who registers to sell or bid. */
@TypeInfo(EventSerializers.PersonTypeInfoFactory.class)
public record Person(
        long id,
        String name,
        String emailAddress,
        String creditCard,
        String city,
        String state,
        long dateTime,
        String extra)
        implements Event {}
