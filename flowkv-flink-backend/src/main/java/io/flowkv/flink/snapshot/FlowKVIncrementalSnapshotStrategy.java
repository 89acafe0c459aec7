package io.flowkv.flink.snapshot;

import io.flowkv.core.SealedStore;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.metrics.FlowKVMetrics;
import io.flowkv.flink.restore.RestoreFetch;
import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateRegistry;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.timers.FlowKVTimerQueue;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.DirectoryStateHandle;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProvider;
import org.apache.flink.runtime.state.SnapshotResources;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.IOUtils;

import net.jpountz.lz4.LZ4FrameOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.zip.CRC32C;

/**
 * Incremental checkpoints: the store files a checkpoint needs are uploaded once and shared by later
 * checkpoints through Flink's {@link IncrementalRemoteKeyedStateHandle}; Flink's shared state
 * registry counts the references and deletes a file once no retained checkpoint holds it.
 *
 * <p>Synchronous part, bounded by what changed since the last checkpoint: seal every store (flush
 * its write buffer, close the files being written, write a manifest), hard-link the sealed files
 * that must be uploaded into a snapshot directory (the stores may delete their own names for them
 * as soon as the task runs again), read the small manifests, copy the timers (Flink's
 * copy-on-snapshot). No entry is read or rewritten. Asynchronous part: upload the new files,
 * computing their CRC32C on the way, and write the {@link CheckpointMetadata} stream that lists
 * every file with its length and checksum. Files of the last confirmed checkpoint are referred to
 * by placeholders ({@link UploadedFiles}).
 *
 * <p>With local backup on, every file of the checkpoint is linked, and the snapshot directory
 * becomes the task-local copy once the upload is done.
 *
 * <p>Full checkpoints in FlowKV's native format are the same snapshot with nothing reused: every
 * file is linked and uploaded, so the task pauses no longer than for an incremental checkpoint and
 * the checkpoint depends on no earlier upload.
 *
 * <p>One instance serves one snapshot: how files may be shared depends on the checkpoint's options.
 */
