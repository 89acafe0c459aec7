package io.flowkv.flink.restore;

import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.StoreBinder;

import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;

import java.util.Map;

/** What both restores know of the backend they fill ({@link RestoreTarget}), as fields. */
abstract class RestoreOperation<K> {
    protected final KeyGroupRange keyGroupRange;
    protected final int numberOfKeyGroups;
    protected final ClassLoader userCodeClassLoader;
    protected final StateSerializerProvider<K> keySerializerProvider;
    protected final int keyGroupPrefixBytes;
    protected final StateRegistry states;
    protected final Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues;
    protected final HeapPriorityQueueSetFactory queueFactory;
    protected final StoreBinder binder;

    RestoreOperation(RestoreTarget<K> target) {
        this.keyGroupRange = target.keyGroupRange();
        this.numberOfKeyGroups = target.numberOfKeyGroups();
        this.userCodeClassLoader = target.userCodeClassLoader();
        this.keySerializerProvider = target.keySerializerProvider();
        this.keyGroupPrefixBytes = target.keyGroupPrefixBytes();
        this.states = target.states();
        this.queues = target.queues();
        this.queueFactory = target.queueFactory();
        this.binder = target.binder();
    }
}
