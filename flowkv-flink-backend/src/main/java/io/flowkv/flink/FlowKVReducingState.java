package io.flowkv.flink;

import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalReducingState;

import java.io.IOException;
import java.util.Collection;

/** Reducing state: read-modify-write of one reduced value per (key, namespace). */
final class FlowKVReducingState<K, N, V> extends AbstractFlowKVState<K, N, V>
        implements InternalReducingState<K, N, V> {
    private ReduceFunction<V> reduceFunction;

    FlowKVReducingState(
            FlowKVKeyedStateBackend<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer,
            ReduceFunction<V> reduceFunction) {
        super(backend, storage, namespaceSerializer, valueSerializer);
        this.reduceFunction = reduceFunction;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            FlowKVKeyedStateBackend<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer) {
        return (AbstractFlowKVState)
                new FlowKVReducingState<>(
                        backend,
                        storage,
                        namespaceSerializer,
                        stateSerializer,
                        ((ReducingStateDescriptor<SV>) descriptor).getReduceFunction());
    }

    void setReduceFunction(ReduceFunction<V> reduceFunction) {
        this.reduceFunction = reduceFunction;
    }

    @Override
    public V get() throws IOException {
        return getInternal();
    }

    @Override
    public V getInternal() throws IOException {
        byte[] bytes = storage.get(keyBytes(), namespaceBytes());
        return bytes == null ? null : deserialize(bytes);
    }

    @Override
    public void updateInternal(V value) throws IOException {
        if (value == null) {
            clear();
        } else {
            storage.put(keyBytes(), namespaceBytes(), serialize(value));
        }
    }

    @Override
    public void add(V value) throws Exception {
        byte[] key = keyBytes();
        byte[] namespace = namespaceBytes();
        byte[] bytes = storage.get(key, namespace);
        V result = bytes == null ? value : reduceFunction.reduce(deserialize(bytes), value);
        storage.put(key, namespace, serialize(result));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        byte[] key = keyBytes();
        V merged = null;
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] namespace = namespaceBytes(source);
            byte[] bytes = storage.get(key, namespace);
            if (bytes != null) {
                storage.remove(key, namespace);
                V value = deserialize(bytes);
                merged = merged == null ? value : reduceFunction.reduce(merged, value);
            }
        }
        if (merged != null) {
            byte[] targetNamespace = namespaceBytes(target);
            byte[] existing = storage.get(key, targetNamespace);
            if (existing != null) {
                merged = reduceFunction.reduce(merged, deserialize(existing));
            }
            storage.put(key, targetNamespace, serialize(merged));
        }
    }

    @Override
    protected byte[] serializedValue(byte[] key, byte[] namespace, TypeSerializer<V> safe)
            throws IOException {
        return storage.get(key, namespace);
    }

    @Override
    byte[] migrateValue(byte[] stored, TypeSerializer<V> prior, TypeSerializer<V> current)
            throws IOException {
        in.setBuffer(stored);
        V value = prior.deserialize(in);
        out.clear();
        current.serialize(value, out);
        return out.getCopyOfBuffer();
    }
}
