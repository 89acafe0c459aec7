package io.flowkv.flink.state;

import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;

import java.io.IOException;
import java.util.Collection;

/**
 * A state that keeps one serialized value per (key, namespace) in a {@link ValueStateStorage}:
 * value, reducing and aggregating state.
 *
 * <p>Each keeps its hottest values as live objects in an {@link ObjectCache} ({@link
 * StateKeyContext#objectCacheBudget}). A reducing or aggregating state alone reads and changes them
 * (through {@code add}, {@code get} and merges), so keeping the object instead of its bytes is
 * invisible to the job. A value state hands the object to user code ({@code value()}), which may
 * change it without calling {@code update}: then it behaves as on Flink's heap backend, where the
 * object handed out is the state. A value of a mutable type that was handed out counts as changed,
 * so the cache writes it back (at eviction or snapshot) with whatever the job did to it.
 */
@Internal
public abstract class AbstractValueState<K, N, V> extends AbstractFlowKVState<K, N, V> {
    protected final ValueStateStorage values;

    /** Live values of this state, or null: every access goes to the store. */
    private final ObjectCache<K, N, V> cache;

    /** {@link #getValue} hands the object to user code (value state). */
    private final boolean handsOutValues;

    AbstractValueState(
            StateKeyContext<K> backend,
            ValueStateStorage values,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer,
            boolean handsOutValues) {
        super(backend, values, namespaceSerializer, valueSerializer);
        this.values = values;
        this.handsOutValues = handsOutValues;
        ObjectCacheBudget budget = backend.objectCacheBudget();
        this.cache = budget != null ? new ObjectCache<>(budget, this::write) : null;
    }

    /**
     * Whether a value handed out may be changed by the job without {@code update}: then a cached
     * one counts as changed from the moment it is handed out.
     */
    private boolean mayChangeWhenHandedOut() {
        return handsOutValues && !valueSerializer.isImmutableType();
    }

    /**
     * The queryable-state form of this state's value at (key, namespace), or null: the stored
     * bytes, for states that store one serialized value ({@link #getSerializedValue} looks in the
     * cache first).
     */
    @Override
    protected byte[] serializedValue(
            int keyGroup, byte[] key, byte[] namespace, TypeSerializer<V> safeValueSerializer)
            throws Exception {
        return values.get(keyGroup, key, namespace);
    }

    /**
     * The value at the current key and namespace, or null. A value state hands it out ({@code
     * handsOutValues}); the others only read it.
     */
    protected V getValue() throws IOException {
        return read(currentNamespace(), false, mayChangeWhenHandedOut());
    }

    /** Stores the value at the current key and namespace; null clears it. */
    protected void putValue(V value) throws IOException {
        if (value == null) {
            clear();
        } else {
            write(currentNamespace(), value);
        }
    }

    /** Computes a new value from the stored one (null when there is none). */
    @FunctionalInterface
    protected interface Update<V, E extends Exception> {
        V apply(V stored) throws E;
    }

