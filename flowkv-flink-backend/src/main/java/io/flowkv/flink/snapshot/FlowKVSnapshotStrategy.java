package io.flowkv.flink.snapshot;

import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.storage.StoreBinder;
import io.flowkv.flink.timers.FlowKVTimerQueue;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointStreamWithResultProvider;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.FullSnapshotAsyncWriter;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import javax.annotation.Nonnull;

import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

/**
 * Full snapshots in Flink's canonical key-value layout, for checkpoints and savepoints alike.
 *
 * <p>Synchronous part: flush every store and spill all entries into files bucketed by key group
 * ({@link SnapshotSpill}), and copy the timer queues (Flink's own copy-on-snapshot). The stores are
 * free to change again as soon as it returns. Asynchronous part: {@link FullSnapshotAsyncWriter}
 * streams the spilled entries, key group by key group, to the checkpoint storage.
 *
 * <p>The synchronous part costs a sequential pass over the state, so checkpoints take it only with
 * {@code full-checkpoint-format: CANONICAL}; by default they upload the sealed store files instead
 * ({@link FlowKVIncrementalSnapshotStrategy}), which needs no spill.
 */
@Internal
public final class FlowKVSnapshotStrategy<K>
        implements SnapshotStrategy<KeyedStateHandle, FlowKVSnapshotResources<K>> {
    private final StateRegistry states;
    private final HeapPriorityQueuesManager priorityQueues;
    private final StoreBinder binder;
    private final TypeSerializer<K> keySerializer;
    private final StreamCompressionDecorator compression;
    private final KeyGroupRange keyGroupRange;
    private final int keyGroupPrefixBytes;
    private final Path workDirectory;

    public FlowKVSnapshotStrategy(
            StateRegistry states,
            HeapPriorityQueuesManager priorityQueues,
            StoreBinder binder,
            TypeSerializer<K> keySerializer,
            StreamCompressionDecorator compression,
            KeyGroupRange keyGroupRange,
            int keyGroupPrefixBytes,
            Path workDirectory) {
        this.states = states;
        this.priorityQueues = priorityQueues;
        this.binder = binder;
        this.keySerializer = keySerializer;
        this.compression = compression;
        this.keyGroupRange = keyGroupRange;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.workDirectory = workDirectory;
    }

    @Override
    public FlowKVSnapshotResources<K> syncPrepareResources(long checkpointId) throws Exception {
        RegisteredSnapshot taken = RegisteredSnapshot.take(states, priorityQueues);
        List<StateMetaInfoSnapshot> metaInfos = taken.metaInfos();
        List<RegisteredState> kvStates = taken.kvStates();
        List<HeapPriorityQueueStateSnapshot<?>> queues = taken.queues();
        // Stored queues are spilled below with the key-value states, not copied onto the heap.
        List<FlowKVTimerQueue<?>> storedQueues = taken.storedQueues();
        Path spillDir =
                workDirectory.resolve(
                        "snapshot-"
                                + (checkpointId < 0 ? "savepoint" : checkpointId)
                                + "-"
                                + UUID.randomUUID());
        SnapshotSpill spill = new SnapshotSpill(spillDir, keyGroupRange, keyGroupPrefixBytes);
        try {
            for (int i = 0; i < kvStates.size(); i++) {
                StateStorage storage = binder.values(kvStates.get(i));
                storage.flush();
                spill.add(i, storage);
            }
            for (int q = 0; q < storedQueues.size(); q++) {
                if (storedQueues.get(q) != null) {
                    spill.addTimers(kvStates.size() + q, storedQueues.get(q));
                }
            }
            spill.finish();
        } catch (Exception e) {
            spill.release();
            throw e;
        }
        return new FlowKVSnapshotResources<>(
                metaInfos,
                kvStates,
                queues,
                spill,
                keySerializer,
                keyGroupRange,
                keyGroupPrefixBytes,
                compression);
    }

    @Override
    public SnapshotResultSupplier<KeyedStateHandle> asyncSnapshot(
            FlowKVSnapshotResources<K> resources,
            long checkpointId,
            long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions) {
        if (resources.getMetaInfoSnapshots().isEmpty()) {
            return registry -> SnapshotResult.empty();
        }
        SnapshotType type = checkpointOptions.getCheckpointType();
        return new FullSnapshotAsyncWriter<>(
                type,
                () ->
                        CheckpointStreamWithResultProvider.createSimpleStream(
                                CheckpointedStateScope.EXCLUSIVE, streamFactory),
                resources);
    }
}
