package io.flowkv.flink.restore;

import io.flowkv.core.log.FileIo;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.snapshot.CheckpointMetadata;
import io.flowkv.flink.snapshot.TimerSnapshotFile;
import io.flowkv.flink.snapshot.UploadedFiles;
import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.ListStateStorage;
import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.storage.ValueStateStorage;
import io.flowkv.flink.timers.FlowKVTimerQueue;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.AbstractIncrementalStateHandle;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalLocalKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.StateMigrationException;

import net.jpountz.lz4.LZ4FrameInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

/**
 * Restores a backend from FlowKV's incremental checkpoints: the remote {@link
 * IncrementalRemoteKeyedStateHandle}, or the task-local {@link IncrementalLocalKeyedStateHandle}
 * when Flink found a local copy.
 *
 * <p>Every store file is fetched, and its length and CRC32C checked against the checkpoint's {@link
 * CheckpointMetadata}, before any store opens it ({@link RestoreFetch}); a missing or corrupt file
 * fails with its path in the message. Restored in place, the stores reopen from their manifests
 * while the files are still fetched in the background ({@code restore-in-background}); otherwise
 * every file is fetched first.
 *
 * <p>Same key-group range (no rescaling): the files are placed where the stores had them and the
 * stores reopen from their manifests; nothing is rewritten. Another range: incremental handles
 * arrive whole, so each is reopened in a scratch directory and only the entries of this backend's
 * key groups are copied into fresh stores (timers likewise).
 */
@Internal
public final class FlowKVIncrementalRestoreOperation<K> extends RestoreOperation<K> {
    private static final Logger LOG =
            LoggerFactory.getLogger(FlowKVIncrementalRestoreOperation.class);

    private final UploadedFiles uploads;
    private final RestoreFetch fetch;
    private final int threads;
    private final boolean inBackground;
    private final int backgroundNice;
    private boolean keySerializerChecked;

