package io.flowkv.flink.state;

import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.StateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.util.FlinkRuntimeException;

import java.io.IOException;

/**
 * What every FlowKV state shares: turning the backend's current key ({@link StateKeyContext}) and
 * this state's current namespace into store bytes, and the plumbing Flink's {@link InternalKvState}
 * asks for.
 *
 * @param <K> key type
 * @param <N> namespace type
 * @param <V> the state's value type as Flink's serializer sees it (a list for list state, a map for
 *     map state, the accumulator for aggregating state)
 */
@Internal
public abstract class AbstractFlowKVState<K, N, V> implements InternalKvState<K, N, V> {
    protected final StateKeyContext<K> backend;
    protected final StateStorage storage;
    protected KeyBytes<K, N> keyBytes;
    protected TypeSerializer<V> valueSerializer;

    protected final DataOutputSerializer out = new DataOutputSerializer(128);
    protected final DataInputDeserializer in = new DataInputDeserializer();

    private N currentNamespace;
    private byte[] currentNamespaceBytes;

    AbstractFlowKVState(
            StateKeyContext<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer) {
        this.backend = backend;
        this.storage = storage;
        this.keyBytes = backend.keyBytes(namespaceSerializer);
        this.valueSerializer = valueSerializer;
    }

    /**
     * Re-binds the state after its descriptor was registered again: to the new serializers, and to
     * what else the descriptor carries ({@link #descriptorUpdated}).
     */
    public void reregistered(
            StateDescriptor<?, V> descriptor,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer) {
        ObjectCache<K, N, ?> cache = objectCache();
        if (cache != null) {
            // Cached objects are written with the serializers they were read with, then dropped.
            try {
                cache.writeBack();
            } catch (IOException e) {
                throw new FlinkRuntimeException(
                        "Error while writing cached values of a re-registered state to FlowKV.", e);
            }
            cache.clear();
        }
        setSerializers(namespaceSerializer, valueSerializer);
        descriptorUpdated(descriptor);
    }

    protected void setSerializers(
            TypeSerializer<N> namespaceSerializer, TypeSerializer<V> valueSerializer) {
        this.keyBytes = backend.keyBytes(namespaceSerializer);
        this.valueSerializer = valueSerializer;
        this.currentNamespaceBytes = null;
    }

