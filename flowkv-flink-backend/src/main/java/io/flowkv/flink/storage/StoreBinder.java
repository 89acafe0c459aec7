package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * Binds a registered state to its storage on first use, choosing the store from everything the
 * operator has registered by then, and logs the choice once per state and subtask.
 */
@Internal
public final class StoreBinder {
    private static final Logger LOG = LoggerFactory.getLogger(StoreBinder.class);

    private final String operatorIdentifier;
    private final StorageFactory factory;
    private final StoreSelector selector;
    private final StateRegistry states;

    public StoreBinder(
            String operatorIdentifier,
            StorageFactory factory,
            StorePattern override,
            StateRegistry states) {
        this.operatorIdentifier = operatorIdentifier;
        this.factory = factory;
        this.selector =
                new StoreSelector(override, factory.settings().perKeyWindowsThreshold() > 0);
        this.states = states;
    }

    private Runnable afterMoveToAur = () -> {};

    /**
     * What to do after a judged window contents storage moved to AUR (the backend hands it the
     * windows' pending timers); applies to storages bound before and after this call.
     */
    public void afterMoveToAur(Runnable action) {
        this.afterMoveToAur = action;
    }

    /**
     * Binds a storage reopened from a checkpoint as it will be used: an AAR one that the store
     * choice would judge at run time is judged again (its checkpoint was taken before a verdict or
     * after one for aligned windows).
     */
    public void bindRestored(RegisteredState registered, StateStorage storage) {
        registered.bindStorage(
                storage instanceof AarStateStorage
                        ? asUsed(registered, choose(registered), storage)
                        : storage);
    }

    /** {@code storage} behind the run-time judgement if the choice asks for one. */
    private StateStorage asUsed(
            RegisteredState registered, StoreSelector.Choice choice, StateStorage storage) {
        return choice.judged() && storage instanceof AarStateStorage
                ? judged(registered, (AarStateStorage) storage)
                : storage;
    }

    private StoreSelector.Choice choose(RegisteredState registered) {
        return selector.choose(
                operatorIdentifier,
                registered.name(),
                registered.metaInfo().getStateType(),
                registered.metaInfo().getNamespaceSerializer(),
                states.names());
    }

    private StateStorage judged(RegisteredState registered, AarStateStorage aar) {
        return new AdaptiveWindowStorage(
                operatorIdentifier + ": " + registered.name(),
                aar,
                factory.settings().perKeyWindowsThreshold(),
                dir -> factory.openAur(registered.id(), dir),
                () -> afterMoveToAur.run());
    }

    public StorageFactory factory() {
        return factory;
    }

    public StateStorage storage(RegisteredState registered) throws IOException {
        if (registered.storage() == null) {
            StoreSelector.Choice choice = choose(registered);
            StateStorage storage =
                    factory.create(
                            registered.id(),
                            registered.name(),
                            choice.pattern(),
                            registered.metaInfo().getStateType() == StateDescriptor.Type.LIST);
            registered.bindStorage(asUsed(registered, choice, storage));
            LOG.info(
                    "FlowKV {}: {} -> {} ({}{})",
                    operatorIdentifier,
                    registered.name(),
                    choice.pattern(),
                    choice.reason(),
                    choice.judged() ? "; moves to AUR if the appends show windows per key" : "");
        }
        return registered.storage();
    }

    /**
     * The state's storage as whole values per (key, namespace): map state's per-entry records seen
     * through {@link MapStateStorage}. For snapshots, migration and key iteration.
     */
    public StateStorage values(RegisteredState registered) throws IOException {
        StateStorage storage = storage(registered);
        return registered.metaInfo().getStateType() == StateDescriptor.Type.MAP
                ? new MapStateStorage((ValueStateStorage) storage)
                : storage;
    }
}
