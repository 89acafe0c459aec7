/**
 * FlowKV as a Flink keyed state backend ({@code state.backend.type: flowkv}): the classes a job or
 * a Flink configuration names, and the keyed backend that wires the subpackages together.
 *
 * <pre>
 *   FlowKVStateBackendFactory -> FlowKVStateBackend: FlowKVOptions -> config.FlowKVSettings;
 *     per operator subtask, restore.* brings states and timers back, then it builds
 *   FlowKVKeyedStateBackend
 *     states     state.FlowKV*State, which see the backend as a state.StateKeyContext
 *     entries    a storage.StateStorage per state, bound on first use by storage.StoreBinder
 *     timers     queues of timers.KeyGroupOrderedQueueSetFactory, fed to the AUR store's
 *                trigger times through timers.TriggerTimeFeed
 *     snapshots  snapshot.FlowKVIncrementalSnapshotStrategy, snapshot.FlowKVSnapshotStrategy
 *     reports    metrics.FlowKVMetrics, metrics.StoreStatsLine
 *
 *   subpackages, each using only those to its right:
 *     restore  snapshot  metrics  state  storage  config  timers
 * </pre>
 *
 * The public API is {@link io.flowkv.flink.FlowKVStateBackend}, {@link
 * io.flowkv.flink.FlowKVStateBackendFactory} (also as the top-level class {@code flowkv}), {@link
 * io.flowkv.flink.FlowKVOptions} and {@link io.flowkv.flink.FileIoFactory}; the subpackages are
 * {@code @Internal}. Of this package, config, snapshot and restore use {@link
 * io.flowkv.flink.FlowKVOptions} and nothing else.
 */
package io.flowkv.flink;
