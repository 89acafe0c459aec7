/**
 * What a keyed backend reports about its stores: Flink metrics under the operator's metric group
 * ({@link io.flowkv.flink.metrics.FlowKVMetrics}), gauges over counters the stores keep anyway, and
 * the line of store statistics it logs per state when it is disposed ({@link
 * io.flowkv.flink.metrics.StoreStatsLine}). Reads the registered states and their storages; the
 * groups to report are config's {@code MetricsGroup}s.
 */
package io.flowkv.flink.metrics;
