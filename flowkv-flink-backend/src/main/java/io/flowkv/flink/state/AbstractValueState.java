package io.flowkv.flink.state;

import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.io.IOException;
import java.util.Collection;

/**
 * A state that keeps one serialized value per (key, namespace) in a {@link ValueStateStorage}:
 * value, reducing, aggregating and map state.
 */
@Internal
public abstract class AbstractValueState<K, N, V> extends AbstractFlowKVState<K, N, V> {
    protected final ValueStateStorage values;

    AbstractValueState(
            StateKeyContext<K> backend,
            ValueStateStorage values,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer) {
        super(backend, values, namespaceSerializer, valueSerializer);
        this.values = values;
    }

    /**
     * The queryable-state form of this state's value at (key, namespace), or null: the stored
     * bytes, for states that store one serialized value.
     */
    @Override
    protected byte[] serializedValue(
            int keyGroup, byte[] key, byte[] namespace, TypeSerializer<V> safeValueSerializer)
            throws Exception {
        return values.get(keyGroup, key, namespace);
    }

    /** The value at the current key and namespace, or null. */
    protected V getValue() throws IOException {
        byte[] bytes = values.get(keyGroup(), keyBytes(), namespaceBytes());
        return bytes == null ? null : deserialize(bytes);
    }

    /** Stores the value at the current key and namespace; null clears it. */
    protected void putValue(V value) throws IOException {
        if (value == null) {
            clear();
        } else {
            values.put(keyGroup(), keyBytes(), namespaceBytes(), serialize(value));
        }
    }

    /** Computes a new value from the stored one (null when there is none). */
    @FunctionalInterface
    protected interface Update<V, E extends Exception> {
        V apply(V stored) throws E;
    }

    /**
     * Replaces the value at the current key and namespace with {@code update} of it: one get and
     * one put, whatever the state (an add of a reducing or aggregating state).
     */
    protected <E extends Exception> void updateValue(Update<V, E> update) throws IOException, E {
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] namespace = namespaceBytes();
        byte[] bytes = values.get(keyGroup, key, namespace);
        V next = update.apply(bytes == null ? null : deserialize(bytes));
        values.put(keyGroup, key, namespace, serialize(next));
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
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        V merged = null;
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] namespace = namespaceBytes(source);
            byte[] bytes = values.get(keyGroup, key, namespace);
            if (bytes != null) {
                values.remove(keyGroup, key, namespace);
                V value = deserialize(bytes);
                merged = merged == null ? value : merger.merge(merged, value);
            }
        }
        if (merged != null) {
            byte[] targetNamespace = namespaceBytes(target);
            byte[] existing = values.get(keyGroup, key, targetNamespace);
            if (existing != null) {
                merged = merger.merge(merged, deserialize(existing));
            }
            values.put(keyGroup, key, targetNamespace, serialize(merged));
        }
    }
}
