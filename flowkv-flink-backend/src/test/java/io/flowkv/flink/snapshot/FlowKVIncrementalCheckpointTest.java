package io.flowkv.flink.snapshot;

import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.FlowKVStateBackend;
import io.flowkv.flink.TestBackends;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProviderImpl;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.concurrent.FutureUtils;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Incremental checkpoints on all four storages (AAR, AUR, RMW, general): what is uploaded, what is
 * shared, restore in place, restore with other key-group ranges, task-local copies, and the errors
 * for corrupt or missing checkpoint files.
 */
class FlowKVIncrementalCheckpointTest {
    private static final int KEY_GROUPS = 128;
    private static final TimeWindow WINDOW = new TimeWindow(0, 1000);

    @TempDir Path temp;

    private final List<FlowKVKeyedStateBackend<Integer>> open = new ArrayList<>();

    /** Flink's incremental switch and FlowKV's full format for the backends a test creates. */
    private boolean incremental = true;

    private FlowKVOptions.FullCheckpointFormat fullFormat =
            FlowKVOptions.FULL_CHECKPOINT_FORMAT.defaultValue();

    private FlowKVOptions.CheckpointCompression compression =
            FlowKVOptions.CHECKPOINT_COMPRESSION.defaultValue();

    private int restoreThreads = FlowKVOptions.RESTORE_THREADS.defaultValue();
    private boolean restoreInBackground = FlowKVOptions.RESTORE_IN_BACKGROUND.defaultValue();
    private final List<MockEnvironment> environments = new ArrayList<>();

    @AfterEach
    void closeBackends() throws Exception {
        for (FlowKVKeyedStateBackend<Integer> backend : open) {
            backend.dispose();
        }
        for (MockEnvironment env : environments) {
            env.close();
        }
    }

    // ------------------------------------------------------------------ tests

