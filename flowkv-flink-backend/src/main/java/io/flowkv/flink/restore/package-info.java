/**
 * Brings a keyed backend's states and timers back from snapshot handles while the backend is built:
 * {@link io.flowkv.flink.restore.FlowKVIncrementalRestoreOperation} from FlowKV's own checkpoints
 * (files checked against the {@code CheckpointMetadata} and reopened in place, or only this range's
 * key groups copied when the range changed), {@link io.flowkv.flink.restore.FlowKVRestoreOperation}
 * from snapshots in Flink's canonical layout, FlowKV's and other backends' alike.
 *
 * <p>Both are given the backend to fill as a {@link io.flowkv.flink.restore.RestoreTarget}: they
 * register the states in its state registry and fill their storages through its store binder
 * (storage package); they read the files of the snapshot package.
 */
package io.flowkv.flink.restore;
