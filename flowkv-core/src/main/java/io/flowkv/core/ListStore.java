package io.flowkv.core;

import java.io.IOException;

/**
 * A store of lists: elements appended to (key, window), read back whole in append order, and
 * removed whole (the AAR and AUR stores: a window's buffered elements).
 */
public interface ListStore extends Store {

    /** The timestamp of an element whose event time the caller does not know. */
    long NO_TIMESTAMP = Long.MIN_VALUE;

    /**
     * Appends one element to the list of (key, window). The arrays may be reused by the caller once
     * this returns.
     *
     * @param timestamp the element's event time, or {@link #NO_TIMESTAMP}; a store that predicts
     *     its reads may use it, the others ignore it
     */
    void append(byte[] key, byte[] window, byte[] element, long timestamp) throws IOException;

    /** {@link #append(byte[], byte[], byte[], long)} of an element without a timestamp. */
    default void append(byte[] key, byte[] window, byte[] element) throws IOException {
        append(key, window, element, NO_TIMESTAMP);
    }

    /** Hands every element of (key, window) to {@code consumer} in append order; false if none. */
    boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException;

    /** Drops the list of (key, window); nothing if there is none. */
    void remove(byte[] key, byte[] window) throws IOException;
}
