package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.internal.InternalKvState;

/**
 * One registered keyed state of a backend: Flink's meta info, the storage its entries live in
 * (bound on first use, when every state of the operator has been registered), and the state object
 * handed to the operator.
 */
@Internal
public final class RegisteredState {
    public final int id;
    public RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo;
    public StateStorage storage;
    public InternalKvState<?, ?, ?> state;

    RegisteredState(int id, RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo) {
        this.id = id;
        this.metaInfo = metaInfo;
    }

    /** The store the state's entries are in now, or null before its first use. */
    public StorePattern pattern() {
        return storage == null ? null : storage.pattern();
    }

    public String name() {
        return metaInfo.getName();
    }

    public boolean isList() {
        return storage != null
                ? storage.isList()
                : metaInfo.getStateType() == StateDescriptor.Type.LIST;
    }
}
