package io.flowkv.flink;

import io.flowkv.core.aur.TriggerTimePredictor;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;
import io.flowkv.flink.config.FlowKVSettings;
import io.flowkv.flink.metrics.FlowKVMetrics;
import io.flowkv.flink.restore.FlowKVIncrementalRestoreOperation;
import io.flowkv.flink.restore.FlowKVRestoreOperation;
import io.flowkv.flink.restore.RestoreFetch;
import io.flowkv.flink.restore.RestoreTarget;
import io.flowkv.flink.snapshot.FlowKVIncrementalSnapshotStrategy;
import io.flowkv.flink.snapshot.UploadedFiles;
import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.StorageFactory;
import io.flowkv.flink.storage.StoreBinder;
import io.flowkv.flink.storage.StorePattern;
import io.flowkv.flink.timers.KeyGroupOrderedQueueSetFactory;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractManagedMemoryStateBackend;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.InternalKeyContextImpl;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.IOUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * FlowKV as a Flink state backend: {@code state.backend.type: flowkv}. Keyed state lives in FlowKV
 * stores chosen per state (AAR, AUR, RMW, or the general store), with off-heap buffers drawn from
 * the slot's Flink managed memory; operator state uses Flink's default operator state backend.
 *
 * <p>Savepoints, and checkpoints unless {@code execution.checkpointing.incremental} is on, are full
 * snapshots in Flink's canonical layout: they restore with any parallelism, and move between
 * FlowKV, HashMap and RocksDB. Incremental checkpoints upload only the store files earlier
 * checkpoints do not hold ({@link FlowKVIncrementalSnapshotStrategy}).
 */