@Internal
public final class FlowKVIncrementalSnapshotStrategy<K>
        implements SnapshotStrategy<
                KeyedStateHandle, FlowKVIncrementalSnapshotStrategy.IncrementalResources> {
    private static final Logger LOG =
            LoggerFactory.getLogger(FlowKVIncrementalSnapshotStrategy.class);

    /**
     * File uploads in flight in this JVM (TaskManager). A checkpoint barrier reaches every subtask
     * at about the same time, so without a bound all their asynchronous parts read and upload at
     * once and the burst competes with record processing (the "statistical ShadowSync" of
     * LSM-backed stream processors). Bounding the concurrency spreads the uploads of many backends
     * over the checkpoint instead; flushes and compactions are spread by the stores' randomized
     * thresholds.
     */
    private static final Semaphore UPLOADS =
            new Semaphore(Math.max(2, Runtime.getRuntime().availableProcessors()));

    /** Name of the metadata stream inside a task-local snapshot directory. */
    static final String LOCAL_METADATA = "_FLOWKV_METADATA";

    private final StateRegistry states;
    private final HeapPriorityQueuesManager priorityQueues;
    private final TypeSerializer<K> keySerializer;
    private final KeyGroupRange keyGroupRange;
    private final Path workDirectory;
    private final UUID backendIdentifier;
    private final UploadedFiles uploads;
    private final LocalRecoveryConfig localRecovery;

    /** Files of the last restore still arriving: a file is linked only once it is there. */
    private final RestoreFetch restoreFetch;

    private final boolean reuseConfirmedFiles;
    private final FlowKVOptions.CheckpointCompression compression;
    private final FlowKVMetrics metrics;

    public FlowKVIncrementalSnapshotStrategy(
            StateRegistry states,
            HeapPriorityQueuesManager priorityQueues,
            TypeSerializer<K> keySerializer,
            KeyGroupRange keyGroupRange,
            Path workDirectory,
            UUID backendIdentifier,
            UploadedFiles uploads,
            LocalRecoveryConfig localRecovery,
            RestoreFetch restoreFetch,
            boolean reuseConfirmedFiles,
            FlowKVOptions.CheckpointCompression compression,
            FlowKVMetrics metrics) {
        this.states = states;
        this.priorityQueues = priorityQueues;
        this.keySerializer = keySerializer;
        this.keyGroupRange = keyGroupRange;
        this.workDirectory = workDirectory;
        this.backendIdentifier = backendIdentifier;
        this.uploads = uploads;
        this.localRecovery = localRecovery;
        this.restoreFetch = restoreFetch;
        this.reuseConfirmedFiles = reuseConfirmedFiles;
        this.compression = compression;
        this.metrics = metrics;
    }

    /** A sealed file this checkpoint uploads: its link in the snapshot directory. */
    private record NewFile(String path, Path link, long length) {}

    /** What the synchronous part hands to the asynchronous part. */
    static final class IncrementalResources implements SnapshotResources {
        final Path snapshotDirectory;
        final List<StateMetaInfoSnapshot> metaInfos;
        final List<CheckpointMetadata.StoredState> states;
        final List<HeapPriorityQueueStateSnapshot<?>> queues;

        /** Per queue: its timer file when FlowKV stores it (then its entry in queues is null). */
        final List<String> timerFiles;

        private final List<NewFile> newFiles;
        private final Map<String, UploadedFiles.SharedFile> reused;
        private final List<String> filesInOrder;

        private IncrementalResources(
                Path snapshotDirectory,
                List<StateMetaInfoSnapshot> metaInfos,
                List<CheckpointMetadata.StoredState> states,
                List<HeapPriorityQueueStateSnapshot<?>> queues,
                List<String> timerFiles,
                List<NewFile> newFiles,
                Map<String, UploadedFiles.SharedFile> reused,
                List<String> filesInOrder) {
            this.snapshotDirectory = snapshotDirectory;
            this.metaInfos = metaInfos;
            this.states = states;
            this.queues = queues;
            this.timerFiles = timerFiles;
            this.newFiles = newFiles;
            this.reused = reused;
            this.filesInOrder = filesInOrder;
        }

        @Override
        public void release() {
            try {
                if (Files.exists(snapshotDirectory)) {
                    FileUtils.deleteDirectory(snapshotDirectory.toFile());
                }
            } catch (IOException e) {
                LOG.warn("Could not delete FlowKV snapshot directory {}", snapshotDirectory, e);
            }
        }
    }

    @Override
    public IncrementalResources syncPrepareResources(long checkpointId) throws Exception {
        // No checkpoint refers to restored files of which one could not be fetched.
        restoreFetch.checkFailed();
        RegisteredSnapshot taken = RegisteredSnapshot.take(states, priorityQueues);
        List<StateMetaInfoSnapshot> metaInfos = taken.metaInfos();
        List<RegisteredState> kvStates = taken.kvStates();
        List<HeapPriorityQueueStateSnapshot<?>> queues = taken.queues();
        // Stored queues are written to a timer file below (the store changes once this returns).
        List<FlowKVTimerQueue<?>> storedQueues = taken.storedQueues();
        Map<String, UploadedFiles.SharedFile> base =
                reuseConfirmedFiles ? uploads.base() : Map.of();
        boolean linkAll = localRecovery.isLocalBackupEnabled();
        Path snapshotDir = workDirectory.resolve("chk-" + checkpointId + "-" + UUID.randomUUID());
        Files.createDirectories(snapshotDir);
        try {
            List<CheckpointMetadata.StoredState> states = new ArrayList<>(kvStates.size());
            List<NewFile> newFiles = new ArrayList<>();
            Map<String, UploadedFiles.SharedFile> reused = new HashMap<>();
            List<String> filesInOrder = new ArrayList<>();
            List<String> timerFiles = new ArrayList<>(storedQueues.size());
            for (int q = 0; q < storedQueues.size(); q++) {
                if (storedQueues.get(q) == null) {
                    timerFiles.add(null);
                    continue;
                }
                String path = "timers-chk-" + checkpointId + "/queue-" + q + ".log";
                Path file = snapshotDir.resolve(path);
                long length = TimerSnapshotFile.write(storedQueues.get(q), file, q);
                newFiles.add(new NewFile(path, file, length));
                filesInOrder.add(path);
                timerFiles.add(path);
            }
            for (RegisteredState registered : kvStates) {
                StateStorage storage = registered.storage();
                if (storage == null) {
                    states.add(null);
                    continue;
                }
                List<SealedStore> sealed = storage.seal();
                List<CheckpointMetadata.Manifest> manifests = new ArrayList<>(sealed.size());
                for (SealedStore store : sealed) {
                    manifests.add(
                            new CheckpointMetadata.Manifest(
                                    relative(store.manifest()),
                                    Files.readAllBytes(store.manifest())));
                    for (SealedStore.SealedFile file : store.files()) {
                        String path = relative(file.path());
                        filesInOrder.add(path);
                        UploadedFiles.SharedFile earlier = base.get(path);
                        boolean reuse = earlier != null && earlier.length() == file.length();
                        if (reuse) {
                            reused.put(path, earlier.reused());
                        }
                        if (!reuse || linkAll) {
                            Path link = snapshotDir.resolve(path);
                            restoreFetch.await(file.path());
                            linkOrCopy(file.path(), link);
                            if (!reuse) {
                                newFiles.add(new NewFile(path, link, file.length()));
                            }
                        }
                    }
                }
                states.add(
                        new CheckpointMetadata.StoredState(
                                storage.pattern(),
                                storage.isList(),
                                relative(storage.directory()),
                                manifests));
            }
            return new IncrementalResources(
                    snapshotDir,
                    metaInfos,
                    states,
                    queues,
                    timerFiles,
                    newFiles,
                    reused,
                    filesInOrder);
        } catch (Exception e) {
            FileUtils.deleteDirectory(snapshotDir.toFile());
            throw e;
        }
    }

    private String relative(Path file) {
        return workDirectory.relativize(file).toString().replace('\\', '/');
    }

    /** A hard link where the file system allows it (no copy, no extra space), else a copy. */
    static void linkOrCopy(Path source, Path link) throws IOException {
        Files.createDirectories(link.getParent());
        try {
            Files.createLink(link, source);
        } catch (FileAlreadyExistsException e) {
            throw e;
        } catch (UnsupportedOperationException | IOException e) {
            Files.copy(source, link);
        }
    }

    @Override
    public SnapshotResultSupplier<KeyedStateHandle> asyncSnapshot(
            IncrementalResources resources,
            long checkpointId,
            long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions) {
        if (resources.metaInfos.isEmpty()) {
            return registry -> SnapshotResult.empty();
        }
        return registry -> upload(resources, checkpointId, streamFactory, registry);
    }

    private SnapshotResult<KeyedStateHandle> upload(
            IncrementalResources resources,
            long checkpointId,
            CheckpointStreamFactory streamFactory,
            CloseableRegistry registry)
            throws Exception {
        List<StreamStateHandle> written = new ArrayList<>();
        boolean done = false;
        try {
            Map<String, UploadedFiles.SharedFile> files = new HashMap<>(resources.reused);
            long uploadedBytes = 0;
            for (NewFile file : resources.newFiles) {
                UploadedFiles.SharedFile uploaded = uploadFile(file, streamFactory, registry);
                written.add(uploaded.handle());
                files.put(file.path(), uploaded);
                uploadedBytes += uploaded.handle().getStateSize();
            }
            List<HandleAndLocalPath> shared = new ArrayList<>(resources.filesInOrder.size());
            List<CheckpointMetadata.FileEntry> entries =
                    new ArrayList<>(resources.filesInOrder.size());
            for (String path : resources.filesInOrder) {
                UploadedFiles.SharedFile file = files.get(path);
                shared.add(
                        HandleAndLocalPath.of(
                                file.uploaded() ? file.handle() : file.placeholder(), path));
                entries.add(
                        new CheckpointMetadata.FileEntry(
                                path, file.length(), file.crc32c(), file.encoding()));
            }
            byte[] metadata =
                    CheckpointMetadata.encode(
                            keySerializer,
                            resources.metaInfos,
                            keyGroupRange,
                            resources.states,
                            entries,
                            timers(resources.queues),
                            resources.timerFiles);
            StreamStateHandle metaHandle =
                    writeStream(
                            streamFactory,
                            CheckpointedStateScope.EXCLUSIVE,
                            registry,
                            metadata,
                            "metadata");
            written.add(metaHandle);
            IncrementalRemoteKeyedStateHandle remote =
                    new IncrementalRemoteKeyedStateHandle(
                            backendIdentifier,
                            keyGroupRange,
                            checkpointId,
                            shared,
                            List.of(),
                            metaHandle,
                            uploadedBytes + metadata.length);
            SnapshotResult<KeyedStateHandle> result =
                    localRecovery.isLocalBackupEnabled()
                            ? withLocalCopy(remote, resources, checkpointId, metadata, shared)
                            : SnapshotResult.of(remote);
            // With file merging on, the reused files' physical files must stay alive.
            List<StreamStateHandle> reusedHandles = new ArrayList<>(resources.reused.size());
            long reusedBytes = 0;
            for (UploadedFiles.SharedFile file : resources.reused.values()) {
                reusedHandles.add(file.handle());
                reusedBytes += file.handle().getStateSize();
            }
            streamFactory.reusePreviousStateHandle(reusedHandles);
            metrics.checkpointUploaded(uploadedBytes + metadata.length, reusedBytes);
            uploads.recorded(checkpointId, files);
            LOG.debug(
                    "FlowKV incremental checkpoint {}: {} files, {} uploaded ({} bytes), {} reused",
                    checkpointId,
                    resources.filesInOrder.size(),
                    resources.newFiles.size(),
                    uploadedBytes,
                    resources.reused.size());
            done = true;
            return result;
        } finally {
            if (!done) {
                for (StreamStateHandle handle : written) {
                    try {
                        StateUtil.discardStateObjectQuietly(handle);
                    } catch (Exception e) {
                        LOG.warn("Could not discard {}", handle, e);
                    }
                }
            }
        }
    }

    private UploadedFiles.SharedFile uploadFile(
            NewFile file, CheckpointStreamFactory streamFactory, CloseableRegistry registry)
            throws IOException {
        try {
            UPLOADS.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("Interrupted before uploading " + file.path());
        }
        try {
            return uploadFileWithPermit(file, streamFactory, registry);
        } finally {
            UPLOADS.release();
        }
    }

    private UploadedFiles.SharedFile uploadFileWithPermit(
            NewFile file, CheckpointStreamFactory streamFactory, CloseableRegistry registry)
            throws IOException {
        CRC32C crc = new CRC32C();
        CheckpointStateOutputStream out =
                streamFactory.createCheckpointStateOutputStream(CheckpointedStateScope.SHARED);
        registry.registerCloseable(out);
        try (InputStream in = Files.newInputStream(file.link())) {
            OutputStream target = encoder(out);
            byte[] buffer = new byte[64 * 1024];
            long remaining = file.length();
            while (remaining > 0) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, remaining));
                if (n < 0) {
                    throw new IOException(
                            "Store file "
                                    + file.path()
                                    + " ended after "
                                    + (file.length() - remaining)
                                    + " of the "
                                    + file.length()
                                    + " bytes its manifest lists");
                }
                crc.update(buffer, 0, n);
                target.write(buffer, 0, n);
                remaining -= n;
            }
            if (target != out) {
                // Ends the frame; the checkpoint stream stays open for its handle.
                target.close();
            }
            StreamStateHandle handle = closeAndGetHandle(out, registry, file.path());
            return new UploadedFiles.SharedFile(
                    handle, file.length(), (int) crc.getValue(), compression, true);
        } catch (IOException | RuntimeException e) {
            if (registry.unregisterCloseable(out)) {
                IOUtils.closeQuietly(out);
            }
            throw e;
        }
    }

    /** The stream a store file is written through: {@code out} itself, or an LZ4 frame on it. */
    private OutputStream encoder(CheckpointStateOutputStream out) throws IOException {
        if (compression == FlowKVOptions.CheckpointCompression.NONE) {
            return out;
        }
        OutputStream keepOpen =
                new FilterOutputStream(out) {
                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        out.write(b, off, len);
                    }

                    @Override
                    public void close() throws IOException {
                        out.flush();
                    }
                };
        return new LZ4FrameOutputStream(keepOpen, LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB);
    }

    private static StreamStateHandle writeStream(
            CheckpointStreamFactory streamFactory,
            CheckpointedStateScope scope,
            CloseableRegistry registry,
            byte[] bytes,
            String what)
            throws IOException {
        CheckpointStateOutputStream out = streamFactory.createCheckpointStateOutputStream(scope);
        registry.registerCloseable(out);
        try {
            out.write(bytes);
            return closeAndGetHandle(out, registry, what);
        } catch (IOException | RuntimeException e) {
            if (registry.unregisterCloseable(out)) {
                IOUtils.closeQuietly(out);
            }
            throw e;
        }
    }

    private static StreamStateHandle closeAndGetHandle(
            CheckpointStateOutputStream out, CloseableRegistry registry, String what)
            throws IOException {
        if (!registry.unregisterCloseable(out)) {
            throw new IOException("Snapshot canceled while writing " + what);
        }
        StreamStateHandle handle = out.closeAndGetHandle();
        if (handle == null) {
            throw new IOException("The checkpoint storage returned no handle for " + what);
        }
        return handle;
    }

    @SuppressWarnings("unchecked")
    private List<List<CheckpointMetadata.Timer>> timers(
            List<HeapPriorityQueueStateSnapshot<?>> queues) throws IOException {
        List<List<CheckpointMetadata.Timer>> out = new ArrayList<>(queues.size());
        DataOutputSerializer buffer = new DataOutputSerializer(64);
        for (int q = 0; q < queues.size(); q++) {
            HeapPriorityQueueStateSnapshot<?> snapshot = queues.get(q);
            if (snapshot == null) {
                out.add(List.of()); // stored by FlowKV: in its timer file
                continue;
            }
            HeapPriorityQueueStateSnapshot<Object> queue =
                    (HeapPriorityQueueStateSnapshot<Object>) snapshot;
            TypeSerializer<Object> serializer = queue.getMetaInfo().getElementSerializer();
            List<CheckpointMetadata.Timer> timers = new ArrayList<>();
            for (int kg = keyGroupRange.getStartKeyGroup();
                    kg <= keyGroupRange.getEndKeyGroup();
                    kg++) {
                Iterator<Object> elements = queue.getIteratorForKeyGroup(kg);
                while (elements.hasNext()) {
                    buffer.clear();
                    serializer.serialize(elements.next(), buffer);
                    timers.add(new CheckpointMetadata.Timer(kg, buffer.getCopyOfBuffer()));
                }
            }
            out.add(timers);
        }
        return out;
    }

    /**
     * Turns the snapshot directory, which holds every file of the checkpoint, into the task-local
     * copy Flink prefers on restore, with the metadata beside the files.
     */
    private SnapshotResult<KeyedStateHandle> withLocalCopy(
            IncrementalRemoteKeyedStateHandle remote,
            IncrementalResources resources,
            long checkpointId,
            byte[] metadata,
            List<HandleAndLocalPath> shared) {
        try {
            LocalSnapshotDirectoryProvider provider =
                    localRecovery
                            .getLocalStateDirectoryProvider()
                            .orElseThrow(LocalRecoveryConfig.localRecoveryNotEnabled());
            Path localDir =
                    provider.subtaskSpecificCheckpointDirectory(checkpointId)
                            .toPath()
                            .resolve("flowkv-" + backendIdentifier);
            Files.createDirectories(localDir.getParent());
            try {
                Files.move(resources.snapshotDirectory, localDir);
            } catch (IOException e) {
                // Another file system: copy, then the snapshot directory goes with release().
                copyTree(resources.snapshotDirectory, localDir);
            }
            Path metadataFile = localDir.resolve(LOCAL_METADATA);
            Files.write(metadataFile, metadata);
            FileStateHandle localMeta =
                    new FileStateHandle(
                            new org.apache.flink.core.fs.Path(metadataFile.toUri()),
                            metadata.length);
            IncrementalLocalKeyedStateHandle local =
                    new IncrementalLocalKeyedStateHandle(
                            backendIdentifier,
                            checkpointId,
                            DirectoryStateHandle.forPathWithSize(localDir),
                            keyGroupRange,
                            localMeta,
                            shared);
            return SnapshotResult.withLocalState(remote, local);
        } catch (Exception e) {
            // The remote checkpoint stands on its own; a missing local copy only costs a download.
            LOG.warn("Could not keep a local copy of FlowKV checkpoint {}", checkpointId, e);
            return SnapshotResult.of(remote);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path source : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(source, target);
                }
            }
        }
    }
}
