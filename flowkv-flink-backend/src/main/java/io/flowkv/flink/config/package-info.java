/**
 * The resolved {@code state.backend.flowkv.*} settings: {@link
 * io.flowkv.flink.config.FlowKVSettings}, parsed and validated from the options of {@link
 * io.flowkv.flink.FlowKVOptions}, which a {@code FlowKVStateBackend} carries to the TaskManagers,
 * and the {@link io.flowkv.flink.config.MetricsGroup}s they switch on. The storages size their
 * stores from them; the rest of the backend reads them when it is built.
 */
package io.flowkv.flink.config;
