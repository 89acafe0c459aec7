/**
 * Brings a keyed backend's states and timers back from snapshot handles while the backend is built:
 * {@link io.flowkv.flink.restore.FlowKVIncrementalRestoreOperation} from FlowKV's own checkpoints
 * (files checked against the {@code CheckpointMetadata} and reopened in place, or only this range's
 * key groups copied when the range changed), {@link io.flowkv.flink.restore.FlowKVRestoreOperation}
 * from snapshots in Flink's canonical layout, FlowKV's and other backends' alike.
 *
 * <p>Both register the states in the backend's state registry and fill their storages through the
 * store binder (storage package); they read the files of the snapshot package.
 */
package io.flowkv.flink.restore;
