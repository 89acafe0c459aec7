package io.flowkv.flink.state;

import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;

import java.io.IOException;
import java.util.Collection;

/** Aggregating state: read-modify-write of one accumulator per (key, namespace). */
@Internal
public final class FlowKVAggregatingState<K, N, IN, ACC, OUT> extends AbstractValueState<K, N, ACC>
        implements InternalAggregatingState<K, N, IN, ACC, OUT> {
    private AggregateFunction<IN, ACC, OUT> aggregateFunction;

    FlowKVAggregatingState(
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<ACC> accumulatorSerializer,
            AggregateFunction<IN, ACC, OUT> aggregateFunction) {
        super(backend, storage, namespaceSerializer, accumulatorSerializer, false);
        this.aggregateFunction = aggregateFunction;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer) {
        return (AbstractFlowKVState)
                new FlowKVAggregatingState<>(
                        backend,
                        storage,
                        namespaceSerializer,
                        stateSerializer,
                        ((AggregatingStateDescriptor<?, SV, ?>) descriptor).getAggregateFunction());
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void descriptorUpdated(StateDescriptor<?, ACC> descriptor) {
        this.aggregateFunction =
                ((AggregatingStateDescriptor<IN, ACC, OUT>) descriptor).getAggregateFunction();
    }

    @Override
    public OUT get() throws IOException {
        ACC accumulator = getInternal();
        return accumulator == null ? null : aggregateFunction.getResult(accumulator);
    }

    @Override
    public ACC getInternal() throws IOException {
        return getValue();
    }

    @Override
    public void updateInternal(ACC value) throws IOException {
        putValue(value);
    }

    @Override
    public void add(IN value) throws IOException {
        updateValue(
                stored ->
                        aggregateFunction.add(
                                value,
                                stored == null ? aggregateFunction.createAccumulator() : stored));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        mergeValues(target, sources, aggregateFunction::merge);
    }
}
