package io.flowkv.flink.restore;

import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.ListStateStorage;
import io.flowkv.flink.storage.MapStateStorage;
import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.restore.FullSnapshotRestoreOperation;
import org.apache.flink.runtime.state.restore.KeyGroup;
import org.apache.flink.runtime.state.restore.KeyGroupEntry;
import org.apache.flink.runtime.state.restore.SavepointRestoreResult;
import org.apache.flink.runtime.state.restore.ThrowingIterator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Restores a backend from full snapshots in Flink's canonical key-value layout: FlowKV's own
 * checkpoints and savepoints, and canonical savepoints of the HashMap and RocksDB backends. Flink
 * hands over only the key groups of this subtask's range (rescaling included), and {@link
 * FullSnapshotRestoreOperation} checks the key serializer.
 */
@Internal
public final class FlowKVRestoreOperation<K> extends RestoreOperation<K> {

    public FlowKVRestoreOperation(RestoreTarget<K> target) {
        super(target);
    }

    public void restore(Collection<KeyedStateHandle> handles) throws Exception {
        if (handles == null || handles.isEmpty()) {
            return;
        }
        FullSnapshotRestoreOperation<K> operation =
                new FullSnapshotRestoreOperation<>(
                        keyGroupRange, userCodeClassLoader, handles, keySerializerProvider);
        try (ThrowingIterator<SavepointRestoreResult> results = operation.restore()) {
            while (results.hasNext()) {
                apply(results.next());
            }
        }
        for (RegisteredState state : states.all()) {
            if (state.storage() != null) {
                state.storage().flush();
            }
        }
    }

    /** Where the entries of one state id of a snapshot go. */
    private interface Target {
        void accept(byte[] key, byte[] value) throws IOException;

        default void finish() throws IOException {}
    }

