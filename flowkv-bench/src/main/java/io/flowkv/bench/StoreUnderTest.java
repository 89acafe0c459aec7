package io.flowkv.bench;

import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;

import java.io.IOException;

/**
 * One store as the benchmark drives it: list operations for the append patterns, point operations
 * for read-modify-write. Arrays passed in are scratch buffers reused by the caller: an
 * implementation copies what it keeps.
 */
public interface StoreUnderTest extends AutoCloseable {

    void appendList(byte[] key, byte[] window, byte[] value, long timestamp) throws IOException;

    /** Estimated trigger time of (key, window); only a store that predicts reads needs it. */
    default void setTriggerTime(byte[] key, byte[] window, long triggerTime) throws IOException {}

    /** Hands every value of the list to {@code consumer} in append order; false if none. */
    boolean getList(byte[] key, byte[] window, ValueConsumer consumer) throws IOException;

    /** Hands the value to {@code consumer}; false if absent. */
    boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException;

    void put(byte[] key, byte[] window, byte[] value) throws IOException;

    /** Drops (key, window), list or value. */
    void removeKey(byte[] key, byte[] window) throws IOException;

    /** Bytes the store holds on disk now. */
    long diskBytes() throws IOException;

    /** Share of reads served from prefetched data (FlowKV AUR), else NaN. */
    default double hitRatio() {
        return Double.NaN;
    }

    /** Bytes read from disk over value bytes returned from disk (FlowKV AUR), else NaN. */
    default double readAmplification() {
        return Double.NaN;
    }

    /** The store's own counters, or null if it keeps none. */
    default StoreStats stats() {
        return null;
    }

    @Override
    void close() throws IOException;
}
