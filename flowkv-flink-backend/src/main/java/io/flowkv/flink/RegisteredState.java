package io.flowkv.flink;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;

/**
 * One registered keyed state of a backend: Flink's meta info, the storage its entries live in
 * (bound on first use, when every state of the operator has been registered), and the state object
 * handed to the operator.
 */
final class RegisteredState {
    final int id;
    RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo;
    StateStorage storage;
    AbstractFlowKVState<?, ?, ?> state;

    RegisteredState(int id, RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo) {
        this.id = id;
        this.metaInfo = metaInfo;
    }

    /** The store the state's entries are in now, or null before its first use. */
    StorePattern pattern() {
        return storage == null ? null : storage.pattern();
    }

    String name() {
        return metaInfo.getName();
    }

    boolean isList() {
        return storage != null
                ? storage.isList()
                : metaInfo.getStateType() == StateDescriptor.Type.LIST;
    }
}
