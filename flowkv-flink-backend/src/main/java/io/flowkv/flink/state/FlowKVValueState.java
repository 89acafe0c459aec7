package io.flowkv.flink.state;

import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalValueState;

import java.io.IOException;

/** Value state: one serialized value per (key, namespace) in a value storage. */
@Internal
public final class FlowKVValueState<K, N, V> extends AbstractValueState<K, N, V>
        implements InternalValueState<K, N, V> {
    private V defaultValue;

    FlowKVValueState(
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer,
            V defaultValue) {
        super(backend, storage, namespaceSerializer, valueSerializer, true);
        this.defaultValue = defaultValue;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            StateKeyContext<K> backend,
            ValueStateStorage storage,
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
        V value = getValue();
        if (value == null && defaultValue != null) {
            return valueSerializer.copy(defaultValue);
        }
        return value;
    }

    @Override
    public void update(V value) throws IOException {
        putValue(value);
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void descriptorUpdated(StateDescriptor<?, V> descriptor) {
        this.defaultValue = ((ValueStateDescriptor<V>) descriptor).getDefaultValue();
    }
}
