package io.flowkv.flink;

import io.flowkv.flink.metrics.FlowKVMetrics;
import io.flowkv.flink.metrics.StoreStatsLine;
import io.flowkv.flink.restore.RestoreFetch;
import io.flowkv.flink.snapshot.FlowKVIncrementalSnapshotStrategy;
import io.flowkv.flink.snapshot.FlowKVSnapshotStrategy;
import io.flowkv.flink.snapshot.PreFlushSchedule;
import io.flowkv.flink.snapshot.UploadedFiles;
import io.flowkv.flink.state.AbstractFlowKVState;
import io.flowkv.flink.state.FlowKVAggregatingState;
import io.flowkv.flink.state.FlowKVListState;
import io.flowkv.flink.state.FlowKVMapState;
import io.flowkv.flink.state.FlowKVReducingState;
import io.flowkv.flink.state.FlowKVValueState;
import io.flowkv.flink.state.ObjectCacheBudget;
import io.flowkv.flink.state.StateKeyContext;
import io.flowkv.flink.state.WindowStates;
import io.flowkv.flink.storage.ByteArray;
import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.ListStateStorage;
import io.flowkv.flink.storage.MapStateStorage;
import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.storage.StoreBinder;
import io.flowkv.flink.storage.StorePattern;
import io.flowkv.flink.storage.StoreSelector;
import io.flowkv.flink.storage.ValueStateStorage;
import io.flowkv.flink.timers.KeyGroupOrderedQueueSetFactory;
import io.flowkv.flink.timers.TriggerTimeFeed;

import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;

/**
 * The keyed state backend of one operator subtask on FlowKV stores. Each registered state gets the
 * store that fits how the operator uses it ({@link StoreSelector}), bound on its first access —
 * when the operator's {@code open()} has registered all its states — and logged once.
 *
 * <p>Timers live where {@code state.backend.flowkv.timer-service} puts them ({@link
 * KeyGroupOrderedQueueSetFactory}): on the heap, in a FlowKV store, or on the heap until a bound
 * and in the store beyond it (the default). Checkpoints seal the stores and upload their files
 * ({@link FlowKVIncrementalSnapshotStrategy}): incremental ones only the files no confirmed
 * checkpoint holds, full ones all of them. Savepoints, and full checkpoints with {@code
 * full-checkpoint-format: CANONICAL}, are canonical: the synchronous part flushes the stores and
 * spills their entries by key group ({@link FlowKVSnapshotStrategy}); the asynchronous part writes
 * them in Flink's key-value layout, so they restore on HashMap or RocksDB and theirs on FlowKV.
 *
 * <p>Single-threaded like every keyed backend: only the task thread calls it.
 */
