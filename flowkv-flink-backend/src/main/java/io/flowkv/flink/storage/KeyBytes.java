package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;

import java.io.IOException;

/**
 * How a state's key and namespace become the byte arrays the stores are keyed by. The layout is the
 * one Flink's RocksDB backend and canonical savepoints use, split in two:
 *
 * <pre>
 *   store key:  [key group, 1-2 bytes BE][serialized key][key length, if ambiguous]
 *   namespace:  [serialized namespace][namespace length, if ambiguous]
 * </pre>
 *
 * so that {@code storeKey ++ namespace} is exactly the savepoint's composite key. "Ambiguous" means
 * both serializers are variable-length (see {@link CompositeKeySerializationUtils}).
 */
@Internal
public final class KeyBytes<K, N> {
    private final TypeSerializer<K> keySerializer;
    private final TypeSerializer<N> namespaceSerializer;
    private final int keyGroupPrefixBytes;
    private final boolean ambiguous;
    private final DataOutputSerializer out = new DataOutputSerializer(64);
    private final DataInputDeserializer in = new DataInputDeserializer();

    private long lastKeyVersion = -1;
    private byte[] lastKeyBytes;

    public KeyBytes(
            TypeSerializer<K> keySerializer,
            TypeSerializer<N> namespaceSerializer,
            int keyGroupPrefixBytes) {
        this.keySerializer = keySerializer;
        this.namespaceSerializer = namespaceSerializer;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.ambiguous =
                CompositeKeySerializationUtils.isAmbiguousKeyPossible(
                        keySerializer, namespaceSerializer);
    }

    public TypeSerializer<N> namespaceSerializer() {
        return namespaceSerializer;
    }

    /**
     * The store key of the current key. {@code keyVersion} changes whenever the backend's current
     * key is set, so the bytes are serialized once per key switch, not once per state access (and
     * never reused for a key object mutated in place between two records).
     */
    public byte[] currentKey(K key, int keyGroup, long keyVersion) throws IOException {
        if (keyVersion != lastKeyVersion || lastKeyBytes == null) {
            lastKeyBytes = key(key, keyGroup);
            lastKeyVersion = keyVersion;
        }
        return lastKeyBytes;
    }

    public byte[] key(K key, int keyGroup) throws IOException {
        out.clear();
        CompositeKeySerializationUtils.writeKeyGroup(keyGroup, keyGroupPrefixBytes, out);
        CompositeKeySerializationUtils.writeKey(key, keySerializer, out, ambiguous);
        return out.getCopyOfBuffer();
    }

    public byte[] namespace(N namespace) throws IOException {
        out.clear();
        CompositeKeySerializationUtils.writeNameSpace(
                namespace, namespaceSerializer, out, ambiguous);
        return out.getCopyOfBuffer();
    }

    /** A copy of {@code key} that later changes to {@code key} do not reach. */
    public K copyKey(K key) {
        return keySerializer.copy(key);
    }

    /** A copy of {@code namespace} that later changes to it do not reach. */
    public N copyNamespace(N namespace) {
        return namespaceSerializer.copy(namespace);
    }

    public K decodeKey(byte[] storeKey) throws IOException {
        in.setBuffer(storeKey);
        in.skipBytesToRead(keyGroupPrefixBytes);
        return CompositeKeySerializationUtils.readKey(keySerializer, in, ambiguous);
    }

    public N decodeNamespace(byte[] namespaceBytes) throws IOException {
        in.setBuffer(namespaceBytes);
        return CompositeKeySerializationUtils.readNamespace(namespaceSerializer, in, ambiguous);
    }

    /** The key group a store key (or a composite key) of these serializers starts with. */
    public int keyGroupOf(byte[] storeKey) {
        return keyGroupOf(storeKey, keyGroupPrefixBytes);
    }

    public static int keyGroupOf(byte[] storeKey, int keyGroupPrefixBytes) {
        return CompositeKeySerializationUtils.extractKeyGroup(keyGroupPrefixBytes, storeKey);
    }

    /**
     * Splits a savepoint composite key {@code [kg][key][ns][rest]} at the end of the key part;
     * returns the index where the namespace starts.
     */
    public int splitCompositeKey(byte[] composite) throws IOException {
        in.setBuffer(composite);
        in.skipBytesToRead(keyGroupPrefixBytes);
        CompositeKeySerializationUtils.readKey(keySerializer, in, ambiguous);
        return in.getPosition();
    }

    /** The end of the namespace in a composite key whose namespace starts at {@code from}. */
    public int namespaceEnd(byte[] composite, int from) throws IOException {
        in.setBuffer(composite, from, composite.length - from);
        CompositeKeySerializationUtils.readNamespace(namespaceSerializer, in, ambiguous);
        return in.getPosition();
    }
}
