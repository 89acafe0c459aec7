package io.flowkv.flink;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.util.FlinkRuntimeException;

import java.io.IOException;

/** Value state: one serialized value per (key, namespace) in a value storage. */
final class FlowKVValueState<K, N, V> extends AbstractFlowKVState<K, N, V>
        implements InternalValueState<K, N, V> {
    private V defaultValue;

    FlowKVValueState(
            FlowKVKeyedStateBackend<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer,
            V defaultValue) {
        super(backend, storage, namespaceSerializer, valueSerializer);
        this.defaultValue = defaultValue;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            FlowKVKeyedStateBackend<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer) {
        return (AbstractFlowKVState)
                new FlowKVValueState<>(
                        backend,
                        storage,
                        namespaceSerializer,
                        stateSerializer,
                        ((ValueStateDescriptor<SV>) descriptor).getDefaultValue());
    }

    @Override
    public V value() throws IOException {
        byte[] bytes = storage.get(keyBytes(), namespaceBytes());
        if (bytes == null) {
            return defaultValue == null ? null : valueSerializer.copy(defaultValue);
        }
        return deserialize(bytes);
    }

    @Override
    public void update(V value) throws IOException {
        if (value == null) {
            clear();
            return;
        }
        try {
            storage.put(keyBytes(), namespaceBytes(), serialize(value));
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while adding data to FlowKV.", e);
        }
    }

    void setDefaultValue(V defaultValue) {
        this.defaultValue = defaultValue;
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
