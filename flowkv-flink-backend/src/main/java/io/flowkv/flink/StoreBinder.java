package io.flowkv.flink;

import org.apache.flink.api.common.state.StateDescriptor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Map;

/**
 * Binds a registered state to its storage on first use, choosing the store from everything the
 * operator has registered by then, and logs the choice once per state and subtask.
 */
final class StoreBinder {
    private static final Logger LOG = LoggerFactory.getLogger(StoreBinder.class);

    private final String operatorIdentifier;
    private final StorageFactory factory;
    private final StoreSelector selector;
    private final Map<String, RegisteredState> states;

    StoreBinder(
            String operatorIdentifier,
            StorageFactory factory,
            StorePattern override,
            Map<String, RegisteredState> states) {
        this.operatorIdentifier = operatorIdentifier;
        this.factory = factory;
        this.selector = new StoreSelector(override);
        this.states = states;
    }

    StorageFactory factory() {
        return factory;
    }

    StateStorage storage(RegisteredState registered) throws IOException {
        if (registered.storage == null) {
            StoreSelector.Choice choice =
                    selector.choose(
                            operatorIdentifier,
                            registered.name(),
                            registered.metaInfo.getStateType(),
                            registered.metaInfo.getNamespaceSerializer(),
                            states.keySet());
            registered.storage =
                    factory.create(
                            registered.id,
                            registered.name(),
                            choice.pattern(),
                            registered.metaInfo.getStateType() == StateDescriptor.Type.LIST);
            registered.pattern = choice.pattern();
            LOG.info(
                    "FlowKV {}: {} -> {} ({})",
                    operatorIdentifier,
                    registered.name(),
                    choice.pattern(),
                    choice.reason());
        }
        return registered.storage;
    }
}
