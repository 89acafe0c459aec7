package io.flowkv.core.aar;

import io.flowkv.core.BackgroundWork;
import io.flowkv.core.Checks;
import io.flowkv.core.EntryVisitor;
import io.flowkv.core.Jitter;
import io.flowkv.core.ListStore;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.index.Hashing;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.ManifestFile;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapArena;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import static io.flowkv.core.log.IoFailures.chain;

/**
 * The Append and Aligned Read store (FlowKV paper §4.1): list state of windows that fire for all
 * keys at once (tumbling, sliding).
 *
 * <p>Appends go to a write buffer hashed by window; a flush appends each (window, partition) chain
 * to that window partition's own segment file, as frames of records. A window is read one partition
 * at a time: the first {@link #get} of a partition replays its segments into memory organised by
 * key, and the following keys of the firing window are served from there ({@link PartitionLoader}).
 * Values still buffered are returned after the flushed ones. A partition larger than the budget
 * even alone (a window larger than the managed memory) is not loaded: each read streams its
 * segments instead ({@link PartitionScanner}), trading one scan per read for bounded memory, so
 * that no read and no remove fails for lack of memory.
 *
 * <p>Flink reads a fired window key by key and clears it later, possibly after late elements fired
 * it again, so reads never delete. {@link #remove} clears one key: buffered values are dropped and,
 * if the key has flushed values, a REMOVE record is logged after them. When no key of a partition
 * is left its files are deleted, and when no partition of a window holds anything the window is
 * gone. There is no compaction: space comes back by deleting files whole.
 *
 * <p>When the write buffer fills, its chains are written on a background thread ({@code
 * flowkv-aar-flush-N}, {@link BackgroundWork}) while appends go on into a second arena ({@link
 * AarStoreOptions#backgroundFlush}): the appending thread does not wait for the disk. Every other
 * operation first settles that flush (waits for it and moves what it wrote from "buffered" to "in
 * the segments"), so reads, removes and seals see the store as if the flush had run on the calling
 * thread. While it runs, only the flushing thread touches segments and writers, and the calling
 * thread only appends to the write buffer.
 *
 * <p>One thread calls the store; no locks (the flushing thread is handed its chains through the
 * executor and waited for through its future).
 */
public final class AarStore implements ListStore {
    private static final String MANIFEST_SUFFIX = ".manifest";

    /** Where full write buffers are written, for every AAR store of the JVM. */
    private static final ExecutorService FLUSHERS = BackgroundWork.pool("flowkv-aar-flush-");

    /**
     * Buffered appends of a partition above which a read flushes them first: reading a fired window
     * key by key would otherwise scan the chain once per key.
     */
    static final int READ_FLUSH_THRESHOLD = 64;

    private final AarStoreOptions options;
    private final MemoryBudget budget;
    private final FileIo io;
    private final Jitter jitter;
    private final StoreStats stats = new StoreStats();
    private final WindowTable windows;
    private final WriteBuffer buffer;
    private final IoBuffer staging;
    private final SegmentFiles files;
    private final PartitionLoader loader;
    private final PartitionScanner scanner;
    private final int frameTarget;
    private long flushLimit;

    /**
     * The chains the last flush in the background took, in flush order, while they are not all
     * written and settled: empty when none is running or owed ({@link #settle}).
     */
    private List<FlushingChain> flushing = new ArrayList<>();

    /** That flush's task while it runs on {@link #FLUSHERS}; null otherwise. */
    private Future<?> flushTask;

    private long manifestSequence;
    private Path ownManifest;
    private boolean closed;

