/**
 * Checkpoints and savepoints of a keyed backend, and the store flushes that prepare them.
 *
 * <pre>
 *   incremental and NATIVE full checkpoints: FlowKVIncrementalSnapshotStrategy
 *     sync:  seal every storage, hard-link its new files, write stored timers (TimerSnapshotFile)
 *     async: upload the files the last confirmed checkpoint does not hold (UploadedFiles),
 *            write the CheckpointMetadata stream
 *   savepoints and CANONICAL full checkpoints: FlowKVSnapshotStrategy
 *     sync:  flush every storage, spill its entries by key group (SnapshotSpill)
 *     async: FlowKVSnapshotResources, Flink's canonical key-value layout
 *   between checkpoints: PreFlushSchedule spreads the stores' flushes over the interval
 * </pre>
 *
 * The strategies are given the backend's state registry, timer queues and store binder, not the
 * backend; both begin with a {@code RegisteredSnapshot} of the states' and queues' meta info. The
 * restore package reads what they write; the formats are in docs/FORMAT.md.
 */
package io.flowkv.flink.snapshot;