    private void apply(SavepointRestoreResult result) throws Exception {
        List<StateMetaInfoSnapshot> metaInfos = result.getStateMetaInfoSnapshots();
        List<Target> targets = new ArrayList<>(metaInfos.size());
        for (StateMetaInfoSnapshot metaInfo : metaInfos) {
            switch (metaInfo.getBackendStateType()) {
                case KEY_VALUE:
                    targets.add(keyValueTarget(metaInfo));
                    break;
                case PRIORITY_QUEUE:
                    targets.add(queueTarget(metaInfo));
                    break;
                default:
                    throw new IllegalStateException(
                            "Expected only keyed state, got "
                                    + metaInfo.getBackendStateType()
                                    + " for state "
                                    + metaInfo.getName());
            }
        }
        try (ThrowingIterator<KeyGroup> keyGroups = result.getRestoredKeyGroups()) {
            while (keyGroups.hasNext()) {
                try (ThrowingIterator<KeyGroupEntry> entries =
                        keyGroups.next().getKeyGroupEntries()) {
                    while (entries.hasNext()) {
                        KeyGroupEntry entry = entries.next();
                        targets.get(entry.getKvStateId()).accept(entry.getKey(), entry.getValue());
                    }
                }
            }
        }
        for (Target target : targets) {
            target.finish();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Target keyValueTarget(StateMetaInfoSnapshot snapshot) throws IOException {
        RegisteredState registered = registeredState(states, snapshot);
        RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo = registered.metaInfo();
        KeyBytes<K, ?> codec =
                new KeyBytes<>(
                        keySerializerProvider.currentSchemaSerializer(),
                        metaInfo.getPreviousNamespaceSerializer(),
                        keyGroupPrefixBytes);
        RegisteredState state = registered;
        switch (metaInfo.getStateType()) {
            case LIST:
                TypeSerializer<Object> elementSerializer =
                        ((ListSerializer<Object>) metaInfo.getPreviousStateSerializer())
                                .getElementSerializer();
                return (key, value) -> restoreList(state, codec, elementSerializer, key, value);
            case MAP:
                return new MapTarget(state, codec);
            default:
                return (key, value) -> {
                    int split = codec.splitCompositeKey(key);
                    ((ValueStateStorage) binder.storage(state))
                            .put(
                                    codec.keyGroupOf(key),
                                    Arrays.copyOfRange(key, 0, split),
                                    Arrays.copyOfRange(key, split, key.length),
                                    value);
                };
        }
    }

    /** Splits a delimited list into its serialized elements without re-serializing them. */
    private void restoreList(
            RegisteredState state,
            KeyBytes<K, ?> codec,
            TypeSerializer<Object> elementSerializer,
            byte[] composite,
            byte[] value)
            throws IOException {
        int split = codec.splitCompositeKey(composite);
        byte[] key = Arrays.copyOfRange(composite, 0, split);
        byte[] namespace = Arrays.copyOfRange(composite, split, composite.length);
        int keyGroup = codec.keyGroupOf(composite);
        ListStateStorage storage = (ListStateStorage) binder.storage(state);
        DataInputDeserializer in = new DataInputDeserializer(value);
        while (in.available() > 0) {
            int start = in.getPosition();
            elementSerializer.deserialize(in);
            storage.append(
                    keyGroup, key, namespace, Arrays.copyOfRange(value, start, in.getPosition()));
            if (in.available() > 0) {
                in.readByte();
            }
        }
    }

    /**
     * Map entries arrive one user key at a time; the entries of one (key, namespace) come together
     * in every canonical snapshot, so they are gathered and stored as one batch of entries.
     */
    private final class MapTarget implements Target {
        private final RegisteredState state;
        private final KeyBytes<K, ?> codec;
        private byte[] currentKey;
        private byte[] currentNamespace;
        private final List<byte[]> userKeys = new ArrayList<>();
        private final List<byte[]> userValues = new ArrayList<>();

        MapTarget(RegisteredState state, KeyBytes<K, ?> codec) {
            this.state = state;
            this.codec = codec;
        }

        @Override
        public void accept(byte[] composite, byte[] value) throws IOException {
            int keyEnd = codec.splitCompositeKey(composite);
            int namespaceEnd = codec.namespaceEnd(composite, keyEnd);
            byte[] key = Arrays.copyOfRange(composite, 0, keyEnd);
            byte[] namespace = Arrays.copyOfRange(composite, keyEnd, namespaceEnd);
            if (currentKey != null
                    && (!Arrays.equals(key, currentKey)
                            || !Arrays.equals(namespace, currentNamespace))) {
                finish();
            }
            currentKey = key;
            currentNamespace = namespace;
            userKeys.add(Arrays.copyOfRange(composite, namespaceEnd, composite.length));
            boolean isNull = value.length == 0 || value[0] != 0;
            userValues.add(isNull ? null : Arrays.copyOfRange(value, 1, value.length));
        }

        @Override
        public void finish() throws IOException {
            if (currentKey == null) {
                return;
            }
            // Merges into what is stored: a map met again later keeps its earlier entries.
            new MapStateStorage((ValueStateStorage) binder.storage(state))
                    .put(
                            codec.keyGroupOf(currentKey),
                            currentKey,
                            currentNamespace,
                            MapStateStorage.encodeRaw(userKeys, userValues));
            currentKey = null;
            currentNamespace = null;
            userKeys.clear();
            userValues.clear();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Target queueTarget(StateMetaInfoSnapshot snapshot) {
        HeapPriorityQueueSnapshotRestoreWrapper<HeapPriorityQueueElement> queue =
                restoredQueue(queues, snapshot, queueFactory, keyGroupRange, numberOfKeyGroups);
        TypeSerializer<HeapPriorityQueueElement> serializer =
                queue.getMetaInfo().getElementSerializer();
        DataInputDeserializer in = new DataInputDeserializer();
        return (key, value) -> {
            in.setBuffer(key);
            in.skipBytesToRead(keyGroupPrefixBytes);
            queue.getPriorityQueue().add(serializer.deserialize(in));
        };
    }

    /** The registered key-value state named in {@code snapshot}, registered now if it is new. */
    static RegisteredState registeredState(StateRegistry states, StateMetaInfoSnapshot snapshot) {
        RegisteredState registered = states.get(snapshot.getName());
        return registered != null
                ? registered
                : states.register(new RegisteredKeyValueStateBackendMetaInfo<>(snapshot));
    }

    /** The timer queue named in {@code snapshot}, created now if the backend has none yet. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static HeapPriorityQueueSnapshotRestoreWrapper<HeapPriorityQueueElement> restoredQueue(
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            StateMetaInfoSnapshot snapshot,
            HeapPriorityQueueSetFactory queueFactory,
            KeyGroupRange keyGroupRange,
            int numberOfKeyGroups) {
        HeapPriorityQueueSnapshotRestoreWrapper wrapper = queues.get(snapshot.getName());
        if (wrapper == null) {
            RegisteredPriorityQueueStateBackendMetaInfo metaInfo =
                    new RegisteredPriorityQueueStateBackendMetaInfo<>(snapshot);
            wrapper =
                    new HeapPriorityQueueSnapshotRestoreWrapper(
                            queueFactory.create(
                                    snapshot.getName(), metaInfo.getElementSerializer()),
                            metaInfo,
                            KeyExtractorFunction.forKeyedObjects(),
                            keyGroupRange,
                            numberOfKeyGroups);
            queues.put(snapshot.getName(), wrapper);
        }
        return wrapper;
    }
}