    /** Takes the functions or default value of a descriptor registered again; none here. */
    protected void descriptorUpdated(StateDescriptor<?, V> descriptor) {}

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return backend.getKeySerializer();
    }

    @Override
    public TypeSerializer<N> getNamespaceSerializer() {
        return keyBytes.namespaceSerializer();
    }

    @Override
    public TypeSerializer<V> getValueSerializer() {
        return valueSerializer;
    }

    @Override
    public void setCurrentNamespace(N namespace) {
        this.currentNamespace = namespace;
        this.currentNamespaceBytes = null;
    }

    protected N currentNamespace() {
        return currentNamespace;
    }

    protected byte[] keyBytes() throws IOException {
        return keyBytes.currentKey(
                backend.getCurrentKey(), backend.getCurrentKeyGroupIndex(), backend.keyVersion());
    }

    /** The key group of the backend's current key. */
    protected int keyGroup() {
        return backend.getCurrentKeyGroupIndex();
    }

    protected byte[] namespaceBytes() throws IOException {
        if (currentNamespaceBytes == null) {
            currentNamespaceBytes = keyBytes.namespace(currentNamespace);
        }
        return currentNamespaceBytes;
    }

    protected byte[] namespaceBytes(N namespace) throws IOException {
        return keyBytes.namespace(namespace);
    }

    @Override
    public void clear() {
        ObjectCache<K, N, ?> cache = objectCache();
        if (cache != null) {
            ObjectCache.Entry<K, N, ?> entry =
                    cache.remove(backend.getCurrentKey(), currentNamespace());
            if (entry != null && !entry.stored) {
                return; // never written, nothing to remove from the store
            }
        }
        try {
            storage.remove(keyGroup(), keyBytes(), namespaceBytes());
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while removing data from FlowKV.", e);
        }
    }

    protected byte[] serialize(V value) throws IOException {
        out.clear();
        valueSerializer.serialize(value, out);
        return out.getCopyOfBuffer();
    }

    protected V deserialize(byte[] bytes) throws IOException {
        in.setBuffer(bytes);
        return valueSerializer.deserialize(in);
    }

    /**
     * The queryable-state form of this state's value at (key, namespace) of {@code keyGroup}, or
     * null.
     */
    protected abstract byte[] serializedValue(
            int keyGroup, byte[] key, byte[] namespace, TypeSerializer<V> safeValueSerializer)
            throws Exception;

    @Override
    public byte[] getSerializedValue(
            byte[] serializedKeyAndNamespace,
            TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer,
            TypeSerializer<V> safeValueSerializer)
            throws Exception {
        Tuple2<K, N> keyAndNamespace =
                KvStateSerializer.deserializeKeyAndNamespace(
                        serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
        ObjectCache<K, N, ?> cache = objectCache();
        if (cache != null) {
            // Queryable state asks from its own threads: peek writes nothing, so it may.
            ObjectCache.Entry<K, N, ?> entry = cache.peek(keyAndNamespace.f0, keyAndNamespace.f1);
            if (entry != null && servesFromCache(entry.value)) {
                return serializedCachedValue(entry.value, safeValueSerializer);
            }
        }
        int keyGroup =
                KeyGroupRangeAssignment.assignToKeyGroup(
                        keyAndNamespace.f0, backend.getNumberOfKeyGroups());
        KeyBytes<K, N> safe =
                new KeyBytes<>(
                        safeKeySerializer, safeNamespaceSerializer, backend.keyGroupPrefixBytes());
        return serializedValue(
                keyGroup,
                safe.key(keyAndNamespace.f0, keyGroup),
                safe.namespace(keyAndNamespace.f1),
                safeValueSerializer);
    }

    /**
     * Writes the values this state keeps as live objects (if any) into its store, so that what
     * reads the store directly (snapshots, key iteration) sees them.
     */
    public void writeBackCached() throws IOException {
        ObjectCache<K, N, ?> cache = objectCache();
        if (cache != null) {
            cache.writeBack();
        }
    }

    /**
     * Drops every cached value without writing it (the backend is disposed), returning the cache's
     * share of the {@link ObjectCacheBudget}.
     */
    public void dropCached() {
        ObjectCache<K, N, ?> cache = objectCache();
        if (cache != null) {
            cache.clear();
        }
    }

    /** Counters of this state's object cache for the log, or null when it has none. */
    public String cacheStats() {
        ObjectCache<K, N, ?> cache = objectCache();
        return cache == null ? null : cache.stats();
    }

    /**
     * What this state's object cache counted: accesses it served and missed, entries it evicted,
     * values it wrote to the store (evictions and write-backs), and the entries it holds now.
     */
    public record CacheCounters(long hits, long misses, long evictions, long writes, long entries) {
        public static final CacheCounters NONE = new CacheCounters(0, 0, 0, 0, 0);
    }

    /** The counters of this state's object cache; {@link CacheCounters#NONE} without one. */
    public CacheCounters cacheCounters() {
        ObjectCache<K, N, ?> cache = objectCache();
        return cache == null ? CacheCounters.NONE : cache.counters();
    }

    /**
     * Adds {@code value} at (current key, {@code namespace}) to {@code cache}, with copies of the
     * key and namespace that later changes to the caller's objects do not reach.
     */
    protected <T> ObjectCache.Entry<K, N, T> cacheAtCurrentKey(
            ObjectCache<K, N, T> cache, N namespace, T value, boolean dirty, boolean stored)
            throws IOException {
        return cache.add(
                keyBytes.copyKey(backend.getCurrentKey()),
                keyGroup(),
                keyBytes.copyNamespace(namespace),
                value,
                dirty,
                stored);
    }

    /** The values this state keeps as live objects ({@link ObjectCache}), or null: none. */
    protected ObjectCache<K, N, ?> objectCache() {
        return null;
    }

    /**
     * Whether a cached object is the value itself, which queryable state may serialize; false for a
     * marker that sends reads to the store.
     */
    protected boolean servesFromCache(Object cached) {
        return true;
    }

    /** The queryable-state form of a cached value (an object of {@link #objectCache}). */
    protected byte[] serializedCachedValue(Object cached, TypeSerializer<V> safeValueSerializer)
            throws IOException {
        throw new UnsupportedOperationException("no object cache");
    }

    @Override
    public StateIncrementalVisitor<K, N, V> getStateIncrementalVisitor(
            int recommendedMaxNumberOfReturnedRecords) {
        throw new UnsupportedOperationException(
                "Global state entry iterator is unsupported for the FlowKV backend");
    }

    /**
     * Rewrites one stored value (or list element) from the prior serializer's format to the current
     * one; used when a restored state's serializer is "compatible after migration".
     */
    public byte[] migrateValue(
            byte[] stored, TypeSerializer<V> priorSerializer, TypeSerializer<V> newSerializer)
            throws IOException {
        in.setBuffer(stored);
        V value = priorSerializer.deserialize(in);
        out.clear();
        newSerializer.serialize(value, out);
        return out.getCopyOfBuffer();
    }
}