    /**
     * {@code fetch}: the stores' file I/O, which fetches the files; {@code threads}: how many files
     * are fetched at once; {@code inBackground}: a restore in place returns before the store files
     * are fetched ({@link RestoreFetch}), on threads at nice value {@code backgroundNice}.
     */
    public FlowKVIncrementalRestoreOperation(
            RestoreTarget<K> target,
            UploadedFiles uploads,
            RestoreFetch fetch,
            int threads,
            boolean inBackground,
            int backgroundNice) {
        super(target);
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1: " + threads);
        }
        this.backgroundNice = ThreadNice.check(backgroundNice);
        this.uploads = uploads;
        this.fetch = fetch;
        this.threads = threads;
        this.inBackground = inBackground;
    }

    /**
     * True if the handles are incremental checkpoint handles; all non-null ones must then be (a
     * subtask with no keyed state at all contributes none).
     */
    public static boolean isIncremental(Collection<KeyedStateHandle> handles) {
        if (handles == null) {
            return false;
        }
        int present = 0;
        int incremental = 0;
        for (KeyedStateHandle handle : handles) {
            if (handle == null) {
                continue;
            }
            present++;
            if (handle instanceof IncrementalRemoteKeyedStateHandle
                    || handle instanceof IncrementalLocalKeyedStateHandle) {
                incremental++;
            }
        }
        if (incremental != 0 && incremental != present) {
            throw new IllegalStateException(
                    "Cannot restore from a mix of incremental and full snapshot handles: "
                            + handles);
        }
        return incremental != 0;
    }

    /** Where the files of one checkpoint handle come from. */
    private interface FileSource {
        String describe(String path);

        InputStream open(String path) throws IOException;

        /**
         * Whether the files are the checkpoint's uploads, encoded as its metadata says; a
         * task-local copy holds the store files as they are.
         */
        boolean encoded();

        /** The shared-state handles to seed {@link UploadedFiles} with, by path. */
        Map<String, StreamStateHandle> sharedHandles();
    }

    public void restore(Collection<KeyedStateHandle> all) throws Exception {
        List<KeyedStateHandle> handles = new ArrayList<>(all.size());
        for (KeyedStateHandle handle : all) {
            if (handle != null) {
                handles.add(handle);
            }
        }
        if (handles.size() == 1) {
            KeyedStateHandle only = handles.iterator().next();
            if (only.getKeyGroupRange().equals(keyGroupRange)) {
                restoreInPlace(only);
                return;
            }
        }
        for (KeyedStateHandle handle : handles) {
            if (handle.getKeyGroupRange().getIntersection(keyGroupRange).getNumberOfKeyGroups()
                    > 0) {
                restoreClipped(handle);
            }
        }
        for (RegisteredState state : states.all()) {
            if (state.storage() != null) {
                state.storage().flush();
            }
        }
    }

    private void restoreInPlace(KeyedStateHandle handle) throws Exception {
        long start = System.nanoTime();
        long checkpointId = ((AbstractIncrementalStateHandle) handle).getCheckpointId();
        FileSource source = source(handle);
        CheckpointMetadata.Decoded metadata = readMetadata(handle);
        List<RegisteredState> restored = registerStates(metadata);
        Path base = binder.factory().baseDirectory();
        Map<String, UploadedFiles.SharedFile> files = sharedFiles(metadata, source);
        String label = "Restore of key groups " + keyGroupRange + " of checkpoint " + checkpointId;
        fetch.add(fetches(metadata, source, base));
        // A task-local copy goes once a later checkpoint is confirmed: fetch it all now.
        boolean background = inBackground && source.encoded();
        if (!background) {
            fetch.start(threads, label);
            fetch.awaitAll();
        }
        long fetched = System.nanoTime();
        List<StateStorage> opened = new ArrayList<>();
        try {
            for (int i = 0; i < restored.size(); i++) {
                CheckpointMetadata.StoredState stored = metadata.states().get(i);
                if (stored == null) {
                    continue;
                }
                RegisteredState state = restored.get(i);
                StateStorage storage = reopen(state, stored, base, metadata.range());
                opened.add(storage);
                binder.bindRestored(state, storage);
            }
        } catch (IOException | RuntimeException e) {
            // The backend is not built: nothing else would close the stores that did reopen.
            for (StateStorage storage : opened) {
                try {
                    storage.close();
                } catch (IOException | RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        long reopened = System.nanoTime();
        restoreTimers(metadata, base, fetch);
        deleteTimerFiles(metadata, base);
        // The stores and timers are in: the rest of the files arrive while the subtask runs, with
        // the CPU the subtask leaves.
        fetch.start(threads, label, background ? backgroundNice : 0);
        uploads.restored(checkpointId, files);
        long bytes = 0;
        for (CheckpointMetadata.FileEntry entry : metadata.files()) {
            bytes += entry.length();
        }
        LOG.info(
                "Restored key groups {} of checkpoint {}: {} files, {} bytes{} in {} ms,"
                        + " stores reopened in {} ms, timers in {} ms",
                keyGroupRange,
                checkpointId,
                metadata.files().size(),
                bytes,
                background
                        ? " (" + fetch.pendingFiles() + " still fetched in the background)"
                        : " fetched",
                (fetched - start) / 1_000_000,
                (reopened - fetched) / 1_000_000,
                (System.nanoTime() - reopened) / 1_000_000);
    }

    private void restoreClipped(KeyedStateHandle handle) throws Exception {
        FileSource source = source(handle);
        CheckpointMetadata.Decoded metadata = readMetadata(handle);
        List<RegisteredState> restored = registerStates(metadata);
        Path scratch = binder.factory().baseDirectory().resolve("restore-" + UUID.randomUUID());
        // Every entry is copied out of the scratch stores at once: fetch every file first.
        try (RestoreFetch scratchFetch = new RestoreFetch(FileIo.DEFAULT)) {
            scratchFetch.add(fetches(metadata, source, scratch));
            scratchFetch.start(
                    threads,
                    "Restore of key groups "
                            + handle.getKeyGroupRange()
                            + " into "
                            + keyGroupRange);
            scratchFetch.awaitAll();
            for (int i = 0; i < restored.size(); i++) {
                CheckpointMetadata.StoredState stored = metadata.states().get(i);
                if (stored == null) {
                    continue;
                }
                RegisteredState state = restored.get(i);
                try (StateStorage from = reopen(state, stored, scratch, metadata.range())) {
                    copyOwnKeyGroups(from, binder.storage(state));
                }
            }
            restoreTimers(metadata, scratch, scratchFetch);
        } finally {
            FileUtils.deleteDirectory(scratch.toFile());
        }
    }

    /** Copies the entries of this backend's key groups from a reopened storage. */
    private void copyOwnKeyGroups(StateStorage from, StateStorage to) throws IOException {
        try {
            from.forEach(
                    (key, namespace, value, offset, length) -> {
                        int keyGroup = KeyBytes.keyGroupOf(key, keyGroupPrefixBytes);
                        if (!keyGroupRange.contains(keyGroup)) {
                            return;
                        }
                        byte[] copy = Arrays.copyOfRange(value, offset, offset + length);
                        try {
                            if (to instanceof ListStateStorage) {
                                ((ListStateStorage) to)
                                        .append(keyGroup, key.clone(), namespace.clone(), copy);
                            } else {
                                ((ValueStateStorage) to)
                                        .put(keyGroup, key.clone(), namespace.clone(), copy);
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private StateStorage reopen(
            RegisteredState state,
            CheckpointMetadata.StoredState stored,
            Path root,
            KeyGroupRange writtenFor)
            throws IOException {
        List<Path> manifests = new ArrayList<>(stored.manifests().size());
        for (CheckpointMetadata.Manifest manifest : stored.manifests()) {
            Path file = root.resolve(manifest.path());
            Files.createDirectories(file.getParent());
            Files.write(file, manifest.bytes());
            manifests.add(file);
        }
        Path dir = root.resolve(stored.directory());
        Files.createDirectories(dir);
        try {
            return binder.factory()
                    .restore(
                            state.id(),
                            dir,
                            stored.pattern(),
                            stored.list(),
                            writtenFor,
                            manifests);
        } catch (IOException e) {
            throw new IOException(
                    "Could not reopen the "
                            + stored.pattern()
                            + " store of state "
                            + state.name()
                            + " from checkpoint files in "
                            + dir
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    // ------------------------------------------------------------------ files

    private FileSource source(KeyedStateHandle handle) {
        long checkpoint = ((AbstractIncrementalStateHandle) handle).getCheckpointId();
        if (handle instanceof IncrementalLocalKeyedStateHandle local) {
            Path dir = local.getDirectoryStateHandle().getDirectory();
            LOG.info(
                    "Restoring key groups {} of checkpoint {} from the task-local copy in {}",
                    handle.getKeyGroupRange(),
                    checkpoint,
                    dir);
            return new FileSource() {
                @Override
                public String describe(String path) {
                    return dir.resolve(path).toString();
                }

                @Override
                public InputStream open(String path) throws IOException {
                    return Files.newInputStream(dir.resolve(path));
                }

                @Override
                public boolean encoded() {
                    return false;
                }

                @Override
                public Map<String, StreamStateHandle> sharedHandles() {
                    return byPath(local.getSharedStateHandles());
                }
            };
        }
        IncrementalRemoteKeyedStateHandle remote = (IncrementalRemoteKeyedStateHandle) handle;
        Map<String, StreamStateHandle> byPath = byPath(remote.getSharedState());
        LOG.info(
                "Restoring key groups {} of checkpoint {} from the checkpoint storage ({} files)",
                handle.getKeyGroupRange(),
                checkpoint,
                byPath.size());
        return new FileSource() {
            @Override
            public String describe(String path) {
                StreamStateHandle file = byPath.get(path);
                return path + " (" + file + ")";
            }

            @Override
            public InputStream open(String path) throws IOException {
                StreamStateHandle file = byPath.get(path);
                if (file == null) {
                    throw new IOException(
                            "Checkpoint "
                                    + remote.getCheckpointId()
                                    + " lists store file "
                                    + path
                                    + " in its metadata, but its handle has no such shared file");
                }
                return file.openInputStream();
            }

            @Override
            public boolean encoded() {
                return true;
            }

            @Override
            public Map<String, StreamStateHandle> sharedHandles() {
                return byPath;
            }
        };
    }

    private static Map<String, StreamStateHandle> byPath(List<HandleAndLocalPath> files) {
        Map<String, StreamStateHandle> byPath = new HashMap<>();
        for (HandleAndLocalPath file : files) {
            byPath.put(file.getLocalPath(), file.getHandle());
        }
        return byPath;
    }

    /**
     * The checkpoint's files as {@link UploadedFiles} records, for later checkpoints to refer to
     * instead of uploading them again. Fails, naming the file, if the handle lacks one.
     */
    private static Map<String, UploadedFiles.SharedFile> sharedFiles(
            CheckpointMetadata.Decoded metadata, FileSource source) throws IOException {
        Map<String, StreamStateHandle> handles = source.sharedHandles();
        Map<String, UploadedFiles.SharedFile> files = new HashMap<>();
        for (CheckpointMetadata.FileEntry entry : metadata.files()) {
            StreamStateHandle handle = handles.get(entry.path());
            if (handle == null) {
                if (!source.encoded()) {
                    continue; // a task-local copy: its files are read where they are
                }
                throw new IOException(
                        "The checkpoint lists store file "
                                + entry.path()
                                + " in its metadata, but its handle has no such shared file");
            }
            files.put(
                    entry.path(),
                    new UploadedFiles.SharedFile(
                            handle, entry.length(), entry.crc32c(), entry.encoding(), false));
        }
        return files;
    }

    /** The copies that bring every file of the checkpoint under {@code root}, in its order. */
    private static List<RestoreFetch.File> fetches(
            CheckpointMetadata.Decoded metadata, FileSource source, Path root) {
        List<RestoreFetch.File> files = new ArrayList<>(metadata.files().size());
        for (CheckpointMetadata.FileEntry entry : metadata.files()) {
            files.add(
                    new RestoreFetch.File(
                            root.resolve(entry.path()),
                            stop -> fetchFile(entry, source, root, stop)));
        }
        return files;
    }

    /** Copies one file of the checkpoint under {@code root}, checking length and CRC32C. */
    private static void fetchFile(
            CheckpointMetadata.FileEntry entry, FileSource source, Path root, BooleanSupplier stop)
            throws IOException {
        byte[] buffer = new byte[64 * 1024];
        Path target = root.resolve(entry.path());
        Files.createDirectories(target.getParent());
        CRC32C crc = new CRC32C();
        long length = 0;
        boolean lz4 =
                source.encoded() && entry.encoding() == FlowKVOptions.CheckpointCompression.LZ4;
        try (InputStream in = source.open(entry.path());
                OutputStream out = Files.newOutputStream(target)) {
            InputStream decoded = lz4 ? lz4Frame(in, source, entry) : in;
            int n;
            while ((n = decoded.read(buffer)) >= 0) {
                if (stop.getAsBoolean()) {
                    throw new IOException("the fetch was stopped: the backend is closing");
                }
                crc.update(buffer, 0, n);
                out.write(buffer, 0, n);
                length += n;
            }
        } catch (CorruptUploadException e) {
            throw e;
        } catch (IOException e) {
            throw new IOException(
                    "Could not read checkpoint file " + source.describe(entry.path()) + ": " + e,
                    e);
        }
        if (length != entry.length()) {
            throw new IOException(
                    "Checkpoint file "
                            + source.describe(entry.path())
                            + " has "
                            + length
                            + " bytes, the checkpoint recorded "
                            + entry.length());
        }
        if ((int) crc.getValue() != entry.crc32c()) {
            throw new IOException(
                    String.format(
                            "Checkpoint file %s is corrupt: CRC32C 0x%08x, the checkpoint"
                                    + " recorded 0x%08x",
                            source.describe(entry.path()), (int) crc.getValue(), entry.crc32c()));
        }
    }

    /** An upload whose LZ4 frame does not decode. */
    private static final class CorruptUploadException extends IOException {
        private static final long serialVersionUID = 1L;

        CorruptUploadException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** {@code in} decoded as one LZ4 frame; a frame that does not decode fails as corrupt. */
    private static InputStream lz4Frame(
            InputStream in, FileSource source, CheckpointMetadata.FileEntry entry)
            throws IOException {
        InputStream frame;
        try {
            frame = new LZ4FrameInputStream(in);
        } catch (IOException | RuntimeException e) {
            throw corruptFrame(source, entry, e);
        }
        return new FilterInputStream(frame) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    return super.read(b, off, len);
                } catch (IOException | RuntimeException e) {
                    throw corruptFrame(source, entry, e);
                }
            }
        };
    }

    private static CorruptUploadException corruptFrame(
            FileSource source, CheckpointMetadata.FileEntry entry, Exception cause) {
        return new CorruptUploadException(
                "Checkpoint file "
                        + source.describe(entry.path())
                        + " is corrupt or truncated: the checkpoint recorded it as one LZ4 frame,"
                        + " which does not decode ("
                        + cause
                        + ")",
                cause);
    }

    // ------------------------------------------------------------------ metadata

    private CheckpointMetadata.Decoded readMetadata(KeyedStateHandle handle) throws Exception {
        StreamStateHandle metaHandle =
                ((AbstractIncrementalStateHandle) handle).getMetaDataStateHandle();
        byte[] bytes;
        try (FSDataInputStream in = metaHandle.openInputStream()) {
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new IOException(
                    "Could not read the metadata of FlowKV checkpoint "
                            + ((AbstractIncrementalStateHandle) handle).getCheckpointId()
                            + " from "
                            + metaHandle
                            + ": "
                            + e,
                    e);
        }
        CheckpointMetadata.Decoded metadata =
                CheckpointMetadata.decode(bytes, userCodeClassLoader, metaHandle.toString());
        checkKeySerializer(metadata);
        return metadata;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void checkKeySerializer(CheckpointMetadata.Decoded metadata)
            throws StateMigrationException {
        if (keySerializerChecked) {
            return;
        }
        TypeSerializer<K> current = keySerializerProvider.currentSchemaSerializer();
        TypeSerializerSchemaCompatibility<K> compatibility =
                keySerializerProvider.setPreviousSerializerSnapshotForRestoredState(
                        (org.apache.flink.api.common.typeutils.TypeSerializerSnapshot)
                                metadata.proxy().getKeySerializerSnapshot());
        if (compatibility.isCompatibleAfterMigration() || compatibility.isIncompatible()) {
            throw new StateMigrationException(
                    "The new key serializer ("
                            + current
                            + ") must be compatible with the previous key serializer ("
                            + keySerializerProvider.previousSchemaSerializer()
                            + ").");
        }
        keySerializerChecked = true;
    }

    /** Registers the key-value states of a checkpoint; returns them in its order. */
    private List<RegisteredState> registerStates(CheckpointMetadata.Decoded metadata) {
        List<RegisteredState> restored = new ArrayList<>();
        for (StateMetaInfoSnapshot snapshot : metadata.proxy().getStateMetaInfoSnapshots()) {
            if (snapshot.getBackendStateType()
                    != StateMetaInfoSnapshot.BackendStateType.KEY_VALUE) {
                continue;
            }
            restored.add(FlowKVRestoreOperation.registeredState(states, snapshot));
        }
        if (restored.size() != metadata.states().size()) {
            throw new IllegalStateException(
                    "FlowKV checkpoint metadata lists "
                            + metadata.states().size()
                            + " stores for "
                            + restored.size()
                            + " key-value states");
        }
        return restored;
    }

    /**
     * Adds the checkpoint's timers of this backend's key groups to its queues: listed in the
     * metadata for heap queues, read from their timer file (fetched into {@code root}) for queues
     * FlowKV stored.
     */
    private void restoreTimers(CheckpointMetadata.Decoded metadata, Path root, RestoreFetch files)
            throws IOException {
        int q = 0;
        DataInputDeserializer in = new DataInputDeserializer();
        for (StateMetaInfoSnapshot snapshot : metadata.proxy().getStateMetaInfoSnapshots()) {
            if (snapshot.getBackendStateType()
                    != StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE) {
                continue;
            }
            HeapPriorityQueueSnapshotRestoreWrapper<HeapPriorityQueueElement> queue =
                    FlowKVRestoreOperation.restoredQueue(
                            queues, snapshot, queueFactory, keyGroupRange, numberOfKeyGroups);
            TypeSerializer<HeapPriorityQueueElement> serializer =
                    queue.getMetaInfo().getElementSerializer();
            String timerFile = metadata.timerFiles().get(q);
            if (timerFile != null) {
                restoreTimerFile(queue, serializer, in, root.resolve(timerFile), files);
            }
            for (CheckpointMetadata.Timer timer : metadata.queues().get(q++)) {
                restoreTimer(queue, serializer, in, timer.keyGroup(), timer.bytes());
            }
        }
    }

    /**
     * Adds the timers of a stored queue's snapshot file, once fetched: straight into the store
     * where the queue can take them ({@link #loadStoredTimers}), else one by one.
     */
    private void restoreTimerFile(
            HeapPriorityQueueSnapshotRestoreWrapper<HeapPriorityQueueElement> queue,
            TypeSerializer<HeapPriorityQueueElement> serializer,
            DataInputDeserializer in,
            Path timers,
            RestoreFetch files)
            throws IOException {
        files.await(timers);
        if (loadStoredTimers(queue.getPriorityQueue(), timers)) {
            return;
        }
        try {
            TimerSnapshotFile.read(
                    timers,
                    (keyGroup, bytes) -> {
                        try {
                            restoreTimer(queue, serializer, in, keyGroup, bytes);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Writes the timers of a stored queue's snapshot file, this backend's key groups, straight into
     * the store of {@code queue} when it can take them ({@link FlowKVTimerQueue#loadSnapshot}): the
     * file lists them in the store's order, so they go in as one sorted run without being
     * deserialized, and an {@code AUTO} queue stays stored rather than moving again after the
     * restore. Returns false, having read nothing, where the queue cannot take them.
     */
    private boolean loadStoredTimers(Object queue, Path file) throws IOException {
        try (TimerSnapshotFile.Reader reader = TimerSnapshotFile.open(file)) {
            return FlowKVTimerQueue.loadSnapshot(queue, ownTimersInStoredForm(reader));
        } catch (UncheckedIOException e) {
            throw e.getCause();
        } catch (IllegalArgumentException e) {
            throw new IOException(
                    "The timer snapshot file "
                            + file
                            + " is not a stored queue's timers in its order: "
                            + e.getMessage(),
                    e);
        }
    }

    /** The timers of {@code reader} in this backend's key groups, as the store keeps them. */
    private Iterator<byte[]> ownTimersInStoredForm(TimerSnapshotFile.Reader reader) {
        return new Iterator<>() {
            private byte[] next;

            @Override
            public boolean hasNext() {
                try {
                    while (next == null && reader.next()) {
                        if (keyGroupRange.contains(reader.keyGroup())) {
                            next = reader.storedForm();
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return next != null;
            }

            @Override
            public byte[] next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                byte[] element = next;
                next = null;
                return element;
            }
        };
    }

    /**
     * Adds one timer of this backend's key groups to its queue. A method of its own so that the JIT
     * compiles it after a few hundred timers: a restore runs the loops over them once per JVM.
     */
    private void restoreTimer(
            HeapPriorityQueueSnapshotRestoreWrapper<HeapPriorityQueueElement> queue,
            TypeSerializer<HeapPriorityQueueElement> serializer,
            DataInputDeserializer in,
            int keyGroup,
            byte[] bytes)
            throws IOException {
        if (keyGroupRange.contains(keyGroup)) {
            in.setBuffer(bytes);
            queue.getPriorityQueue().add(serializer.deserialize(in));
        }
    }

    /** The timer files were read into the queues: they need not stay in the working directory. */
    private static void deleteTimerFiles(CheckpointMetadata.Decoded metadata, Path root)
            throws IOException {
        for (String timerFile : metadata.timerFiles()) {
            if (timerFile != null) {
                Path file = root.resolve(timerFile);
                Files.deleteIfExists(file);
                try (var rest = Files.list(file.getParent())) {
                    if (rest.findAny().isEmpty()) {
                        Files.delete(file.getParent());
                    }
                }
            }
        }
    }
}
