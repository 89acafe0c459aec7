package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;

import java.io.IOException;

/** A storage of one value per (key, namespace): value, reducing, aggregating and map state. */
@Internal
public interface ValueStateStorage extends StateStorage {

    /** The value of (key, namespace), or null. */
    byte[] get(int keyGroup, byte[] key, byte[] namespace) throws IOException;

    void put(int keyGroup, byte[] key, byte[] namespace, byte[] value) throws IOException;
}
