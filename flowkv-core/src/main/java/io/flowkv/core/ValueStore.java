package io.flowkv.core;

import java.io.IOException;

/** A store of one value per (key, namespace), read and overwritten whole (the RMW store). */
public interface ValueStore extends Store {

    /** Hands the value of (key, namespace) to {@code consumer}; false if there is none. */
    boolean get(byte[] key, byte[] namespace, ValueConsumer consumer) throws IOException;

    /** Sets the value of (key, namespace). The arrays may be reused once this returns. */
    void put(byte[] key, byte[] namespace, byte[] value) throws IOException;

    /**
     * Drops the value of (key, namespace). Returns false if there was none; a store that deletes
     * without looking (as RocksDB does) returns true.
     */
    boolean remove(byte[] key, byte[] namespace) throws IOException;
}
