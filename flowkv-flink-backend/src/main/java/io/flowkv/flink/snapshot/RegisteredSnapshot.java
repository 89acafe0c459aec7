package io.flowkv.flink.snapshot;

import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.timers.FlowKVTimerQueue;

import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.util.ArrayList;
import java.util.List;

/**
 * What a snapshot takes of the registered states and timer queues in its synchronous part, the same
 * for full and incremental snapshots: the meta info of every key-value state and then of every
 * queue, and per queue either Flink's copy-on-snapshot of it (heap queues) or the FlowKV store
 * behind it, which the snapshot writes out itself before the synchronous part ends.
 */
record RegisteredSnapshot(
        List<StateMetaInfoSnapshot> metaInfos,
        List<RegisteredState> kvStates,
        List<HeapPriorityQueueStateSnapshot<?>> queues,
        List<FlowKVTimerQueue<?>> storedQueues) {

    static RegisteredSnapshot take(StateRegistry states, HeapPriorityQueuesManager priorityQueues) {
        List<StateMetaInfoSnapshot> metaInfos = new ArrayList<>();
        List<RegisteredState> kvStates = new ArrayList<>(states.all());
        for (RegisteredState state : kvStates) {
            metaInfos.add(state.metaInfo().snapshot());
        }
        List<HeapPriorityQueueStateSnapshot<?>> queues = new ArrayList<>();
        List<FlowKVTimerQueue<?>> storedQueues = new ArrayList<>();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> queue :
                priorityQueues.getRegisteredPQStates().values()) {
            metaInfos.add(queue.getMetaInfo().snapshot());
            FlowKVTimerQueue<?> stored = FlowKVTimerQueue.storedBehind(queue.getPriorityQueue());
            queues.add(stored == null ? queue.stateSnapshot() : null);
            storedQueues.add(stored);
        }
        return new RegisteredSnapshot(metaInfos, kvStates, queues, storedQueues);
    }
}