    private AarStore(AarStoreOptions options, MemoryBudget budget, long nextFileId) {
        this.options = options;
        this.budget = budget;
        this.io = options.fileIo();
        this.jitter = options.newJitter();
        this.flushLimit = jitter.scale(options.writeBufferBytes());
        this.frameTarget = options.ioBufferBytes() - FrameDescriptor.HEADER_LENGTH;
        WindowTable table = null;
        IoBuffer stagingBuffer = null;
        try {
            table = new WindowTable(budget, options.partitions(), stats);
            stagingBuffer =
                    IoBuffer.allocate(budget, options.ioBufferBytes(), "AAR staging buffer");
        } catch (RuntimeException e) {
            if (table != null) {
                table.release();
            }
            throw e;
        }
        this.windows = table;
        this.staging = stagingBuffer;
        this.buffer =
                new WriteBuffer(
                        budget, arenaChunkSize(options.writeBufferBytes(), budget.capacity()));
        this.files = new SegmentFiles(this.io, options.directory(), staging, stats, nextFileId);
        this.loader =
                new PartitionLoader(
                        budget,
                        this.io,
                        files,
                        buffer,
                        options.ioBufferBytes(),
                        stats,
                        new PartitionLoader.Pressure() {
                            @Override
                            public boolean relieve(AarPartition keep) throws IOException {
                                return AarStore.this.relieve(keep);
                            }

                            @Override
                            public long writeBufferHeadroom() {
                                return Math.max(0, flushLimit - buffer.currentReservedBytes());
                            }
                        });
        this.scanner =
                new PartitionScanner(
                        budget,
                        this.io,
                        files,
                        buffer,
                        options.ioBufferBytes(),
                        stats,
                        () -> relieve(null));
    }

    /**
     * Chunks small enough that neither a small write buffer nor a small budget is one chunk, large
     * enough to make chunk allocation rare.
     */
    private static int arenaChunkSize(long writeBufferBytes, long budgetBytes) {
        long size = Math.min(writeBufferBytes / 8, budgetBytes / 32);
        return (int) Math.max(256, Math.min(1 << 20, size));
    }

    /** A new, empty store in {@code options.directory()}, which must hold no AAR files. */
    public static AarStore open(AarStoreOptions options, MemoryBudget budget) throws IOException {
        Checks.checkNotNull("options", options);
        Checks.checkNotNull("budget", budget);
        Path dir = options.directory();
        Files.createDirectories(dir);
        try (Stream<Path> entries = Files.list(dir)) {
            List<Path> ours =
                    entries.filter(f -> f.getFileName().toString().startsWith(SegmentFiles.PREFIX))
                            .limit(3)
                            .toList();
            if (!ours.isEmpty()) {
                throw new IOException(
                        "Directory " + dir + " already holds AAR store files, e.g. " + ours);
            }
        }
        return new AarStore(options, budget, 0);
    }

    /**
     * Reopens a sealed store from {@code manifest}, its segment files in {@code
     * options.directory()}. Every frame of every segment is checked before this returns.
     */
    public static AarStore restore(AarStoreOptions options, MemoryBudget budget, Path manifest)
            throws IOException {
        Checks.checkNotNull("options", options);
        Checks.checkNotNull("budget", budget);
        Checks.checkNotNull("manifest", manifest);
        byte[] payload = ManifestFile.read(options.fileIo(), manifest);
        AarStore store = new AarStore(options, budget, 0);
        try {
            store.restoreFrom(payload, manifest);
            return store;
        } catch (IOException | RuntimeException e) {
            store.closeAfterFailure(e);
            throw e;
        }
    }

    private void restoreFrom(byte[] payload, Path manifest) throws IOException {
        AarManifest m = AarManifest.decode(payload, manifest, options.partitions(), windows);
        manifestSequence = m.sequence;
        files.resetNextFileId(m.nextFileId);
        for (AarWindow w : windows.windows()) {
            for (AarPartition p : w.present()) {
                for (int s = 0; options.verifyOnRestore() && s < p.segmentCount(); s++) {
                    loader.verify(p.fileId(s), p.length(s));
                }
                stats.addLiveBytes(p.fileLiveBytes);
                stats.addDeadBytes(p.fileDeadBytes);
                stats.addFiles(p.segmentCount());
            }
        }
    }

