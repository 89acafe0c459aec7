package io.flowkv.flink.state;

import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalReducingState;

import java.io.IOException;
import java.util.Collection;

/** Reducing state: read-modify-write of one reduced value per (key, namespace). */
@Internal
public final class FlowKVReducingState<K, N, V> extends AbstractValueState<K, N, V>
        implements InternalReducingState<K, N, V> {
    private ReduceFunction<V> reduceFunction;

    FlowKVReducingState(
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<V> valueSerializer,
            ReduceFunction<V> reduceFunction) {
        super(backend, storage, namespaceSerializer, valueSerializer, false);
        this.reduceFunction = reduceFunction;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            StateKeyContext<K> backend,
            ValueStateStorage storage,
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

    @Override
    @SuppressWarnings("unchecked")
    protected void descriptorUpdated(StateDescriptor<?, V> descriptor) {
        this.reduceFunction = ((ReducingStateDescriptor<V>) descriptor).getReduceFunction();
    }

    @Override
    public V get() throws IOException {
        return getInternal();
    }

    @Override
    public V getInternal() throws IOException {
        return getValue();
    }

    @Override
    public void updateInternal(V value) throws IOException {
        putValue(value);
    }

    @Override
    public void add(V value) throws Exception {
        updateValue(stored -> stored == null ? value : reduceFunction.reduce(stored, value));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        mergeValues(target, sources, reduceFunction::reduce);
    }
}
