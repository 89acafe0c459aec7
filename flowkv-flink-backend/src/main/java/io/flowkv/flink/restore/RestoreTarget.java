package io.flowkv.flink.restore;

import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.StoreBinder;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;

import java.util.Map;

/**
 * The backend a restore fills: its key groups, its key serializer, the registry the restored states
 * are registered in, the timer queues and where new ones come from, and the binder that opens the
 * states' storages.
 */
@Internal
public record RestoreTarget<K>(
        KeyGroupRange keyGroupRange,
        int numberOfKeyGroups,
        ClassLoader userCodeClassLoader,
        StateSerializerProvider<K> keySerializerProvider,
        int keyGroupPrefixBytes,
        StateRegistry states,
        Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
        HeapPriorityQueueSetFactory queueFactory,
        StoreBinder binder) {}
