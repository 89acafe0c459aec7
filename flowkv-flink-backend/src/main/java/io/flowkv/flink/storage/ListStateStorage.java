package io.flowkv.flink.storage;

import io.flowkv.core.ValueConsumer;

import org.apache.flink.annotation.Internal;

import java.io.IOException;

/** A storage of list elements: what list state and window contents are kept in. */
@Internal
public interface ListStateStorage extends StateStorage {

    /** Appends one element to the list of (key, namespace). */
    void append(int keyGroup, byte[] key, byte[] namespace, byte[] element) throws IOException;

    /** Visits the elements of (key, namespace) in append order; false if there are none. */
    boolean getElements(int keyGroup, byte[] key, byte[] namespace, ValueConsumer out)
            throws IOException;
}