public class FlowKVStateBackend extends AbstractManagedMemoryStateBackend
        implements ConfigurableStateBackend {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(FlowKVStateBackend.class);

    /** The value of {@code state.backend.type} that selects this backend. */
    public static final String NAME = "flowkv";

    /** The managed memory resource shared by the FlowKV backends of one slot. */
    private static final String MANAGED_MEMORY_RESOURCE = "flowkv-managed-memory";

    /** Budget of a backend whose operator got no managed memory (e.g. a test harness). */
    private static final long UNMANAGED_BUDGET_BYTES = 64L << 20;

    private static final Pattern OPERATOR_ID = Pattern.compile("_([0-9a-f]{32})_\\(");

    private final FlowKVSettings settings;

    /** Flink's {@code execution.checkpointing.incremental}, as configured for this job. */
    private final boolean incrementalCheckpoints;

    public FlowKVStateBackend() {
        this(
                FlowKVSettings.from(new org.apache.flink.configuration.Configuration()),
                CheckpointingOptions.INCREMENTAL_CHECKPOINTS.defaultValue());
    }

    private FlowKVStateBackend(FlowKVSettings settings, boolean incrementalCheckpoints) {
        this.settings = settings;
        this.incrementalCheckpoints = incrementalCheckpoints;
    }

    private FlowKVStateBackend(FlowKVStateBackend original, ReadableConfig config) {
        this.settings = FlowKVSettings.from(config);
        this.incrementalCheckpoints =
                config.getOptional(CheckpointingOptions.INCREMENTAL_CHECKPOINTS)
                        .orElse(original.incrementalCheckpoints);
        this.latencyTrackingConfigBuilder = original.latencyTrackingConfigBuilder.configure(config);
        this.sizeTrackingConfigBuilder = original.sizeTrackingConfigBuilder.configure(config);
    }

    /** Where and from what size this backend's timers are stored; null keeps them on the heap. */
    @Nullable
    private KeyGroupOrderedQueueSetFactory.Stored storedTimers(Path base, MemoryBudget budget) {
        switch (settings.timerService()) {
            case FLOWKV:
                return new KeyGroupOrderedQueueSetFactory.Stored(
                        base, budget, KeyGroupOrderedQueueSetFactory.STORED_FROM_THE_START);
            case AUTO:
                return new KeyGroupOrderedQueueSetFactory.Stored(
                        base, budget, settings.timerHeapLimit(Runtime.getRuntime().maxMemory()));
            default:
                return null;
        }
    }

    /**
     * The budget of a slot's managed memory share, as Flink's memory manager hands it out to every
     * FlowKV backend of the slot. Nothing to free: the stores release their own buffers.
     */
    record ManagedBudget(MemoryBudget budget) implements AutoCloseable {
        @Override
        public void close() {}
    }

    @Override
    public FlowKVStateBackend configure(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        return new FlowKVStateBackend(this, config);
    }

    @Override
    public String getName() {
        return "FlowKVStateBackend";
    }

    /** Whether checkpoints (not savepoints) are incremental: share store files across them. */
    public boolean isIncrementalCheckpointsEnabled() {
        return incrementalCheckpoints;
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        // Full snapshots are self-contained; an incremental checkpoint taken with Flink's
        // FORWARD sharing strategy (the first one after a no-claim restore) uploads every file.
        return true;
    }

    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        return true;
    }

    /** Whether this class has said where it was loaded from (once per class loader). */
    private static final AtomicBoolean ORIGIN_LOGGED = new AtomicBoolean();

    /**
     * Logs once where FlowKV's classes and the native memory class it uses were loaded from: in a
     * cluster, the jar in {@code lib/} and chronicle relocated under {@code io.flowkv.shaded}, not
     * a copy in the job jar.
     */
    private static void logOrigin() {
        if (ORIGIN_LOGGED.compareAndSet(false, true)) {
            Class<?> memory = OffHeapBuffer.nativeMemoryClass();
            LOG.info(
                    "FlowKV loaded from {}; native memory through {} from {}",
                    codeSource(FlowKVStateBackend.class),
                    memory.getName(),
                    codeSource(memory));
        }
    }

    private static String codeSource(Class<?> type) {
        java.security.CodeSource source = type.getProtectionDomain().getCodeSource();
        return source == null || source.getLocation() == null
                ? "an unknown location"
                : source.getLocation().toString();
    }

    @Override
    public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws IOException {
        logOrigin();
        Environment env = parameters.getEnv();
        String operatorIdentifier = parameters.getOperatorIdentifier();
        OpaqueMemoryResource<ManagedBudget> managed = null;
        MemoryBudget budget;
        try {
            double fraction = parameters.getManagedMemoryFraction();
            if (fraction > 0 && env.getMemoryManager() != null) {
                managed =
                        env.getMemoryManager()
                                .getSharedMemoryResourceForManagedMemory(
                                        MANAGED_MEMORY_RESOURCE,
                                        size -> new ManagedBudget(new MemoryBudget(size)),
                                        fraction);
                budget = managed.getResourceHandle().budget();
            } else {
                budget = new MemoryBudget(UNMANAGED_BUDGET_BYTES);
            }
        } catch (Exception e) {
            throw new BackendBuildingException(
                    "Could not obtain managed memory for FlowKV in " + operatorIdentifier, e);
        }

        Path base = workingDirectory(env, operatorIdentifier);
        OpaqueMemoryResource<ManagedBudget> lease = managed;
        try {
            return build(parameters, budget, base, lease);
        } catch (Exception e) {
            IOUtils.closeQuietly(lease);
            try {
                FileUtils.deleteDirectory(base.toFile());
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof BackendBuildingException) {
                throw (BackendBuildingException) e;
            }
            throw new BackendBuildingException(
                    "Failed to build the FlowKV keyed state backend for " + operatorIdentifier, e);
        }
    }

    private <K> FlowKVKeyedStateBackend<K> build(
            KeyedStateBackendParameters<K> parameters,
            MemoryBudget budget,
            Path base,
            AutoCloseable lease)
            throws Exception {
        Environment env = parameters.getEnv();
        String operatorIdentifier = parameters.getOperatorIdentifier();
        ClassLoader userClassLoader = env.getUserCodeClassLoader().asClassLoader();
        String override =
                operatorSetting(
                        settings.patternOverrides(), env, operatorIdentifier, userClassLoader);
        String predictorClass =
                operatorSetting(
                        settings.triggerTimePredictors(), env, operatorIdentifier, userClassLoader);
        TriggerTimePredictor predictor =
                predictorClass == null
                        ? TriggerTimePredictor.sessionGap()
                        : loadPlugin(
                                TriggerTimePredictor.class,
                                FlowKVOptions.TRIGGER_TIME_PREDICTOR,
                                predictorClass,
                                operatorIdentifier,
                                userClassLoader);
        FileIo underlying =
                settings.fileIoFactory() == null
                        ? FileIo.DEFAULT
                        : loadPlugin(
                                        FileIoFactory.class,
                                        FlowKVOptions.FILE_IO_FACTORY,
                                        settings.fileIoFactory(),
                                        operatorIdentifier,
                                        userClassLoader)
                                .create();
        // Closed by the backend's dispose; here only if the build fails after the restore began.
        RestoreFetch fileIo = new RestoreFetch(underlying);
        try {
            return assemble(parameters, budget, base, lease, override, predictor, fileIo);
        } catch (Exception e) {
            fileIo.close();
            throw e;
        }
    }

    /**
     * The backend, its restore done, on {@code fileIo}; {@code override} and {@code predictor} as
     * resolved for this operator.
     */
    private <K> FlowKVKeyedStateBackend<K> assemble(
            KeyedStateBackendParameters<K> parameters,
            MemoryBudget budget,
            Path base,
            AutoCloseable lease,
            String override,
            TriggerTimePredictor predictor,
            RestoreFetch fileIo)
            throws Exception {
        Environment env = parameters.getEnv();
        String operatorIdentifier = parameters.getOperatorIdentifier();
        ClassLoader userClassLoader = env.getUserCodeClassLoader().asClassLoader();
        int numberOfKeyGroups = parameters.getNumberOfKeyGroups();
        int keyGroupPrefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(
                        numberOfKeyGroups);
        StateRegistry states = new StateRegistry();
        Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues = new HashMap<>();
        HeapPriorityQueueSetFactory queueFactory =
                new KeyGroupOrderedQueueSetFactory(
                        parameters.getKeyGroupRange(),
                        numberOfKeyGroups,
                        storedTimers(base, budget));
        long seed = operatorIdentifier.hashCode() * 0x9E3779B97F4A7C15L;
        StoreBinder binder =
                new StoreBinder(
                        operatorIdentifier,
                        new StorageFactory(
                                base,
                                budget,
                                settings,
                                parameters.getKeyGroupRange(),
                                keyGroupPrefixBytes,
                                seed,
                                predictor,
                                fileIo),
                        override == null ? null : StorePattern.parse(override),
                        states);

        FlowKVMetrics metrics =
                FlowKVMetrics.create(parameters.getMetricGroup(), settings.metricGroups(), budget);
        long restoreStart = System.nanoTime();
        StateSerializerProvider<K> keySerializerProvider =
                StateSerializerProvider.fromNewRegisteredSerializer(parameters.getKeySerializer());
        UploadedFiles uploads = new UploadedFiles();
        RestoreTarget<K> target =
                new RestoreTarget<>(
                        parameters.getKeyGroupRange(),
                        numberOfKeyGroups,
                        userClassLoader,
                        keySerializerProvider,
                        keyGroupPrefixBytes,
                        states,
                        queues,
                        queueFactory,
                        binder);
        if (FlowKVIncrementalRestoreOperation.isIncremental(parameters.getStateHandles())) {
            new FlowKVIncrementalRestoreOperation<>(
                            target,
                            uploads,
                            fileIo,
                            settings.restoreThreads(),
                            settings.restoreInBackground(),
                            settings.restoreBackgroundNice())
                    .restore(parameters.getStateHandles());
        } else {
            new FlowKVRestoreOperation<>(target).restore(parameters.getStateHandles());
        }
        if (!parameters.getStateHandles().isEmpty()) {
            metrics.restored((System.nanoTime() - restoreStart) / 1_000_000);
        }
        LocalRecoveryConfig localRecovery =
                env.getTaskStateManager() == null
                        ? LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED
                        : env.getTaskStateManager().createLocalRecoveryConfig();
        TypeSerializer<K> keySerializer = keySerializerProvider.currentSchemaSerializer();

        InternalKeyContextImpl<K> keyContext =
                new InternalKeyContextImpl<>(parameters.getKeyGroupRange(), numberOfKeyGroups);
        HeapPriorityQueuesManager priorityQueues =
                new HeapPriorityQueuesManager(
                        queues, queueFactory, parameters.getKeyGroupRange(), numberOfKeyGroups);
        LOG.info(
                "FlowKV keyed state backend for {}: working directory {}, memory budget {} bytes{}",
                operatorIdentifier,
                base,
                budget.capacity(),
                override == null ? "" : ", pattern override " + override);
        return new FlowKVKeyedStateBackend<>(
                parameters.getKvStateRegistry(),
                keySerializer,
                userClassLoader,
                env.getExecutionConfig(),
                parameters.getTtlTimeProvider(),
                latencyTrackingConfigBuilder.setMetricGroup(parameters.getMetricGroup()).build(),
                sizeTrackingConfigBuilder.setMetricGroup(parameters.getMetricGroup()).build(),
                // The registry in the parameters is closed once restore is done: snapshots need
                // one of their own.
                new CloseableRegistry(),
                getCompressionDecorator(env.getExecutionConfig()),
                keyContext,
                operatorIdentifier,
                binder,
                states,
                priorityQueues,
                lease,
                incrementalCheckpoints,
                settings.fullCheckpointFormat(),
                settings.checkpointCompression(),
                uploads,
                localRecovery,
                fileIo,
                metrics);
    }

    /** A fresh directory for one keyed backend, on one of the configured or TaskManager dirs. */
    private Path workingDirectory(Environment env, String operatorIdentifier) throws IOException {
        List<String> dirs = settings.localDirectories();
        String[] candidates =
                dirs.isEmpty()
                        ? env.getTaskManagerInfo().getTmpDirectories()
                        : dirs.toArray(new String[0]);
        String root = candidates[Math.floorMod(operatorIdentifier.hashCode(), candidates.length)];
        JobID jobId = env.getJobID();
        Path dir =
                Paths.get(
                        root,
                        "flowkv",
                        "job_"
                                + jobId
                                + "_op_"
                                + operatorIdentifier.replaceAll("[^a-zA-Z0-9\\-]", "_")
                                + "_uuid_"
                                + UUID.randomUUID());
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IOException(
                    "Could not create FlowKV working directory "
                            + dir
                            + " (check "
                            + FlowKVOptions.LOCAL_DIRECTORIES.key()
                            + ")",
                    e);
        }
    }

    /**
     * The value a per-operator option ({@code pattern-override}, {@code trigger-time-predictor})
     * gives this operator: the entry whose key is the operator's uid (matched through the operator
     * id Flink derives from it) or its name; null if none.
     */
    private static String operatorSetting(
            Map<String, String> overrides,
            Environment env,
            String operatorIdentifier,
            ClassLoader userClassLoader) {
        if (overrides.isEmpty()) {
            return null;
        }
        Matcher m = OPERATOR_ID.matcher(operatorIdentifier);
        String operatorId = m.find() ? m.group(1) : null;
        String operatorName = operatorName(env, operatorId, userClassLoader);
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            String uidHash =
                    new OperatorID(StreamGraphHasherV2.generateUserSpecifiedHash(e.getKey()))
                            .toHexString();
            if (e.getKey().equals(operatorName) || uidHash.equals(operatorId)) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * An instance of {@code className}, configured by {@code option} for {@code
     * operatorIdentifier}, or a failure naming the option and the class.
     */
    private static <T> T loadPlugin(
            Class<T> kind,
            ConfigOption<?> option,
            String className,
            String operatorIdentifier,
            ClassLoader userClassLoader)
            throws BackendBuildingException {
        String what =
                "'"
                        + option.key()
                        + "' names "
                        + className
                        + " for "
                        + operatorIdentifier
                        + ", but ";
        Class<?> type;
        try {
            type = Class.forName(className, true, userClassLoader);
        } catch (ClassNotFoundException | LinkageError e) {
            throw new BackendBuildingException(what + "it cannot be loaded: " + e, e);
        }
        if (!kind.isAssignableFrom(type)) {
            throw new BackendBuildingException(what + "it does not implement " + kind.getName());
        }
        try {
            T instance = kind.cast(type.getConstructor().newInstance());
            LOG.info("FlowKV {}: {} is {}", operatorIdentifier, option.key(), className);
            return instance;
        } catch (NoSuchMethodException e) {
            throw new BackendBuildingException(
                    what + "it has no public no-argument constructor", e);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new BackendBuildingException(what + "its constructor failed: " + e, e);
        }
    }

    /**
     * The operator's name from the task configuration. By the time state backends are built, a task
     * has dropped its chained operators' configurations, so only the chain's head is found here;
     * window operators head their chain (they follow a keyBy), which is the case that matters.
     */
    private static String operatorName(
            Environment env, String operatorId, ClassLoader userClassLoader) {
        if (operatorId == null || env.getTaskConfiguration() == null) {
            return null;
        }
        try {
            StreamConfig head = new StreamConfig(env.getTaskConfiguration());
            OperatorID id = head.getOperatorID();
            if (id != null && operatorId.equals(id.toHexString())) {
                return head.getOperatorName();
            }
            for (StreamConfig config :
                    head.getTransitiveChainedTaskConfigsWithSelf(userClassLoader).values()) {
                id = config.getOperatorID();
                if (id != null && operatorId.equals(id.toHexString())) {
                    return config.getOperatorName();
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("Could not read operator names from the task configuration", e);
        }
        return null;
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(
            OperatorStateBackendParameters parameters) throws BackendBuildingException {
        return new DefaultOperatorStateBackendBuilder(
                        parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                        parameters.getEnv().getExecutionConfig(),
                        true,
                        parameters.getStateHandles(),
                        parameters.getCancelStreamRegistry())
                .build();
    }
}
