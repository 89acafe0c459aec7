package io.flowkv.flink.state;

import io.flowkv.flink.storage.KeyBytes;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * What a FlowKV state asks of the keyed backend it belongs to: the current key, its key group and
 * version, and how keys become store bytes. The backend implements it; a state sees nothing else of
 * the backend.
 *
 * @param <K> key type
 */
@Internal
public interface StateKeyContext<K> {
    TypeSerializer<K> getKeySerializer();

    K getCurrentKey();

    int getCurrentKeyGroupIndex();

    int getNumberOfKeyGroups();

    /**
     * Changes whenever the current key is set, so that a state serializes the current key once per
     * key switch ({@link KeyBytes#currentKey}).
     */
    long keyVersion();

    /** Bytes of the key-group prefix of every store key. */
    int keyGroupPrefixBytes();

    /** The store bytes of this backend's keys and of namespaces of {@code namespaceSerializer}. */
    <N> KeyBytes<K, N> keyBytes(TypeSerializer<N> namespaceSerializer);

    /**
     * The heap that the states keeping values as live objects ({@link ObjectCache}) share, or null:
     * no state keeps any.
     */
    default ObjectCacheBudget objectCacheBudget() {
        return null;
    }
}