    /**
     * Replaces the value at the current key and namespace with {@code update} of it: one get and
     * one put, whatever the state (an add of a reducing or aggregating state); with a cache hit,
     * neither.
     */
    protected <E extends Exception> void updateValue(Update<V, E> update) throws IOException, E {
        if (cache != null) {
            ObjectCache.Entry<K, N, V> entry =
                    cache.get(backend.getCurrentKey(), currentNamespace());
            if (entry != null) {
                V next = update.apply(entry.value);
                if (next == null) {
                    clear();
                } else {
                    entry.value = next;
                    entry.dirty = true;
                    sample(next);
                }
                return;
            }
        }
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] namespace = namespaceBytes();
        byte[] bytes = values.get(keyGroup, key, namespace);
        if (cache != null && bytes != null) {
            cache.measured(key.length + namespace.length + bytes.length);
        }
        V next = update.apply(bytes == null ? null : deserialize(bytes));
        if (next == null) {
            clear();
        } else if (cache != null) {
            if (bytes == null) {
                sample(next);
            }
            cacheAtCurrentKey(cache, currentNamespace(), next, true, bytes != null);
        } else {
            values.put(keyGroup, key, namespace, serialize(next));
        }
    }

    /** Combines two values of a merging state (reduce, or an aggregate's merge). */
    @FunctionalInterface
    protected interface Merger<V> {
        V merge(V a, V b) throws Exception;
    }

    /**
     * Merges the values of {@code sources} into {@code target} under the current key and removes
     * the sources: what session windows need when they merge.
     */
    protected void mergeValues(N target, Collection<N> sources, Merger<V> merger) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        V merged = null;
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            V value = read(source, true, false);
            if (value != null) {
                merged = merged == null ? value : merger.merge(merged, value);
            }
        }
        if (merged != null) {
            V existing = read(target, false, false);
            if (existing != null) {
                merged = merger.merge(merged, existing);
            }
            write(target, merged);
        }
    }

    /**
     * The value at (current key, {@code namespace}) or null, from the cache or the store; {@code
     * take}: and removes it. A value read from the store enters the cache (unless taken), counted
     * as changed if {@code mayChange} (the caller hands it to code that may change it). The
     * namespace is serialized only when the store is touched.
     */
    private V read(N namespace, boolean take, boolean mayChange) throws IOException {
        if (cache != null) {
            K key = backend.getCurrentKey();
            ObjectCache.Entry<K, N, V> entry =
                    take ? cache.remove(key, namespace) : cache.get(key, namespace);
            if (entry != null) {
                if (take && entry.stored) {
                    values.remove(keyGroup(), keyBytes(), bytesOf(namespace));
                }
                if (mayChange) {
                    entry.dirty = true;
                }
                if (!take && namespace == currentNamespace()) {
                    sample(entry.value);
                }
                return entry.value;
            }
        }
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] namespaceBytes = bytesOf(namespace);
        byte[] bytes = values.get(keyGroup, key, namespaceBytes);
        if (bytes == null) {
            return null;
        }
        if (take) {
            values.remove(keyGroup, key, namespaceBytes);
        }
        V value = deserialize(bytes);
        if (cache != null && !take) {
            cache.measured(key.length + namespaceBytes.length + bytes.length);
            cacheAtCurrentKey(cache, namespace, value, mayChange, true);
        }
        return value;
    }

    /** Sets the value at (current key, {@code namespace}), in the cache if there is one. */
    private void write(N namespace, V value) throws IOException {
        if (cache == null) {
            values.put(keyGroup(), keyBytes(), bytesOf(namespace), serialize(value));
            return;
        }
        ObjectCache.Entry<K, N, V> entry = cache.get(backend.getCurrentKey(), namespace);
        if (entry != null) {
            entry.value = value;
            entry.dirty = true;
        } else {
            // Whether the store holds a value is not known without a read: assume it may.
            cacheAtCurrentKey(cache, namespace, value, true, true);
        }
    }

    /** The store bytes of {@code namespace}: those of the current one are kept until it changes. */
    private byte[] bytesOf(N namespace) throws IOException {
        return namespace == currentNamespace() ? namespaceBytes() : namespaceBytes(namespace);
    }

    /**
     * Measures the cache's entry size on the value at the current key and namespace, when a sample
     * is due ({@link ObjectCache#sampleDue}).
     */
    private void sample(V value) throws IOException {
        if (cache.sampleDue()) {
            out.clear();
            valueSerializer.serialize(value, out);
            cache.measured(keyBytes().length + namespaceBytes().length + out.length());
        }
    }

    /** Writes a cached value to the store (eviction, or {@link #writeBackCached}). */
    private void write(ObjectCache.Entry<K, N, V> entry) throws IOException {
        byte[] key = keyBytes.key(entry.key, entry.keyGroup);
        byte[] namespace = keyBytes.namespace(entry.namespace);
        byte[] value = serialize(entry.value);
        cache.measured(key.length + namespace.length + value.length);
        values.put(entry.keyGroup, key, namespace, value);
    }

    @Override
    protected ObjectCache<K, N, ?> objectCache() {
        return cache;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected byte[] serializedCachedValue(Object cached, TypeSerializer<V> safeValueSerializer)
            throws IOException {
        return KvStateSerializer.serializeValue((V) cached, safeValueSerializer);
    }
}
