package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.util.Preconditions;

/**
 * One registered keyed state of a backend: Flink's meta info, the storage its entries live in
 * (bound once, on first use, when every state of the operator has been registered, or by a
 * restore), and the state object handed to the operator (bound once, when the job first asks for
 * it).
 *
 * <p>Only {@link StateRegistry} creates one and only {@link StoreBinder} binds its storage, so the
 * choice of store is made in one place.
 */
@Internal
public final class RegisteredState {
    private final int id;
    private RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo;
    private StateStorage storage;
    private InternalKvState<?, ?, ?> state;

    RegisteredState(int id, RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo) {
        this.id = id;
        this.metaInfo = Preconditions.checkNotNull(metaInfo);
    }

    /** The state's place in its registry's registration order. */
    public int id() {
        return id;
    }

    public RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo() {
        return metaInfo;
    }

    /**
     * Replaces the meta info when the job registers the state again, with serializers that may have
     * been upgraded; the name and state type do not change.
     */
    public void updateMetaInfo(RegisteredKeyValueStateBackendMetaInfo<?, ?> updated) {
        Preconditions.checkArgument(
                updated.getName().equals(metaInfo.getName())
                        && updated.getStateType() == metaInfo.getStateType(),
                "State %s cannot become %s %s",
                metaInfo.getName(),
                updated.getStateType(),
                updated.getName());
        this.metaInfo = updated;
    }

    /** The storage the entries live in, or null before the state's first use. */
    public StateStorage storage() {
        return storage;
    }

    void bindStorage(StateStorage bound) {
        Preconditions.checkState(storage == null, "State %s has a storage already", name());
        this.storage = Preconditions.checkNotNull(bound);
    }

    /** The state object handed to the operator, or null before the job asked for it. */
    public InternalKvState<?, ?, ?> state() {
        return state;
    }

    public void bindState(InternalKvState<?, ?, ?> created) {
        Preconditions.checkState(state == null, "State %s has a state object already", name());
        this.state = Preconditions.checkNotNull(created);
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