public class FlowKVKeyedStateBackend<K> extends AbstractKeyedStateBackend<K>
        implements StateKeyContext<K> {
    private static final Logger LOG = LoggerFactory.getLogger(FlowKVKeyedStateBackend.class);

    private final String operatorIdentifier;
    private final FlowKVMetrics metrics;
    private final StoreBinder binder;
    private final int keyGroupPrefixBytes;
    private final StateRegistry states;
    private final WindowStates<K> windowStates = new WindowStates<>();
    private final HeapPriorityQueuesManager priorityQueuesManager;
    private final FlowKVSnapshotStrategy<K> snapshotStrategy;
    private final AutoCloseable memoryLease;
    private final boolean incrementalCheckpoints;
    private final FlowKVOptions.FullCheckpointFormat fullCheckpointFormat;
    private final FlowKVOptions.CheckpointCompression checkpointCompression;
    private final UploadedFiles uploads;
    private final LocalRecoveryConfig localRecovery;
    private final RestoreFetch restoreFetch;
    private final UUID backendIdentifier = UUID.randomUUID();
    private final ObjectCacheBudget objectCacheBudget;
    private long keyVersion;
    private boolean disposed;

    FlowKVKeyedStateBackend(
            TaskKvStateRegistry kvStateRegistry,
            TypeSerializer<K> keySerializer,
            ClassLoader userCodeClassLoader,
            ExecutionConfig executionConfig,
            TtlTimeProvider ttlTimeProvider,
            LatencyTrackingStateConfig latencyTrackingStateConfig,
            SizeTrackingStateConfig sizeTrackingStateConfig,
            CloseableRegistry cancelStreamRegistry,
            StreamCompressionDecorator keyGroupCompressionDecorator,
            InternalKeyContext<K> keyContext,
            String operatorIdentifier,
            StoreBinder binder,
            StateRegistry restoredStates,
            HeapPriorityQueuesManager priorityQueuesManager,
            AutoCloseable memoryLease,
            boolean incrementalCheckpoints,
            FlowKVOptions.FullCheckpointFormat fullCheckpointFormat,
            FlowKVOptions.CheckpointCompression checkpointCompression,
            UploadedFiles uploads,
            LocalRecoveryConfig localRecovery,
            RestoreFetch restoreFetch,
            FlowKVMetrics metrics) {
        super(
                kvStateRegistry,
                keySerializer,
                userCodeClassLoader,
                executionConfig,
                ttlTimeProvider,
                latencyTrackingStateConfig,
                sizeTrackingStateConfig,
                cancelStreamRegistry,
                keyGroupCompressionDecorator,
                keyContext);
        this.operatorIdentifier = operatorIdentifier;
        this.binder = binder;
        this.preFlushes =
                new PreFlushSchedule(binder.factory().settings().preFlushesPerCheckpoint());
        long objectCacheBytes =
                binder.factory().settings().objectCacheBytes(Runtime.getRuntime().maxMemory());
        this.objectCacheBudget =
                objectCacheBytes > 0 ? ObjectCacheBudget.shared(objectCacheBytes) : null;
        binder.afterMoveToAur(this::offerPendingWindowTimers);
        this.keyGroupPrefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(
                        keyContext.getNumberOfKeyGroups());
        this.states = restoredStates;
        this.priorityQueuesManager = priorityQueuesManager;
        this.memoryLease = memoryLease;
        this.incrementalCheckpoints = incrementalCheckpoints;
        this.fullCheckpointFormat = fullCheckpointFormat;
        this.checkpointCompression = checkpointCompression;
        this.uploads = uploads;
        this.localRecovery = localRecovery;
        this.restoreFetch = restoreFetch;
        this.metrics = metrics;
        for (RegisteredState restored : restoredStates.all()) {
            metrics.register(restored);
        }
        this.snapshotStrategy =
                new FlowKVSnapshotStrategy<>(
                        states,
                        priorityQueuesManager,
                        binder,
                        keySerializer,
                        keyGroupCompressionDecorator,
                        keyContext.getKeyGroupRange(),
                        keyGroupPrefixBytes,
                        binder.factory().baseDirectory());
    }

    // ------------------------------------------------------------------ keys

    @Override
    public void setCurrentKey(K newKey) {
        keyVersion++;
        preFlushIfDue();
        super.setCurrentKey(newKey);
    }

    @Override
    public void setCurrentKeyAndKeyGroup(K newKey, int newKeyGroupIndex) {
        keyVersion++;
        preFlushIfDue();
        super.setCurrentKeyAndKeyGroup(newKey, newKeyGroupIndex);
    }

    // ------------------------------------------------------------------ pre-flushes

    /** Key changes between looks at the clock for a due pre-flush. */
    private static final int PRE_FLUSH_CHECK_EVERY = 256;

    private final PreFlushSchedule preFlushes;
    private int keyChangesSinceClock;

    /** One store instance: a state's storage and the instance's index in it. */
    private record StorePart(StateStorage storage, int part) {}

    /** The store instances the schedule counts, in the order of the last checkpoint. */
    private final List<StorePart> preFlushParts = new ArrayList<>();

    /** The schedule's instance numbers flushed since the last checkpoint; for tests. */
    private final List<Integer> preFlushed = new ArrayList<>();

    @VisibleForTesting
    public List<Integer> preFlushedSinceCheckpoint() {
        return List.copyOf(preFlushed);
    }

    /**
     * Flushes the store instance whose turn has come ({@link PreFlushSchedule}). Called between
     * records and timers, where no store operation is under way.
     */
    private void preFlushIfDue() {
        if (++keyChangesSinceClock < PRE_FLUSH_CHECK_EVERY) {
            return;
        }
        keyChangesSinceClock = 0;
        int slot = preFlushes.due(System.nanoTime());
        if (slot == PreFlushSchedule.NONE || slot >= preFlushParts.size()) {
            return;
        }
        try {
            StorePart due = preFlushParts.get(slot);
            due.storage().flushPart(due.part());
            preFlushed.add(slot);
        } catch (IOException e) {
            throw new FlinkRuntimeException(
                    "FlowKV could not flush a store ahead of a checkpoint", e);
        }
    }

    /** A checkpoint's synchronous part starts: restart the schedule over today's instances. */
    private void checkpointStarts() {
        preFlushParts.clear();
        preFlushed.clear();
        for (RegisteredState registered : states.all()) {
            StateStorage storage = registered.storage();
            if (storage == null) {
                continue;
            }
            for (int part = 0; part < storage.parts(); part++) {
                preFlushParts.add(new StorePart(storage, part));
            }
        }
        preFlushes.checkpointed(System.nanoTime(), preFlushParts.size());
    }

    @Override
    public long keyVersion() {
        return keyVersion;
    }

    @Override
    public ObjectCacheBudget objectCacheBudget() {
        return objectCacheBudget;
    }

    /**
     * Writes the values states keep as live objects into their stores: before anything reads the
     * stores directly (snapshots, key iteration, migration).
     */
    private void writeBackCachedValues() throws IOException {
        for (RegisteredState registered : states.all()) {
            if (registered.state() instanceof AbstractFlowKVState) {
                ((AbstractFlowKVState<?, ?, ?>) registered.state()).writeBackCached();
            }
        }
    }

    @Override
    public int keyGroupPrefixBytes() {
        return keyGroupPrefixBytes;
    }

    @Override
    public <N> KeyBytes<K, N> keyBytes(TypeSerializer<N> namespaceSerializer) {
        return new KeyBytes<>(getKeySerializer(), namespaceSerializer, keyGroupPrefixBytes);
    }

    // ------------------------------------------------------------------ state registration

    @Override
    @Nonnull
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer,
            @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory)
            throws Exception {
        return createOrUpdateInternalState(
                namespaceSerializer, stateDesc, snapshotTransformFactory, false);
    }

    @Override
    @Nonnull
    @SuppressWarnings("unchecked")
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer,
            @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory,
            boolean allowFutureMetadataUpdates)
            throws Exception {
        RegisteredState registered = states.get(stateDesc.getName());
        RegisteredKeyValueStateBackendMetaInfo<N, SV> metaInfo;
        if (registered == null) {
            metaInfo =
                    new RegisteredKeyValueStateBackendMetaInfo<>(
                            stateDesc.getType(),
                            stateDesc.getName(),
                            namespaceSerializer,
                            stateDesc.getSerializer(),
                            StateSnapshotTransformFactory.noTransform());
            registered = states.register(metaInfo);
            metrics.register(registered);
        } else {
            metaInfo = updateMetaInfo(registered, stateDesc, namespaceSerializer);
        }
        if (allowFutureMetadataUpdates) {
            metaInfo = metaInfo.withSerializerUpgradesAllowed();
        }
        registered.updateMetaInfo(metaInfo);

        AbstractFlowKVState<K, N, SV> state = (AbstractFlowKVState<K, N, SV>) registered.state();
        if (state == null) {
            state =
                    createState(
                            stateDesc,
                            registered,
                            namespaceSerializer,
                            metaInfo.getStateSerializer(),
                            windowStates);
            registered.bindState(state);
        } else {
            state.reregistered(stateDesc, namespaceSerializer, metaInfo.getStateSerializer());
        }
        return (IS) state;
    }

    @SuppressWarnings("unchecked")
    private <N, SV, S extends State> RegisteredKeyValueStateBackendMetaInfo<N, SV> updateMetaInfo(
            RegisteredState registered,
            StateDescriptor<S, SV> stateDesc,
            TypeSerializer<N> namespaceSerializer)
            throws Exception {
        RegisteredKeyValueStateBackendMetaInfo<N, SV> restored =
                (RegisteredKeyValueStateBackendMetaInfo<N, SV>) registered.metaInfo();
        TypeSerializer<N> previousNamespaceSerializer = restored.getNamespaceSerializer();
        TypeSerializerSchemaCompatibility<N> namespaceCompatibility =
                restored.updateNamespaceSerializer(namespaceSerializer);
        if (namespaceCompatibility.isCompatibleAfterMigration()
                || namespaceCompatibility.isIncompatible()) {
            throw new StateMigrationException(
                    "The new namespace serializer ("
                            + namespaceSerializer
                            + ") must be compatible with the old namespace serializer ("
                            + previousNamespaceSerializer
                            + ").");
        }
        restored.checkStateMetaInfo(stateDesc);
        TypeSerializer<SV> previousStateSerializer = restored.getStateSerializer();
        TypeSerializerSchemaCompatibility<SV> stateCompatibility =
                restored.updateStateSerializer(stateDesc.getSerializer());
        if (stateCompatibility.isIncompatible()) {
            throw new StateMigrationException(
                    "The new state serializer ("
                            + stateDesc.getSerializer()
                            + ") must not be incompatible with the old state serializer ("
                            + previousStateSerializer
                            + ").");
        }
        if (stateCompatibility.isCompatibleAfterMigration()) {
            migrateStateValues(registered, stateDesc, restored);
        }
        return restored;
    }

    /**
     * Rewrites every stored value of a restored state from the previous serializer's format to the
     * new one, as Flink's RocksDB backend does; keys and namespaces are not migrated.
     */
    @SuppressWarnings("unchecked")
    private <N, SV, S extends State> void migrateStateValues(
            RegisteredState registered,
            StateDescriptor<S, SV> stateDesc,
            RegisteredKeyValueStateBackendMetaInfo<N, SV> metaInfo)
            throws Exception {
        LOG.info(
                "Performing state migration for state {} because the state serializer's schema, "
                        + "i.e. serialization format, has changed.",
                stateDesc);
        TypeSerializer<SV> prior = metaInfo.getPreviousStateSerializer();
        TypeSerializer<SV> current = metaInfo.getStateSerializer();
        AbstractFlowKVState<K, N, SV> migrator =
                createState(
                        stateDesc,
                        registered,
                        metaInfo.getNamespaceSerializer(),
                        current,
                        new WindowStates<>()); // a migrator feeds no trigger times
        writeBackCachedValues();
        StateStorage storage = binder.values(registered);
        List<byte[][]> entries = new ArrayList<>();
        storage.forEach(
                (key, namespace, value, offset, length) ->
                        entries.add(
                                new byte[][] {
                                    key.clone(),
                                    namespace.clone(),
                                    java.util.Arrays.copyOfRange(value, offset, offset + length)
                                }));
        Set<String> cleared = new HashSet<>();
        for (byte[][] entry : entries) {
            byte[] migrated = migrator.migrateValue(entry[2], prior, current);
            int keyGroup = KeyBytes.keyGroupOf(entry[0], keyGroupPrefixBytes());
            boolean map = storage instanceof MapStateStorage;
            if (storage.isList() || map) {
                // A list comes element by element, a map entry by entry (whose key bytes may
                // change): clear each once, then re-append or re-put.
                String id =
                        java.util.Arrays.toString(entry[0]) + java.util.Arrays.toString(entry[1]);
                if (cleared.add(id)) {
                    storage.remove(keyGroup, entry[0], entry[1]);
                }
                if (storage instanceof ListStateStorage) {
                    ((ListStateStorage) storage).append(keyGroup, entry[0], entry[1], migrated);
                } else {
                    ((ValueStateStorage) storage).put(keyGroup, entry[0], entry[1], migrated);
                }
            } else {
                ((ValueStateStorage) storage).put(keyGroup, entry[0], entry[1], migrated);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private <N, SV, S extends State> AbstractFlowKVState<K, N, SV> createState(
            StateDescriptor<S, SV> stateDesc,
            RegisteredState registered,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer,
            WindowStates<K> windows)
            throws IOException {
        if (stateDesc.getType() == StateDescriptor.Type.LIST) {
            return FlowKVListState.create(
                    stateDesc,
                    this,
                    new LazyListStorage(registered),
                    namespaceSerializer,
                    stateSerializer,
                    windows);
        }
        ValueStateStorage storage = new LazyValueStorage(registered);
        switch (stateDesc.getType()) {
            case VALUE:
                return FlowKVValueState.create(
                        stateDesc, this, storage, namespaceSerializer, stateSerializer);
            case MAP:
                return FlowKVMapState.create(
                        stateDesc, this, storage, namespaceSerializer, stateSerializer);
            case REDUCING:
                return FlowKVReducingState.create(
                        stateDesc, this, storage, namespaceSerializer, stateSerializer);
            case AGGREGATING:
                return FlowKVAggregatingState.create(
                        stateDesc, this, storage, namespaceSerializer, stateSerializer);
            default:
                throw new FlinkRuntimeException(
                        String.format(
                                "State %s is not supported by %s",
                                stateDesc.getClass(), getClass()));
        }
    }

    /** The state's storage, created on first use. */
    @VisibleForTesting
    public StateStorage storage(RegisteredState registered) throws IOException {
        return binder.storage(registered);
    }

    /** The store chosen for a state, or null before its first use; for tests and metrics. */
    public StorePattern storePattern(String stateName) {
        RegisteredState registered = states.get(stateName);
        return registered == null ? null : registered.pattern();
    }

    @VisibleForTesting
    public StateRegistry registeredStates() {
        return states;
    }

    @VisibleForTesting
    public HeapPriorityQueuesManager priorityQueues() {
        return priorityQueuesManager;
    }

    /** Defers the storage choice of a state to its first access. */
    private abstract class LazyStorage<S extends StateStorage> implements StateStorage {
        private final RegisteredState registered;

        LazyStorage(RegisteredState registered) {
            this.registered = registered;
        }

        @SuppressWarnings("unchecked")
        S target() throws IOException {
            return (S) storage(registered);
        }

        @Override
        public StorePattern pattern() {
            return registered.pattern();
        }

        @Override
        public void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException {
            target().remove(keyGroup, key, namespace);
        }

        @Override
        public void forEach(io.flowkv.core.EntryVisitor visitor) throws IOException {
            target().forEach(visitor);
        }

        @Override
        public io.flowkv.core.TriggerTimes triggerTimes(int keyGroup) throws IOException {
            return target().triggerTimes(keyGroup);
        }

        @Override
        public void flush() throws IOException {
            target().flush();
        }

        @Override
        public List<io.flowkv.core.SealedStore> seal() throws IOException {
            return target().seal();
        }

        @Override
        public java.nio.file.Path directory() {
            try {
                return target().directory();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public void close() {}
    }

    private final class LazyListStorage extends LazyStorage<ListStateStorage>
            implements ListStateStorage {
        LazyListStorage(RegisteredState registered) {
            super(registered);
        }

        @Override
        public void append(int keyGroup, byte[] key, byte[] namespace, byte[] element)
                throws IOException {
            target().append(keyGroup, key, namespace, element);
        }

        @Override
        public boolean getElements(
                int keyGroup, byte[] key, byte[] namespace, io.flowkv.core.ValueConsumer out)
                throws IOException {
            return target().getElements(keyGroup, key, namespace, out);
        }
    }

    private final class LazyValueStorage extends LazyStorage<ValueStateStorage>
            implements ValueStateStorage {
        LazyValueStorage(RegisteredState registered) {
            super(registered);
        }

        @Override
        public byte[] get(int keyGroup, byte[] key, byte[] namespace) throws IOException {
            return target().get(keyGroup, key, namespace);
        }

        @Override
        public void put(int keyGroup, byte[] key, byte[] namespace, byte[] value)
                throws IOException {
            target().put(keyGroup, key, namespace, value);
        }
    }

    // ------------------------------------------------------------------ timers

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return new TriggerTimeFeed<>(
                priorityQueuesManager.createOrUpdate(stateName, byteOrderedElementSerializer),
                triggerTimes);
    }

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer,
                    boolean allowFutureMetadataUpdates) {
        return new TriggerTimeFeed<>(
                priorityQueuesManager.createOrUpdate(
                        stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates),
                triggerTimes);
    }

    /** The operator's timers, as trigger times of its windows (see {@link WindowStates}). */
    private final TriggerTimeFeed.Listener triggerTimes =
            new TriggerTimeFeed.Listener() {
                @Override
                public void timerAdded(Object timer) {
                    windowStates.timer(timer, true);
                }

                @Override
                public void timerRemoved(Object timer) {
                    windowStates.timer(timer, false);
                }
            };

    /**
     * Hands every pending timer to the trigger time feed: after window contents moved from AAR to
     * AUR, whose windows' timers were registered while no AUR store listened.
     */
    private void offerPendingWindowTimers() {
        for (org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper<?> queue :
                priorityQueuesManager.getRegisteredPQStates().values()) {
            org.apache.flink.util.CloseableIterator<?> timers = queue.getPriorityQueue().iterator();
            try {
                while (timers.hasNext()) {
                    windowStates.timer(timers.next(), true);
                }
            } finally {
                IOUtils.closeQuietly(timers);
            }
        }
    }

    // ------------------------------------------------------------------ iteration

    @Override
    public <N> Stream<K> getKeys(String state, N namespace) {
        return getKeys(List.of(state), namespace);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <N> Stream<K> getKeys(List<String> stateNames, N namespace) {
        List<K> keys = new ArrayList<>();
        Set<ByteArray> seen = new HashSet<>();
        try {
            writeBackCachedValues();
            for (String name : stateNames) {
                RegisteredState registered = states.get(name);
                if (registered == null) {
                    continue;
                }
                KeyBytes<K, N> codec =
                        keyBytes(
                                (TypeSerializer<N>) registered.metaInfo().getNamespaceSerializer());
                byte[] wanted = codec.namespace(namespace);
                List<byte[]> matching = new ArrayList<>();
                binder.values(registered)
                        .forEach(
                                (key, ns, value, offset, length) -> {
                                    if (java.util.Arrays.equals(ns, wanted)) {
                                        matching.add(key.clone());
                                    }
                                });
                for (byte[] key : matching) {
                    // Keys are compared without the ambiguity suffix, which depends on the state.
                    K decoded = codec.decodeKey(key);
                    if (seen.add(new ByteArray(codec.key(decoded, 0)))) {
                        keys.add(decoded);
                    }
                }
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while iterating keys in FlowKV.", e);
        }
        return keys.stream();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String stateName) {
        RegisteredState registered = states.get(stateName);
        if (registered == null) {
            return Stream.empty();
        }
        List<Tuple2<K, N>> result = new ArrayList<>();
        Set<ByteArray> seen = new HashSet<>();
        try {
            writeBackCachedValues();
            KeyBytes<K, N> codec =
                    keyBytes((TypeSerializer<N>) registered.metaInfo().getNamespaceSerializer());
            List<byte[][]> pairs = new ArrayList<>();
            binder.values(registered)
                    .forEach(
                            (key, ns, value, offset, length) ->
                                    pairs.add(new byte[][] {key.clone(), ns.clone()}));
            for (byte[][] pair : pairs) {
                byte[] joined = new byte[pair[0].length + pair[1].length];
                System.arraycopy(pair[0], 0, joined, 0, pair[0].length);
                System.arraycopy(pair[1], 0, joined, pair[0].length, pair[1].length);
                if (seen.add(new ByteArray(joined))) {
                    result.add(Tuple2.of(codec.decodeKey(pair[0]), codec.decodeNamespace(pair[1])));
                }
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while iterating keys in FlowKV.", e);
        }
        return result.stream();
    }

    @Override
    public int numKeyValueStateEntries() {
        int sum = 0;
        try {
            writeBackCachedValues();
            for (RegisteredState registered : states.all()) {
                Set<ByteArray> seen = new HashSet<>();
                binder.values(registered)
                        .forEach(
                                (key, ns, value, offset, length) -> {
                                    byte[] joined = new byte[key.length + ns.length];
                                    System.arraycopy(key, 0, joined, 0, key.length);
                                    System.arraycopy(ns, 0, joined, key.length, ns.length);
                                    seen.add(new ByteArray(joined));
                                });
                sum += seen.size();
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while counting entries in FlowKV.", e);
        }
        return sum;
    }

    // ------------------------------------------------------------------ snapshots

    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            long checkpointId,
            long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
        // What the snapshot copies or uploads is what the stores hold.
        writeBackCachedValues();
        SnapshotType type = checkpointOptions.getCheckpointType();
        if (!type.isSavepoint()) {
            checkpointStarts();
        }
        if (!type.isSavepoint()
                && (incrementalCheckpoints
                        || fullCheckpointFormat == FlowKVOptions.FullCheckpointFormat.NATIVE)) {
            // Only incremental checkpoints of the FORWARD_BACKWARD strategy refer to earlier
            // uploads; a full one, and the first after a no-claim restore (FORWARD), upload every
            // file.
            boolean reuse =
                    incrementalCheckpoints
                            && type.getSharingFilesStrategy()
                                    == SnapshotType.SharingFilesStrategy.FORWARD_BACKWARD;
            return new SnapshotStrategyRunner<>(
                            incrementalCheckpoints
                                    ? "FlowKV incremental snapshot"
                                    : "FlowKV native full snapshot",
                            new FlowKVIncrementalSnapshotStrategy<>(
                                    states,
                                    priorityQueuesManager,
                                    getKeySerializer(),
                                    keyGroupRange,
                                    binder.factory().baseDirectory(),
                                    backendIdentifier,
                                    uploads,
                                    localRecovery,
                                    restoreFetch,
                                    reuse,
                                    checkpointCompression,
                                    metrics),
                            cancelStreamRegistry,
                            org.apache.flink.runtime.state.SnapshotExecutionType.ASYNCHRONOUS)
                    .snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
        }
        return new SnapshotStrategyRunner<>(
                        "FlowKV full snapshot",
                        snapshotStrategy,
                        cancelStreamRegistry,
                        org.apache.flink.runtime.state.SnapshotExecutionType.ASYNCHRONOUS)
                .snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
    }

    @Nonnull
    @Override
    public SavepointResources<K> savepoint() throws Exception {
        writeBackCachedValues();
        return new SavepointResources<>(
                snapshotStrategy.syncPrepareResources(-1L),
                org.apache.flink.runtime.state.SnapshotExecutionType.ASYNCHRONOUS);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        uploads.completed(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) {
        uploads.aborted(checkpointId);
    }

    @Override
    public String getBackendTypeIdentifier() {
        return FlowKVStateBackend.NAME;
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void dispose() {
        if (disposed) {
            return;
        }
        disposed = true;
        super.dispose();
        // Restored files still being fetched stop arriving before the stores close.
        restoreFetch.close();
        for (RegisteredState registered : states.all()) {
            if (LOG.isInfoEnabled()
                    && registered.state() instanceof AbstractFlowKVState
                    && ((AbstractFlowKVState<?, ?, ?>) registered.state()).cacheStats() != null) {
                LOG.info(
                        "flowkv-object-cache state={}/{} {}",
                        operatorIdentifier,
                        registered.name(),
                        ((AbstractFlowKVState<?, ?, ?>) registered.state()).cacheStats());
            }
            if (registered.state() instanceof AbstractFlowKVState) {
                // Returns the cache's share of the TaskManager's object cache budget.
                ((AbstractFlowKVState<?, ?, ?>) registered.state()).dropCached();
            }
            if (registered.storage() != null) {
                if (LOG.isInfoEnabled() && !registered.storage().stats().isEmpty()) {
                    LOG.info(
                            StoreStatsLine.of(
                                    operatorIdentifier + "/" + registered.name(),
                                    registered.pattern(),
                                    registered.storage().stats()));
                }
                IOUtils.closeQuietly(registered.storage());
            }
        }
        states.clear();
        for (org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper<?> queue :
                priorityQueuesManager.getRegisteredPQStates().values()) {
            if (queue.getPriorityQueue() instanceof Closeable) {
                IOUtils.closeQuietly((Closeable) queue.getPriorityQueue());
            }
        }
        IOUtils.closeQuietly(memoryLease);
        try {
            FileUtils.deleteDirectory(binder.factory().baseDirectory().toFile());
        } catch (IOException e) {
            LOG.warn(
                    "Could not delete FlowKV working directory {}",
                    binder.factory().baseDirectory(),
                    e);
        }
    }

    /** The directory of this backend's store files (deleted at dispose). */
    @VisibleForTesting
    public Path workingDirectory() {
        return binder.factory().baseDirectory();
    }

    @Override
    public String toString() {
        return "FlowKVKeyedStateBackend{" + operatorIdentifier + "}";
    }
}