    /**
     * Adds {@code value} to the list of {@code key} in {@code window}. The timestamp is not used:
     * the windows are read when the engine says, never ahead of it.
     */
    @Override
    public void append(byte[] key, byte[] window, byte[] value, long timestamp) throws IOException {
        checkOpen();
        Checks.checkNotNull("key", key);
        Checks.checkNotNull("window", window);
        Checks.checkNotNull("value", value);
        long recordLength =
                (long) AarRecordDescriptor.LOG_HEADER_LENGTH + key.length + value.length;
        if (recordLength > FrameDescriptor.MAX_PAYLOAD) {
            throw new IllegalArgumentException(
                    "key + value must be at most "
                            + (FrameDescriptor.MAX_PAYLOAD - AarRecordDescriptor.LOG_HEADER_LENGTH)
                            + " bytes, was "
                            + (key.length + (long) value.length));
        }
        // Flush before touching anything: if the flush fails, this append did not happen.
        if (buffer.usedBytes() >= flushLimit) {
            flushFull();
        }
        AarWindow w = windowFor(window);
        long hash = Hashing.hash64(key);
        AarPartition p = partition(w, key, hash);
        try {
            while (buffer.tryAppend(p, AarRecordDescriptor.APPEND, hash, key, value)
                    == OffHeapArena.NO_SPACE) {
                if (!relieve(null)) {
                    throw new MemoryBudgetExceededException(
                            "AAR write buffer",
                            AarRecordDescriptor.bufferedRecordLength(key.length, value.length),
                            budget.available(),
                            budget.capacity());
                }
            }
        } catch (IOException | RuntimeException e) {
            if (w.isEmpty()) {
                windows.remove(w);
            }
            throw e;
        }
        stats.addAppended(key.length + (long) value.length);
        stats.addLiveBytes(recordLength);
    }

    private AarWindow windowFor(byte[] window) throws IOException {
        while (true) {
            try {
                return windows.getOrCreate(window);
            } catch (MemoryBudgetExceededException e) {
                // The window table grows rarely; loaded partitions may hold the budget just then.
                if (!relieve(null)) {
                    throw e;
                }
            }
        }
    }

