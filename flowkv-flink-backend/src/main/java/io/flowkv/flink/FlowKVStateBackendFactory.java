package io.flowkv.flink;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackendFactory;

/**
 * Creates a {@link FlowKVStateBackend} from configuration. Selected by {@code state.backend.type:
 * io.flowkv.flink.FlowKVStateBackendFactory}, or by the short name {@code flowkv} through the
 * top-level class {@code flowkv}.
 */
public class FlowKVStateBackendFactory implements StateBackendFactory<FlowKVStateBackend> {
    @Override
    public FlowKVStateBackend createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        return new FlowKVStateBackend().configure(config, classLoader);
    }
}