    @Test
    void shouldUploadOnlyFilesTheConfirmedCheckpointDoesNotHold() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 600, 0);
        IncrementalRemoteKeyedStateHandle first = remote(snapshot(backend, 1));
        assertThat(first.getSharedState()).isNotEmpty();
        assertThat(first.getSharedState())
                .noneMatch(f -> f.getHandle() instanceof PlaceholderStreamStateHandle);
        SharedStateRegistry registry = new SharedStateRegistryImpl();
        first.registerSharedStates(registry, 1);
        backend.notifyCheckpointComplete(1);

        write(backend, model, 0, 50, 1);
        IncrementalRemoteKeyedStateHandle second = remote(snapshot(backend, 2));
        long reused =
                second.getSharedState().stream()
                        .filter(f -> f.getHandle() instanceof PlaceholderStreamStateHandle)
                        .count();
        assertThat(reused).isPositive();
        assertThat(second.getCheckpointedSize()).isLessThan(first.getCheckpointedSize());
        second.registerSharedStates(registry, 2);
        assertThat(second.getSharedState())
                .noneMatch(f -> f.getHandle() instanceof PlaceholderStreamStateHandle);

        FlowKVKeyedStateBackend<Integer> restored =
                backend(KeyGroupRange.of(0, 127), List.of(second));
        assertThat(read(restored, 0, 600)).isEqualTo(model);

        // The restored backend refers to the restored files instead of uploading them again.
        write(restored, model, 10, 20, 2);
        IncrementalRemoteKeyedStateHandle third = remote(snapshot(restored, 3));
        assertThat(third.getSharedState())
                .anyMatch(f -> f.getHandle() instanceof PlaceholderStreamStateHandle);
        third.registerSharedStates(registry, 3);
        assertThat(read(backend(KeyGroupRange.of(0, 127), List.of(third)), 0, 600))
                .isEqualTo(model);
        registry.close();
    }

    @Test
    void shouldNotReferToFilesOfUnconfirmedCheckpoints() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        write(backend, new TreeMap<>(), 0, 500, 0);
        snapshot(backend, 1);
        backend.notifyCheckpointAborted(1);
        IncrementalRemoteKeyedStateHandle second = remote(snapshot(backend, 2));
        assertThat(second.getSharedState())
                .noneMatch(f -> f.getHandle() instanceof PlaceholderStreamStateHandle);
    }

    @Test
    void shouldKeepExactlyTheNewKeyGroupRangeWhenRescaling() throws Exception {
        Map<String, String> model = new TreeMap<>();
        FlowKVKeyedStateBackend<Integer> one = backend(KeyGroupRange.of(0, 127), List.of());
        write(one, model, 0, 600, 0);
        KeyedStateHandle whole = remote(snapshot(one, 1));

        // 1 -> 2
        KeyGroupRange left = KeyGroupRange.of(0, 63);
        KeyGroupRange right = KeyGroupRange.of(64, 127);
        FlowKVKeyedStateBackend<Integer> a = backend(left, List.of(whole));
        FlowKVKeyedStateBackend<Integer> b = backend(right, List.of(whole));
        assertThat(read(a, 0, 600)).isEqualTo(inRange(model, left));
        assertThat(read(b, 0, 600)).isEqualTo(inRange(model, right));
        assertThat(keyCount(a)).isEqualTo(countKeys(0, 600, left));

        write(a, model, 0, 600, 1);
        write(b, model, 0, 600, 1);
        KeyedStateHandle ha = remote(snapshot(a, 2));
        KeyedStateHandle hb = remote(snapshot(b, 2));

        // 2 -> 1
        FlowKVKeyedStateBackend<Integer> merged =
                backend(KeyGroupRange.of(0, 127), List.of(ha, hb));
        assertThat(read(merged, 0, 600)).isEqualTo(model);
    }

    @Test
    void shouldUploadEveryFileForAFullCheckpointAndRestoreFromItAlone() throws Exception {
        incremental = false; // Flink's default; FlowKV's full format defaults to NATIVE
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 600, 0);
        IncrementalRemoteKeyedStateHandle first = remote(snapshot(backend, 1));
        first.registerSharedStates(new SharedStateRegistryImpl(), 1);
        backend.notifyCheckpointComplete(1);

        write(backend, model, 0, 50, 1);
        IncrementalRemoteKeyedStateHandle second = remote(snapshot(backend, 2));
        assertThat(second.getSharedState())
                .noneMatch(f -> f.getHandle() instanceof PlaceholderStreamStateHandle);
        assertThat(second.getCheckpointedSize())
                .as("a full checkpoint uploads everything again")
                .isGreaterThanOrEqualTo(first.getCheckpointedSize());

        // The second checkpoint needs nothing the first one uploaded.
        first.discardState();
        assertThat(read(backend(KeyGroupRange.of(0, 127), List.of(second)), 0, 600))
                .isEqualTo(model);
        KeyGroupRange left = KeyGroupRange.of(0, 63);
        assertThat(read(backend(left, List.of(second)), 0, 600)).isEqualTo(inRange(model, left));
    }

    @Test
    void shouldWriteFullCheckpointsInFlinksLayoutWhenAskedTo() throws Exception {
        incremental = false;
        fullFormat = FlowKVOptions.FullCheckpointFormat.CANONICAL;
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 300, 0);
        KeyedStateHandle canonical = snapshot(backend, 1);
        assertThat(canonical).isInstanceOf(KeyGroupsStateHandle.class);
        assertThat(read(backend(KeyGroupRange.of(0, 127), List.of(canonical)), 0, 300))
                .isEqualTo(model);
    }

    @Test
    void shouldUploadSmallerLz4FramesAndRestoreCheckpointsOfBothEncodings() throws Exception {
        compression = FlowKVOptions.CheckpointCompression.NONE;
        FlowKVKeyedStateBackend<Integer> plain = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> plainModel = new TreeMap<>();
        write(plain, plainModel, 0, 600, 0);
        long plainSize = remote(snapshot(plain, 1)).getCheckpointedSize();

        compression = FlowKVOptions.CheckpointCompression.LZ4;
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 600, 0);
        IncrementalRemoteKeyedStateHandle first = remote(snapshot(backend, 1));
        assertThat(model).isEqualTo(plainModel);
        assertThat(first.getCheckpointedSize())
                .as("the same state uploaded as LZ4 frames")
                .isLessThan(plainSize * 3 / 4);
        SharedStateRegistry registry = new SharedStateRegistryImpl();
        first.registerSharedStates(registry, 1);

        // A job restored with compression off reuses the LZ4 uploads and adds plain ones.
        compression = FlowKVOptions.CheckpointCompression.NONE;
        FlowKVKeyedStateBackend<Integer> restored =
                backend(KeyGroupRange.of(0, 127), List.of(first));
        assertThat(read(restored, 0, 600)).isEqualTo(model);
        write(restored, model, 10, 40, 1);
        IncrementalRemoteKeyedStateHandle mixed = remote(snapshot(restored, 2));
        assertThat(mixed.getSharedState())
                .anyMatch(f -> f.getHandle() instanceof PlaceholderStreamStateHandle);
        mixed.registerSharedStates(registry, 2);

        compression = FlowKVOptions.CheckpointCompression.LZ4;
        assertThat(read(backend(KeyGroupRange.of(0, 127), List.of(mixed)), 0, 600))
                .isEqualTo(model);
        assertThat(read(backend(KeyGroupRange.of(0, 63), List.of(mixed)), 0, 600))
                .isEqualTo(inRange(model, KeyGroupRange.of(0, 63)));
        registry.close();
    }

    @Test
    void shouldRestoreTheSameStateOnOneFetchThreadOrMany() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 600, 0);
        IncrementalRemoteKeyedStateHandle handle = remote(snapshot(backend, 1));
        assertThat(handle.getSharedState()).as("files to fetch").hasSizeGreaterThan(4);
        for (int threads : new int[] {1, 3, 64}) {
            restoreThreads = threads;
            assertThat(read(backend(KeyGroupRange.of(0, 127), List.of(handle)), 0, 600))
                    .as("restored on %d threads", threads)
                    .isEqualTo(model);
        }
    }

    @Test
    void shouldRejectARestoreThreadCountOutOfRange() {
        for (int threads : new int[] {0, 65}) {
            Configuration config = new Configuration();
            config.set(FlowKVOptions.RESTORE_THREADS, threads);
            assertThatThrownBy(() -> FlowKVOptions.validate(config))
                    .hasMessageContaining("state.backend.flowkv.restore-threads")
                    .hasMessageContaining("[1, 64]");
        }
    }

    @Test
    void shouldRejectABackgroundNiceOutOfRange() {
        for (int nice : new int[] {-1, 20}) {
            Configuration config = new Configuration();
            config.set(FlowKVOptions.RESTORE_BACKGROUND_NICE, nice);
            assertThatThrownBy(() -> FlowKVOptions.validate(config))
                    .hasMessageContaining("state.backend.flowkv.restore-background-nice")
                    .hasMessageContaining("[0, 19]");
        }
    }

    @Test
    void shouldNameACorruptUncompressedCheckpointFile() throws Exception {
        compression = FlowKVOptions.CheckpointCompression.NONE;
        shouldNameACorruptCheckpointFile();
    }

    @Test
    void shouldNameACorruptCheckpointFile() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        write(backend, new TreeMap<>(), 0, 500, 0);
        IncrementalRemoteKeyedStateHandle handle = remote(snapshot(backend, 1));
        HandleAndLocalPath victim = handle.getSharedState().get(0);
        Path file = Path.of(((FileStateHandle) victim.getHandle()).getFilePath().toUri());
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            long at = raf.length() - 3;
            raf.seek(at);
            int b = raf.read();
            raf.seek(at);
            raf.write(b ^ 0x40);
        }
        // Restored in the background: the state that needs the file fails, naming it, and so
        // does the next checkpoint, which must not refer to it.
        FlowKVKeyedStateBackend<Integer> restored =
                backend(KeyGroupRange.of(0, 127), List.of(handle));
        assertThatThrownBy(() -> read(restored, 0, 500))
                .hasStackTraceContaining(victim.getLocalPath())
                .hasStackTraceContaining("corrupt");
        assertThatThrownBy(() -> snapshot(restored, 2))
                .hasStackTraceContaining(victim.getLocalPath())
                .hasStackTraceContaining("corrupt");
        // Fetched up front, the restore itself fails.
        restoreInBackground = false;
        assertThatThrownBy(() -> backend(KeyGroupRange.of(0, 127), List.of(handle)))
                .hasStackTraceContaining(victim.getLocalPath())
                .hasStackTraceContaining("corrupt");
    }

    @Test
    void shouldFailARestoreWhoseStoreCannotReopenNamingItsFile() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 500, 0);
        IncrementalRemoteKeyedStateHandle handle = remote(snapshot(backend, 1));
        // The states reopen side by side; the AUR store reads its index log as it reopens, so a
        // corrupt one fails the restore itself, even in the background, naming the file.
        HandleAndLocalPath victim =
                handle.getSharedState().stream()
                        .filter(f -> f.getLocalPath().contains("aur-index-"))
                        .findFirst()
                        .orElseThrow();
        Path file = Path.of(((FileStateHandle) victim.getHandle()).getFilePath().toUri());
        byte[] original = Files.readAllBytes(file);
        byte[] corrupt = original.clone();
        corrupt[corrupt.length - 3] ^= 0x40;
        Files.write(file, corrupt);
        assertThatThrownBy(() -> backend(KeyGroupRange.of(0, 127), List.of(handle)))
                .hasStackTraceContaining(victim.getLocalPath())
                .hasStackTraceContaining("corrupt");
        // The same checkpoint, whole again, restores every state.
        Files.write(file, original);
        assertThat(read(backend(KeyGroupRange.of(0, 127), List.of(handle)), 0, 500))
                .isEqualTo(model);
    }

    @Test
    void shouldServeAndCheckpointABackendWhoseFilesAreStillArriving() throws Exception {
        LocalRecoveryConfig local = localRecovery();
        FlowKVKeyedStateBackend<Integer> backend =
                backend(KeyGroupRange.of(0, 127), List.of(), local);
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 600, 0);
        IncrementalRemoteKeyedStateHandle first = remote(snapshotResult(backend, 1));
        // One fetch thread: most files are still queued when the restore returns. A checkpoint
        // taken at once links every file (local recovery), waiting for or fetching each; writes
        // and reads go on meanwhile.
        restoreThreads = 1;
        FlowKVKeyedStateBackend<Integer> restored =
                backend(KeyGroupRange.of(0, 127), List.of(first), local);
        write(restored, model, 100, 200, 1);
        SnapshotResult<KeyedStateHandle> second = snapshotResult(restored, 2);
        assertThat(read(restored, 0, 600)).isEqualTo(model);
        assertThat(
                        read(
                                backend(
                                        KeyGroupRange.of(0, 127),
                                        List.of(second.getTaskLocalSnapshot()),
                                        local),
                                0,
                                600))
                .isEqualTo(model);
        // Disposed while its files may still arrive: the fetch stops, the directory goes.
        FlowKVKeyedStateBackend<Integer> early =
                backend(KeyGroupRange.of(0, 127), List.of(first), local);
        Path workDir = early.workingDirectory();
        early.dispose();
        assertThat(workDir).doesNotExist();
    }

    @Test
    void shouldNameAMissingCheckpointFile() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(KeyGroupRange.of(0, 127), List.of());
        write(backend, new TreeMap<>(), 0, 500, 0);
        IncrementalRemoteKeyedStateHandle handle = remote(snapshot(backend, 1));
        HandleAndLocalPath victim = handle.getSharedState().get(handle.getSharedState().size() - 1);
        Files.delete(Path.of(((FileStateHandle) victim.getHandle()).getFilePath().toUri()));
        assertThatThrownBy(() -> backend(KeyGroupRange.of(0, 64), List.of(handle)))
                .hasStackTraceContaining(victim.getLocalPath());
    }

    @Test
    void shouldRestoreFromTheTaskLocalCopy() throws Exception {
        LocalRecoveryConfig local = localRecovery();
        FlowKVKeyedStateBackend<Integer> backend =
                backend(KeyGroupRange.of(0, 127), List.of(), local);
        Map<String, String> model = new TreeMap<>();
        write(backend, model, 0, 400, 0);
        SnapshotResult<KeyedStateHandle> result = snapshotResult(backend, 1);
        assertThat(result.getTaskLocalSnapshot())
                .isInstanceOf(IncrementalLocalKeyedStateHandle.class);
        IncrementalRemoteKeyedStateHandle remote = remote(result);
        // The remote files are gone: only the local copy can serve this restore.
        for (HandleAndLocalPath file : remote.getSharedState()) {
            file.getHandle().discardState();
        }
        FlowKVKeyedStateBackend<Integer> restored =
                backend(KeyGroupRange.of(0, 127), List.of(result.getTaskLocalSnapshot()));
        assertThat(read(restored, 0, 400)).isEqualTo(model);
    }

    // ------------------------------------------------------------------ helpers

    /** Local backup and recovery into a directory of the test's. */
    private LocalRecoveryConfig localRecovery() throws Exception {
        return LocalRecoveryConfig.backupAndRecoveryEnabled(
                new LocalSnapshotDirectoryProviderImpl(
                        Files.createDirectories(temp.resolve("local")).toFile(),
                        new JobID(),
                        new JobVertexID(),
                        0));
    }

    private FlowKVKeyedStateBackend<Integer> backend(
            KeyGroupRange range, List<KeyedStateHandle> handles) throws Exception {
        return backend(range, handles, LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED);
    }

    @SuppressWarnings("unchecked")
    private FlowKVKeyedStateBackend<Integer> backend(
            KeyGroupRange range, List<KeyedStateHandle> handles, LocalRecoveryConfig local)
            throws Exception {
        TestTaskStateManager stateManager =
                TestTaskStateManager.builder().setLocalRecoveryConfig(local).build();
        MockEnvironment env = MockEnvironment.builder().setTaskStateManager(stateManager).build();
        environments.add(env);
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        config.set(FlowKVOptions.FULL_CHECKPOINT_FORMAT, fullFormat);
        config.set(FlowKVOptions.CHECKPOINT_COMPRESSION, compression);
        config.set(FlowKVOptions.RESTORE_THREADS, restoreThreads);
        config.set(FlowKVOptions.RESTORE_IN_BACKGROUND, restoreInBackground);
        FlowKVStateBackend stateBackend =
                new FlowKVStateBackend().configure(config, getClass().getClassLoader());
        FlowKVKeyedStateBackend<Integer> backend =
                (FlowKVKeyedStateBackend<Integer>)
                        stateBackend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        (Environment) env,
                                        new JobID(),
                                        "test_op",
                                        IntSerializer.INSTANCE,
                                        KEY_GROUPS,
                                        range,
                                        env.getTaskKvStateRegistry(),
                                        TtlTimeProvider.DEFAULT,
                                        new UnregisteredMetricsGroup(),
                                        handles,
                                        new CloseableRegistry()));
        open.add(backend);
        return backend;
    }

    private CheckpointStreamFactory streamFactory() throws Exception {
        return TestBackends.streamFactory(temp);
    }

    private SnapshotResult<KeyedStateHandle> snapshotResult(
            FlowKVKeyedStateBackend<Integer> backend, long checkpointId) throws Exception {
        return FutureUtils.runIfNotDoneAndGet(
                backend.snapshot(
                        checkpointId,
                        checkpointId,
                        streamFactory(),
                        CheckpointOptions.forCheckpointWithDefaultLocation()));
    }

    private KeyedStateHandle snapshot(FlowKVKeyedStateBackend<Integer> backend, long checkpointId)
            throws Exception {
        return snapshotResult(backend, checkpointId).getJobManagerOwnedSnapshot();
    }

    private static IncrementalRemoteKeyedStateHandle remote(KeyedStateHandle handle) {
        assertThat(handle).isInstanceOf(IncrementalRemoteKeyedStateHandle.class);
        return (IncrementalRemoteKeyedStateHandle) handle;
    }

    private static IncrementalRemoteKeyedStateHandle remote(SnapshotResult<KeyedStateHandle> r) {
        return remote(r.getJobManagerOwnedSnapshot());
    }

    private static ListState<String> aar(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        ListState<String> state =
                backend.getPartitionedState(
                        WINDOW,
                        new TimeWindow.Serializer(),
                        new ListStateDescriptor<>("aar", StringSerializer.INSTANCE));
        return state;
    }

    private static ListState<String> aur(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                GlobalWindow.get(),
                new GlobalWindow.Serializer(),
                new ListStateDescriptor<>("aur", StringSerializer.INSTANCE));
    }

    private static ReducingState<Long> rmw(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                WINDOW,
                new TimeWindow.Serializer(),
                new ReducingStateDescriptor<>("rmw", Long::sum, LongSerializer.INSTANCE));
    }

    private static ValueState<String> generic(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                org.apache.flink.runtime.state.VoidNamespace.INSTANCE,
                org.apache.flink.runtime.state.VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>("generic", StringSerializer.INSTANCE));
    }

    /**
     * Adds one element/value per key of the backend's range in [from, to) to all four states,
     * mirrored in the model.
     */
    private static void write(
            FlowKVKeyedStateBackend<Integer> backend,
            Map<String, String> model,
            int from,
            int to,
            int round)
            throws Exception {
        KeyGroupRange range = backend.getKeyGroupRange();
        for (int key = from; key < to; key++) {
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                continue;
            }
            backend.setCurrentKey(key);
            String element = key + "." + round;
            aar(backend).add(element);
            aur(backend).add(element);
            rmw(backend).add((long) key + round);
            generic(backend).update(element);
            model.merge("aar/" + key, element, (a, b) -> a + "," + b);
            model.merge("aur/" + key, element, (a, b) -> a + "," + b);
            model.merge(
                    "rmw/" + key,
                    Long.toString((long) key + round),
                    (a, b) -> Long.toString(Long.parseLong(a) + Long.parseLong(b)));
            model.put("generic/" + key, element);
        }
    }

    private static Map<String, String> read(
            FlowKVKeyedStateBackend<Integer> backend, int from, int to) throws Exception {
        Map<String, String> out = new TreeMap<>();
        KeyGroupRange range = backend.getKeyGroupRange();
        for (int key = from; key < to; key++) {
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                continue;
            }
            backend.setCurrentKey(key);
            Iterable<String> aar = aar(backend).get();
            if (aar != null) {
                out.put("aar/" + key, String.join(",", aar));
            }
            Iterable<String> aur = aur(backend).get();
            if (aur != null) {
                out.put("aur/" + key, String.join(",", aur));
            }
            Long sum = rmw(backend).get();
            if (sum != null) {
                out.put("rmw/" + key, Long.toString(sum));
            }
            String value = generic(backend).value();
            if (value != null) {
                out.put("generic/" + key, value);
            }
        }
        return out;
    }

    private static Map<String, String> inRange(Map<String, String> model, KeyGroupRange range) {
        Map<String, String> out = new HashMap<>();
        for (Map.Entry<String, String> e : model.entrySet()) {
            int key = Integer.parseInt(e.getKey().substring(e.getKey().indexOf('/') + 1));
            if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return new TreeMap<>(out);
    }

    private static long countKeys(int from, int to, KeyGroupRange range) {
        long n = 0;
        for (int key = from; key < to; key++) {
            if (range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, KEY_GROUPS))) {
                n++;
            }
        }
        return n;
    }

    private static long keyCount(FlowKVKeyedStateBackend<Integer> backend) {
        try (var keys =
                backend.getKeys("generic", org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            return keys.count();
        }
    }
}