    /**
     * Passes the values of {@code key} in {@code window} to {@code consumer} in append order;
     * returns false if there are none. Does not remove anything.
     */
    @Override
    public boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
        checkOpen();
        Checks.checkNotNull("key", key);
        Checks.checkNotNull("consumer", consumer);
        settle();
        AarWindow w = windows.find(Checks.checkNotNull("window", window));
        if (w == null) {
            return false;
        }
        long hash = Hashing.hash64(key);
        AarPartition p = w.existing(partitionIndex(key, hash));
        if (p == null) {
            return false;
        }
        if (p.bufferedAppends > 0 && p.chainRecords > READ_FLUSH_THRESHOLD) {
            // Every key of the firing window will be read: index the chain once instead of scanning
            // it once per key. A partition with segments indexes it through its log (the loaded
            // view); one whose data is all buffered indexes it in memory, so that a window that
            // never left the write buffer is not written out just to be read back and deleted.
            // REMOVE records count too: each read and clear of a firing window leaves one, and a
            // few buffered appends would otherwise keep every later read scanning all of them.
            if (p.hasSegments() || !buffer.indexChain(p, READ_FLUSH_THRESHOLD)) {
                flushChain(p);
            }
        }
        boolean found = false;
        if (p.hasSegments()) {
            LoadedPartition view = loader.load(p);
            found =
                    view != null
                            ? view.emit(hash, key, consumer)
                            : scanner.emit(p, hash, key, consumer);
        }
        return buffer.emit(p, hash, key, consumer) | found;
    }

    /**
     * Clears the list of {@code key} in {@code window}. Values appended later form a new list.
     * Deletes the window partition's files once none of its keys is left.
     */
    @Override
    public void remove(byte[] key, byte[] window) throws IOException {
        checkOpen();
        Checks.checkNotNull("key", key);
        settle();
        AarWindow w = windows.find(Checks.checkNotNull("window", window));
        if (w == null) {
            return;
        }
        long hash = Hashing.hash64(key);
        AarPartition p = w.existing(partitionIndex(key, hash));
        if (p == null) {
            return;
        }
        if (buffer.usedBytes() >= flushLimit) {
            flush();
        }
        LoadedPartition view;
        // Log bytes of the key's live values in the segments of a partition too large to load.
        long streamedBytes;
        // Log the REMOVE first: it is the only step that can fail, and a flush it may need must
        // not run between the steps below (it would move the key's buffered values to the log).
        // Set when the partition's own loaded view is what keeps the REMOVE record from fitting.
        boolean stream = false;
        while (true) {
            view = p.hasSegments() && !stream ? loader.load(p) : null;
            boolean logRemove;
            if (view != null || !p.hasSegments()) {
                streamedBytes = 0;
                logRemove = view != null && view.hasValues(hash, key) && view.liveKeys() > 1;
            } else {
                // Live log bytes of the segments stand in for the view's live key count: when the
                // key holds all of them, it is the last live key.
                streamedBytes = scanner.liveBytes(p, hash, key);
                logRemove = streamedBytes > 0 && streamedBytes < p.fileLiveBytes;
            }
            if (!logRemove
                    || buffer.tryAppend(p, AarRecordDescriptor.REMOVE, hash, key, null)
                            != OffHeapArena.NO_SPACE) {
                break;
            }
            if (!relieve(p)) {
                if (view != null) {
                    // Nothing else left to give back: free this partition's view and handle the
                    // remove by streaming its segments, as for a partition too large to load.
                    loader.drop(p);
                    stream = true;
                    continue;
                }
                throw new MemoryBudgetExceededException(
                        "AAR remove record",
                        AarRecordDescriptor.bufferedRecordLength(key.length, 0),
                        budget.available(),
                        budget.capacity());
            }
        }
        stats.addLiveBytes(-buffer.killAppends(p, hash, key));
        if (view != null) {
            killFlushed(p, view.clear(hash, key));
            if (view.liveKeys() == 0) {
                deleteSegments(p);
            }
        } else if (p.hasSegments()) {
            killFlushed(p, streamedBytes);
            if (p.fileLiveBytes == 0) {
                deleteSegments(p);
            }
        }
        if (w.isEmpty()) {
            dropWindow(w);
        }
    }

    /** Live bytes as the partitions account them; equals {@code stats().liveBytes()}. */
    long partitionLiveBytes() {
        long sum = 0;
        for (AarWindow w : windows.windows()) {
            for (AarPartition p : w.present()) {
                sum += p.fileLiveBytes + p.inFlightAppendBytes + p.bufferedAppendBytes;
            }
        }
        return sum;
    }

    private void killFlushed(AarPartition p, long bytes) {
        p.fileLiveBytes -= bytes;
        p.fileDeadBytes += bytes;
        stats.addLiveBytes(-bytes);
        stats.addDeadBytes(bytes);
    }

    /** Deletes the whole window: its files and buffered records. */
    public void removeWindow(byte[] window) throws IOException {
        checkOpen();
        settle();
        AarWindow w = windows.find(Checks.checkNotNull("window", window));
        if (w != null) {
            dropWindow(w);
        }
    }

    private void dropWindow(AarWindow w) throws IOException {
        windows.remove(w);
        IOException failure = null;
        for (AarPartition p : w.present()) {
            stats.addLiveBytes(-p.bufferedAppendBytes);
            buffer.dropIndex(p);
            p.detachChain();
            try {
                deleteSegments(p);
            } catch (IOException e) {
                failure = chain(failure, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void deleteSegments(AarPartition p) throws IOException {
        loader.drop(p);
        stats.addLiveBytes(-p.fileLiveBytes);
        stats.addDeadBytes(-p.fileDeadBytes);
        buffer.killRemoves(p);
        files.deleteSegments(p);
    }

    /**
     * Appends every buffered chain to its window partition's segment. If a write fails, the chains
     * not yet written stay buffered and the failing segment is rolled back: a later flush retries.
     */
    @Override
    public void flush() throws IOException {
        checkOpen();
        settle();
        if (buffer.usedBytes() == 0) {
            return;
        }
        long written = 0;
        try {
            for (AarWindow w : windows.windows()) {
                for (AarPartition p : w.present()) {
                    if (p.hasChain()) {
                        written += moveChainToLog(p);
                    }
                }
            }
            buffer.reset();
            flushLimit = jitter.scale(options.writeBufferBytes());
        } finally {
            if (written > 0) {
                stats.addFlushed(written);
            }
        }
    }

    /**
     * The write buffer is full: its chains go to the flushing thread and appends go on into the
     * other arena. The previous flush in the background is settled first; if it failed (and fails
     * again), that is thrown and nothing of the current buffer has moved.
     */
    private void flushFull() throws IOException {
        settle();
        if (!options.backgroundFlush()) {
            flush();
            return;
        }
        List<FlushingChain> chains = new ArrayList<>();
        for (AarWindow w : windows.windows()) {
            for (AarPartition p : w.present()) {
                if (p.hasChain()) {
                    FlushingChain c = new FlushingChain(p);
                    buffer.dropIndex(p);
                    p.detachChain();
                    if (c.hasRecords()) {
                        p.chainsInFlight++;
                        p.inFlightAppendBytes += c.appendBytes;
                        chains.add(c);
                    }
                }
            }
        }
        flushLimit = jitter.scale(options.writeBufferBytes());
        if (chains.isEmpty()) {
            buffer.reset();
            return;
        }
        buffer.detachGeneration();
        flushing = chains;
        flushTask = FLUSHERS.submit(() -> writeFlushing(chains));
    }

    /**
     * Writes the chains not written yet; on the flushing thread, or in a settle after a failure.
     */
    private Void writeFlushing(List<FlushingChain> chains) throws IOException {
        for (FlushingChain c : chains) {
            if (!c.done) {
                c.written = files.appendFlushingChain(c, buffer, frameTarget);
                c.done = true;
            }
        }
        return null;
    }

    /**
     * Waits for the flush in the background, if one runs, and moves what it wrote from "buffered"
     * to "in the segments". If it failed, the chains it did not write stay owed, still readable in
     * their arena, and the failure is thrown; the next settle writes them first, on the calling
     * thread, so that nothing reaches a segment ahead of them.
     */
    private void settle() throws IOException {
        if (flushing.isEmpty()) {
            return;
        }
        Throwable failure;
        if (flushTask != null) {
            failure = awaitFlushTask();
        } else {
            try {
                writeFlushing(flushing);
                failure = null;
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }
        long written = 0;
        List<FlushingChain> owed = new ArrayList<>();
        for (FlushingChain c : flushing) {
            if (!c.done) {
                owed.add(c);
                continue;
            }
            AarPartition p = c.partition;
            p.chainsInFlight--;
            p.inFlightAppendBytes -= c.appendBytes;
            countWritten(p, c.appendBytes, c.removeBytes);
            written += c.written;
        }
        if (written > 0) {
            stats.addFlushed(written);
        }
        flushing = owed;
        if (owed.isEmpty()) {
            buffer.releaseGeneration();
        }
        if (failure instanceof IOException) {
            throw new IOException(
                    "Could not write the AAR write buffer to the segments in "
                            + options.directory()
                            + "; its "
                            + owed.size()
                            + " unwritten chains stay buffered and are written before anything else",
                    failure);
        }
        if (failure instanceof RuntimeException) {
            throw (RuntimeException) failure;
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
    }

    /** Waits for {@link #flushTask} to end; returns what it threw, or null. */
    private Throwable awaitFlushTask() {
        Future<?> task = flushTask;
        flushTask = null;
        return BackgroundWork.await(task);
    }

    /** Flushes one partition's chain (its records stay in the arena as garbage until a reset). */
    private void flushChain(AarPartition p) throws IOException {
        long written = moveChainToLog(p);
        if (written > 0) {
            stats.addFlushed(written);
        }
    }

    private long moveChainToLog(AarPartition p) throws IOException {
        long written = files.appendChain(p, buffer, frameTarget);
        countWritten(p, p.bufferedAppendBytes, p.bufferedRemoveBytes);
        buffer.dropIndex(p);
        p.detachChain();
        return written;
    }

    /**
     * A chain of the partition reached its segment: its appends are live there, its removes dead.
     */
    private void countWritten(AarPartition p, long appendBytes, long removeBytes) {
        p.fileLiveBytes += appendBytes;
        p.fileDeadBytes += removeBytes;
        stats.addDeadBytes(removeBytes);
    }

    /**
     * Frees memory for an allocation that the budget refused: settle the flush in the background,
     * give back the spare write-buffer arena, flush, then evict loaded data.
     */
    private boolean relieve(AarPartition keep) throws IOException {
        if (!flushing.isEmpty()) {
            settle();
            return true;
        }
        if (buffer.releaseSpare()) {
            return true;
        }
        if (buffer.usedBytes() > 0) {
            flush();
            return true;
        }
        return loader.evictOne(keep);
    }

    /** Visits every live value, flushed and buffered (for snapshots). */
    @Override
    public void forEach(EntryVisitor visitor) throws IOException {
        checkOpen();
        Checks.checkNotNull("visitor", visitor);
        settle();
        for (AarWindow w : windows.windows()) {
            for (AarPartition p : w.present()) {
                if (p.hasSegments()) {
                    LoadedPartition view = loader.load(p);
                    if (view != null) {
                        view.forEach(w.bytes, visitor);
                    } else {
                        scanner.forEach(p, w.bytes, visitor);
                    }
                }
                buffer.forEachLive(p, w.bytes, visitor);
            }
        }
    }

    /**
     * Flushes, syncs and closes every open segment (later appends go to new ones, so the listed
     * files stay immutable) and writes a manifest naming them. The store stays usable.
     *
     * <p>Fsyncs the files and the manifest only when {@code durable}; see {@link SealedStore}.
     */
    @Override
    public SealedStore seal(boolean durable) throws IOException {
        checkOpen();
        flush();
        List<AarWindow> live = windows.windows();
        List<SealedStore.SealedFile> sealed = new ArrayList<>();
        for (AarWindow w : live) {
            for (AarPartition p : w.present()) {
                files.seal(p, durable);
                for (int s = 0; s < p.segmentCount(); s++) {
                    sealed.add(new SealedStore.SealedFile(files.path(p.fileId(s)), p.length(s)));
                }
            }
        }
        long sequence = manifestSequence + 1;
        byte[] payload =
                AarManifest.encode(sequence, files.nextFileId(), options.partitions(), live);
        Path manifest =
                options.directory().resolve(SegmentFiles.PREFIX + sequence + MANIFEST_SUFFIX);
        ManifestFile.write(io, manifest, sequence, payload, durable);
        manifestSequence = sequence;
        // The previous manifest was handed out by the previous seal; its caller has taken its copy.
        if (ownManifest != null && !ownManifest.equals(manifest)) {
            io.delete(ownManifest);
        }
        ownManifest = manifest;
        return new SealedStore(manifest, sealed);
    }

    @Override
    public StoreStats stats() {
        return stats;
    }

    /** Bytes this store holds from its budget. */
    @Override
    public long memoryUsed() {
        return buffer.reservedBytes()
                + buffer.chainIndexBytes()
                + loader.memoryBytes()
                + staging.capacity()
                + windows.memoryBytes();
    }

    /** Windows with any live or not yet deleted data. */
    public int windowCount() {
        return windows.size();
    }

    /** Budget bytes the spare write-buffer arena keeps for the next generation (for tests). */
    long spareWriteBufferBytes() {
        return buffer.spareBytes();
    }

    /** The live windows, for tests of their bookkeeping. */
    List<AarWindow> windowsForTest() {
        return windows.windows();
    }

    /** Window partitions currently loaded in memory (gradual state loading). */
    int loadedPartitions() {
        return loader.loadedCount();
    }

    /**
     * Closes every file and returns every byte to the budget. Files stay on disk; what was not
     * sealed is not part of any manifest (call {@link #seal()} first to keep it).
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (flushTask != null) {
            // What it did not write dies with the store, as anything else not sealed does.
            awaitFlushTask();
        }
        flushing = new ArrayList<>();
        IOException failure = null;
        for (AarWindow w : windows.windows()) {
            for (AarPartition p : w.present()) {
                buffer.dropIndex(p);
                try {
                    files.closeWriter(p);
                } catch (IOException e) {
                    failure = chain(failure, e);
                }
            }
        }
        loader.close();
        buffer.close();
        staging.close();
        windows.release();
        if (failure != null) {
            throw failure;
        }
    }

    private void closeAfterFailure(Exception failure) {
        try {
            close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    private AarPartition partition(AarWindow w, byte[] key, long keyHash) {
        return w.partition(partitionIndex(key, keyHash));
    }

    private int partitionIndex(byte[] key, long keyHash) {
        int n = options.partitions();
        int i = options.partitioner().partition(key, keyHash, n);
        if (i < 0 || i >= n) {
            throw new IllegalStateException(
                    "partitioner returned " + i + " for " + n + " partitions");
        }
        return i;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("AAR store in " + options.directory() + " is closed");
        }
    }
}
