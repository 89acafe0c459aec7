package io.flowkv.core.aur;

import io.flowkv.core.BackgroundWork;
import io.flowkv.core.CorruptLogException;
import io.flowkv.core.EntryVisitor;
import io.flowkv.core.Jitter;
import io.flowkv.core.ListStore;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.TriggerTimes;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.index.CacheShare;
import io.flowkv.core.index.PagedRecords;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.ManifestFile;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapBuffer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import static io.flowkv.core.aur.WindowStatTable.EXPLICIT_ETT;
import static io.flowkv.core.aur.WindowStatTable.NO_ID;
import static io.flowkv.core.aur.WindowStatTable.SERVED;
import static io.flowkv.core.log.IoFailures.chain;
import static io.flowkv.core.log.IoFailures.closeQuietly;
import static io.flowkv.core.log.IoFailures.deleteQuietly;

/**
 * The append and unaligned read (AUR) store: list state of session (merging), count and global
 * windows, whose windows are read one (key, window) at a time at moments that differ per key.
 *
 * <p><b>Writes.</b> {@link #append} puts the value into the write buffer (off-heap, one chain per
 * (key, state window)) and updates the window's estimated trigger time (ETT) in the stat table. A
 * flush writes one data frame per window to the end of the global data log and one index entry per
 * window to the end of the index log. Nothing is ever updated in place.
 *
 * <p><b>Reads.</b> {@link #get} serves a window from the prefetch buffer if it is there (a hit). On
 * a miss it scans the index log once and loads, besides the requested window, the {@code
 * readBatchRatio x live windows} windows whose ETT is nearest, betting that the engine will ask for
 * them next (predictive batch read, FlowKV §4.2). Values still in the write buffer follow the
 * flushed ones. The prefetch buffer only ever holds flushed data: a flush of new data for a
 * prefetched window appends that data to the copy (or evicts the copy if there is no room for it),
 * and a change of its ETT keeps it (oldest copies are evicted first when room is needed), so a get
 * never misses a value or serves a stale one.
 *
 * <p><b>Deletes and compaction.</b> {@link #remove} drops the window from the stat table, which
 * turns its index entries dead. When total over live data bytes exceeds the (per-instance jittered)
 * maximum space amplification, the same index scan that serves a miss compacts: it moves the live
 * frames of the data logs with the smallest share of live bytes to a new data log with zero-copy
 * {@code FileChannel.transferTo}, deletes those logs and rewrites the index log. The other data
 * logs stay as they are, so a log whose windows have all fired costs nothing to reclaim. Prefetched
 * values are copies, so compaction leaves them valid.
 *
 * <p><b>Trade-offs.</b> The prediction's "now" is the read clock: the largest ETT among windows
 * read so far, since the engine fires windows in trigger-time order; windows already read since
 * their last append are not bet on again. Prefetched values are heap arrays (charged to the budget)
 * so that a consumer reads them in place; the write buffer is off-heap. A prefetched window that
 * gets newly flushed data is extended in memory rather than evicted: a session still taking
 * elements shortly before its gap expires is common, and evicting it meant reading it again whole
 * (read amplification near 3 on long session traces). The stat table holds every live window's key
 * and window bytes, which the index scan needs to tell live entries from dead ones without an
 * in-memory position index.
 *
 * <p><b>Flushes in the background.</b> With {@link AurStoreOptions#backgroundFlush} (the default) a
 * flush lays out its frames, writes the index entries and moves the windows' chains, prefetched
 * copies and byte counts on the calling thread, exactly as if the frames were written, then hands
 * the write buffer to a thread of {@code flowkv-aur-flush-N} ({@link BackgroundWork}) to write the
 * data frames while appends go on into a second write buffer. Anything that reads the data logs or
 * touches the data log writer (a read that misses, a read ahead, compaction, iteration, the next
 * flush, a seal, close) waits for that write first. A write that fails is retried there, on the
 * calling thread, from the same offset with the values the buffer still holds; if the retry fails
 * too, that operation fails and the values stay for the next one, so nothing appended is lost.
 *
 * <p>Single writer thread, no locks. Every byte held in memory is charged to the {@link
 * MemoryBudget}; a refusal flushes the write buffer and drops prefetched windows.
 */
public final class AurStore implements ListStore, TriggerTimes {
    private static final Logger LOG = LoggerFactory.getLogger(AurStore.class);
    private static final ExecutorService FLUSHERS = BackgroundWork.pool("flowkv-aur-flush-");

    static final String DATA_PREFIX = "aur-data-";
    static final String INDEX_PREFIX = "aur-index-";
    static final String MANIFEST_PREFIX = "aur-manifest-";
    static final String LOG_SUFFIX = ".log";

    static final int INDEX_FRAME_TARGET = 32 * 1024;
    private static final int DATA_STAGING = 64 * 1024;
    private static final int INDEX_STAGING = 16 * 1024;
    private static final long CHAIN_COPY_SLACK = 64 * 1024;
    private static final int MAX_HITS_BETWEEN_READ_AHEADS = 1 << 16;

    private final AurStoreOptions options;
    private final MemoryBudget budget;
    private final FileIo io;
    private final Path directory;
    private final TriggerTimePredictor predictor;
    private final StoreStats stats = new StoreStats();
    private final WindowStatTable table;

    /** Where appends go. */
    private WriteBuffer writeBuffer;

    /**
     * The write buffer whose frames a flush is writing (or failed to write) to the data log, or
     * null; its windows are already on their chains.
     */
    private WriteBuffer flushing;

    /** The write (on {@link #FLUSHERS}) of {@link #flushing}'s frames, or null if it ended. */
    private Future<?> flushTask;

    /** What the last write of {@link #flushing}'s frames threw, or null. */
    private Throwable flushFailure;

    /** Data log offset of {@link #flushing}'s first frame. */
    private long flushingFrom;

    /**
     * The other write buffer, empty, keeping its chunks for the next flush; null while flushing.
     */
    private WriteBuffer spare;

    private final double compactionThreshold;
    private final IndexEntryDescriptor entry = new IndexEntryDescriptor();

    /** Each window's flushed frames, for reads that have nothing to prefetch beside them. */
    private FrameChains chains;

    /** Chain records reachable from a window; the rest belong to removed windows. */
    private long liveChainRecords;

    private final DataLogs dataLogs;
    private final IndexLogs indexLogs;
    private LogSegment activeData;
    private LogWriter dataWriter;

    /** Staging buffers live as long as the store: a flush must never wait for budget. */
    private final IoBuffer dataStaging;

    private LogSegment activeIndex;
    private LogWriter indexWriter;
    private final IoBuffer indexStaging;

    /** A write failed: the writers must be rolled back to the segments' good sizes before use. */
    private boolean writerFault;

    private int nextFileId = 1;
    private int chainFiles;
    private long flushSeq = 1;
    private Path lastManifest;

    /** The part of the stat cache that the table and the chains share. */
    private final CacheShare statShare;

    private final PrefetchBuffer prefetch;

    /** The frames the read now running collected. */
    private final FrameBatch batch;

    private final BatchLoader loader;

    /** Reads bets on another thread, ahead of the misses that would read them. */
    private final ReadAhead ahead;

    /** Hits before the next read ahead is planned (the last batch half served). */
    private int hitsUntilAhead = Integer.MAX_VALUE;

    /** Half the bets of the last batch: the hits between reads ahead. */
    private int aheadEvery = 1;

    /** The window a read is for; the predicted ones riding along are the prefetch's bets. */
    private int requestedId = NO_ID;

    /** A flushed window's key and window bytes, copied out of the stat table. */
    private byte[] keyScratch = new byte[64];

    private long readClock = Long.MIN_VALUE;
    private long batchStamp;
    private long liveBytes;
    private long deadBytes;

    /**
     * Bytes flushed since the first removal that left the store with dead bytes (after it opened or
     * compacted): whether the store still grows while its windows die.
     */
    private long flushedSinceDeath;

    private boolean closed;

    private AurStore(AurStoreOptions options, MemoryBudget budget) {
        this.options = options;
        this.budget = budget;
        this.io = options.fileIo();
        this.directory = options.directory();
        this.dataLogs = new DataLogs(directory);
        this.indexLogs = new IndexLogs(io);
        this.predictor = options.predictor();
        Jitter jitter = options.newJitter();
        // Draw in this order: the limits of a given seed stay the same from build to build.
        long writeBufferLimit = jitter.scale(options.writeBufferBytes());
        this.compactionThreshold = jitter.scaleAmplification(options.maxSpaceAmplification());
        // Half the stat cache is the table's (3/8) and the chains' (1/8) own; the other half goes
        // to whichever of them outgrows its own first, so that a table just over its three
        // quarters does not spill while the chains leave theirs unused.
        this.statShare = new CacheShare(options.statCacheBytes() / 2);
        this.table =
                new WindowStatTable(
                        budget, io, directory, options.statCacheBytes() / 8 * 3, statShare);
        this.prefetch =
                new PrefetchBuffer(
                        table, budget, options.prefetchBufferLimit(), options.readBatchRatio());
        this.batch = new FrameBatch(budget, prefetch);
        this.loader = new BatchLoader(directory, io, table, batch, prefetch, dataLogs, stats);
        this.ahead = new ReadAhead(loader);
        prefetch.guardedBy(ahead);
        this.writeBuffer = new WriteBuffer(table, budget, writeBufferLimit);
        this.spare = new WriteBuffer(table, budget, writeBufferLimit);
        IoBuffer data = null;
        try {
            this.chains = newChains();
            data = IoBuffer.allocate(budget, DATA_STAGING, "AUR data log staging");
            this.indexStaging = IoBuffer.allocate(budget, INDEX_STAGING, "AUR index log staging");
        } catch (RuntimeException e) {
            if (data != null) {
                data.close();
            }
            if (chains != null) {
                chains.close();
            }
            table.release();
            throw e;
        }
        this.dataStaging = data;
    }

    /** A new, empty store in {@code options.directory()} (created if missing). */
    public static AurStore open(AurStoreOptions options, MemoryBudget budget) throws IOException {
        Path dir = options.directory();
        Files.createDirectories(dir);
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "aur-*")) {
            for (Path file : files) {
                throw new IOException(
                        "Directory "
                                + dir
                                + " already holds AUR store file "
                                + file.getFileName()
                                + ": open() needs a directory without them, restore() reopens a"
                                + " sealed store");
            }
        }
        return new AurStore(options, budget);
    }

    /** Reopens the store sealed into {@code manifest}; its files are in {@code directory()}. */
    public static AurStore restore(AurStoreOptions options, MemoryBudget budget, Path manifest)
            throws IOException {
        byte[] payload = ManifestFile.read(options.fileIo(), manifest);
        AurStore store = new AurStore(options, budget);
        try {
            store.load(manifest, payload);
            return store;
        } catch (IOException | RuntimeException e) {
            try {
                store.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    // ---------------------------------------------------------------- writes

    /**
     * Appends {@code value} to the (key, state window). For session windows the state window is the
     * first window of the session; it stays the same while the session grows and merges.
     */
    @Override
    public void append(byte[] key, byte[] window, byte[] value, long timestamp) throws IOException {
        checkOpen();
        int length = value.length;
        reserveDirtyWindow();
        int id = table.find(key, window);
        boolean inserted = id == NO_ID;
        if (inserted) {
            id = insertMakingRoom(key, window);
        }
        bufferValue(id, value);
        table.setFlags(id, table.flags(id) & ~SERVED);
        boolean later = timestamp > table.maxTimestamp(id);
        if (later) {
            table.setMaxTimestamp(id, timestamp);
        }
        // A new window is estimated even without a timestamp: a predictor may know its trigger
        // time from the window alone.
        if ((later || inserted) && (table.flags(id) & EXPLICIT_ETT) == 0) {
            long ett = predictor.estimate(window, table.maxTimestamp(id));
            if (ett != table.ett(id)) {
                updateEtt(id, ett);
            }
        }
        stats.addAppended(length);
    }

    /**
     * Sets the window's trigger time as the engine knows it (a registered timer, a merged window's
     * end). It wins over estimates from timestamps until set again. {@link
     * TriggerTimePredictor#UNKNOWN} means "no idea". A window not yet in the store gets a stat
     * entry (timers may be registered before the first element); {@link #remove} drops it.
     */
    @Override
    public void setTriggerTime(byte[] key, byte[] window, long ett) {
        checkOpen();
        int id = table.find(key, window);
        if (id == NO_ID) {
            id = table.insert(key, window, flushSeq);
            stats.setEntries(table.size());
        }
        table.setFlags(id, table.flags(id) | EXPLICIT_ETT);
        updateEtt(id, ett);
    }

    /**
     * A timer at {@code timerTime} was registered for the window: the earliest pending one is its
     * trigger time. Windows the store does not hold are ignored (a timer may outlive the data it
     * would read). An explicit ETT the reads have already passed is replaced, a later one lowered.
     */
    @Override
    public void offerTriggerTime(byte[] key, byte[] window, long timerTime) {
        checkOpen();
        int id = table.find(key, window);
        if (id == NO_ID || timerTime == TriggerTimePredictor.UNKNOWN) {
            return;
        }
        long ett = table.ett(id);
        boolean explicit = (table.flags(id) & EXPLICIT_ETT) != 0;
        if (!explicit
                || ett == TriggerTimePredictor.UNKNOWN
                || ett <= readClock
                || timerTime < ett) {
            table.setFlags(id, table.flags(id) | EXPLICIT_ETT);
            updateEtt(id, timerTime);
        }
    }

    /** The window's timer at {@code timerTime} was deleted: if it was the ETT, the ETT is gone. */
    @Override
    public void withdrawTriggerTime(byte[] key, byte[] window, long timerTime) {
        checkOpen();
        int id = table.find(key, window);
        if (id != NO_ID && (table.flags(id) & EXPLICIT_ETT) != 0 && table.ett(id) == timerTime) {
            table.setFlags(id, table.flags(id) & ~EXPLICIT_ETT);
            updateEtt(
                    id,
                    table.maxTimestamp(id) == Long.MIN_VALUE
                            ? TriggerTimePredictor.UNKNOWN
                            : predictor.estimate(window, table.maxTimestamp(id)));
        }
    }

    /** The window's current ETT, or {@link TriggerTimePredictor#UNKNOWN}. */
    @Override
    public long triggerTime(byte[] key, byte[] window) {
        checkOpen();
        int id = table.find(key, window);
        return id == NO_ID ? TriggerTimePredictor.UNKNOWN : table.ett(id);
    }

    /** Drops every value of the window; its flushed bytes become dead (reclaimed by compaction). */
    @Override
    public void remove(byte[] key, byte[] window) {
        checkOpen();
        int id = table.find(key, window);
        if (id == NO_ID) {
            return;
        }
        prefetch.evict(id);
        writeBuffer.drop(id);
        liveChainRecords -= chainLength(id);
        long disk = table.diskBytes(id);
        if (deadBytes == 0) {
            flushedSinceDeath = 0;
        }
        liveBytes -= disk;
        deadBytes += disk;
        table.remove(id, key, window);
        publishSpace();
    }

    /**
     * Adds a window to the stat table; when the budget refuses its slot, the write buffer is
     * flushed and the prefetched copies given back (both return their memory) before it is asked
     * again.
     */
    private int insertMakingRoom(byte[] key, byte[] window) throws IOException {
        int id;
        try {
            id = table.insert(key, window, flushSeq);
        } catch (MemoryBudgetExceededException e) {
            flush();
            prefetch.evictAll();
            id = table.insert(key, window, flushSeq);
        }
        stats.setEntries(table.size());
        return id;
    }

    private void updateEtt(int id, long ett) {
        // A prefetched copy stays: its values are still right (flushes extend it), only the bet on
        // when it fires moved, and a session extended shortly before its gap ran out usually fires
        // soon after all. When room is needed, the oldest copies go first.
        table.setEtt(id, ett);
    }

    /**
     * Buffers a value of window {@code id}: over the write buffer's limit it flushes first; when
     * the budget refuses room, it flushes, then gives up the prefetched copies, before it fails.
     */
    private void bufferValue(int id, byte[] value) throws IOException {
        if (writeBuffer.full(value.length)) {
            flushForAppend();
        }
        if (writeBuffer.tryAppend(id, value)) {
            return;
        }
        if (releaseSpare() && writeBuffer.tryAppend(id, value)) {
            return;
        }
        flushForAppend();
        if (writeBuffer.tryAppend(id, value)) {
            return;
        }
        // The buffer in flight holds the memory: wait for its write and take its chunks back.
        settleFlush();
        if (releaseSpare() && writeBuffer.tryAppend(id, value)) {
            return;
        }
        prefetch.evictAll();
        writeBuffer.append(id, value);
    }

    /**
     * Flushes before an append: the window the append is for needs room in the dirty list of the
     * write buffer that takes over.
     */
    private void flushForAppend() throws IOException {
        flush();
        reserveDirtyWindow();
    }

    /**
     * Gives back the chunks the spare write buffer kept, unless a flush still writes from them;
     * returns whether it held any beyond its first.
     */
    private boolean releaseSpare() {
        if (spare == null) {
            return false;
        }
        long before = spare.memoryBytes();
        spare.releaseSpares();
        return spare.memoryBytes() < before;
    }

    /**
     * Makes room in the write buffer's window list for one more window before an append writes
     * anything. A full budget gives up prefetched bets first, then flushes, which empties the list.
     */
    private void reserveDirtyWindow() throws IOException {
        if (writeBuffer.tryReserveWindow()) {
            return;
        }
        prefetch.evictAll();
        if (writeBuffer.tryReserveWindow()) {
            return;
        }
        if (writeBuffer.windows() > 0) {
            flush();
            if (writeBuffer.tryReserveWindow()) {
                return;
            }
        }
        settleFlush();
        releaseSpare();
        writeBuffer.reserveWindow();
    }

    /**
     * Writes the write buffer to the logs: per window one data frame of its values and one index
     * entry. If an index write fails, the index log is rolled back and the write buffer is kept
     * whole, so a later flush writes it again. The data frames are then written on a flush thread
     * ({@link AurStoreOptions#backgroundFlush}) or here; see the class comment for a write that
     * fails.
     */
    @Override
    public void flush() throws IOException {
        checkOpen();
        settleFlush();
        if (writeBuffer.windows() == 0) {
            return;
        }
        prepareWriters();
        long from = dataWriter.size();
        long at = from;
        try {
            long indexFrame = indexWriter.beginFrame();
            int windows = writeBuffer.windows();
            for (int i = 0; i < windows; i++) {
                int id = writeBuffer.window(i);
                long payload = writeBuffer.payloadBytes(id);
                if (payload > FrameDescriptor.MAX_PAYLOAD) {
                    throw new IOException(
                            "a data frame of "
                                    + payload
                                    + " bytes (one window's values since the last flush) exceeds"
                                    + " the maximum of "
                                    + FrameDescriptor.MAX_PAYLOAD
                                    + " in "
                                    + activeData.path);
                }
                long frameLength = FrameDescriptor.HEADER_LENGTH + payload;
                long position = Positions.pack(activeData.id, at);
                int both = table.keyAndWindowLength(id);
                if (keyScratch.length < both) {
                    keyScratch = new byte[Math.max(both, 2 * keyScratch.length)];
                }
                table.readKeyAndWindow(id, keyScratch);
                int keyLength = table.keyLength(id);
                IndexEntryDescriptor.write(
                        indexWriter,
                        flushSeq,
                        position,
                        (int) frameLength,
                        table.valueCount(id),
                        table.maxTimestamp(id),
                        keyScratch,
                        0,
                        keyLength,
                        keyScratch,
                        keyLength,
                        both - keyLength);
                if (indexWriter.size() - indexFrame >= INDEX_FRAME_TARGET && i + 1 < windows) {
                    indexWriter.endFrame();
                    indexFrame = indexWriter.beginFrame();
                }
                writeBuffer.setFlushed(i, position, frameLength);
                at += frameLength;
            }
            indexWriter.endFrame();
            indexWriter.flush();
        } catch (IOException | RuntimeException e) {
            rollBackWriters(e);
            throw e;
        }
        for (int i = 0, windows = writeBuffer.windows(); i < windows; i++) {
            int id = writeBuffer.window(i);
            long frameLength = writeBuffer.flushedLength(i);
            table.setDiskBytes(id, table.diskBytes(id) + frameLength);
            extendChain(id, writeBuffer.flushedPosition(i), (int) frameLength);
            if (table.prefetched(id) != null) {
                // The prefetched copy lacks the frame just written.
                extendPrefetched(id);
            }
        }
        long flushed = at - from;
        activeData.size = at;
        activeIndex.size = indexWriter.size();
        writeBuffer.detach();
        flushing = writeBuffer;
        flushingFrom = from;
        flushSeq++;
        liveBytes += flushed;
        flushedSinceDeath += flushed;
        stats.addFlushed(flushed);
        writeBuffer = spare;
        spare = null;
        publishSpace();
        if (options.backgroundFlush()) {
            WriteBuffer frames = flushing;
            LogWriter out = dataWriter;
            flushTask = FLUSHERS.submit(() -> writeFrames(frames, out));
        } else {
            settleFlush();
        }
        if (shouldCompactWithoutRead()) {
            // Compaction normally rides on a miss's index scan; a store whose windows are
            // removed without being read must not grow without bound either.
            compact(Reclaim.DEADEST);
        } else {
            copyChainsIfMostlyDead();
        }
    }

    private static Void writeFrames(WriteBuffer frames, LogWriter out) throws IOException {
        frames.writeFrames(out);
        out.flush();
        return null;
    }

    /**
     * Waits for the write of the last flush's data frames, if one is in flight; if it failed,
     * writes them again here from the same offset. On success the flushed buffer is emptied and
     * kept for the next flush; if the write fails again, this throws and the buffer stays for the
     * next call.
     */
    private void settleFlush() throws IOException {
        if (flushing == null) {
            return;
        }
        Throwable failure = flushFailure;
        if (flushTask != null) {
            failure = BackgroundWork.await(flushTask);
            flushTask = null;
        } else if (failure == null) {
            // Written nowhere yet: the flush writes on this thread (no background flush).
            failure = tryWriteFrames(false);
        }
        if (failure != null) {
            LOG.warn(
                    "AUR store in {}: writing {} bytes of data frames to {} at offset {} failed; writing"
                            + " them again",
                    directory,
                    activeData.size - flushingFrom,
                    activeData.path,
                    flushingFrom,
                    failure);
            Throwable again = tryWriteFrames(true);
            if (again != null) {
                if (failure != flushFailure && again != failure) {
                    // The first failure of this write; later retries each report only their own.
                    again.addSuppressed(failure);
                }
                flushFailure = again;
                throw new IOException(
                        "AUR store in "
                                + directory
                                + ": the data frames of the last flush could not be written to "
                                + activeData.path
                                + " at offset "
                                + flushingFrom
                                + "; their values stay in memory and the next operation writes"
                                + " them again",
                        again);
            }
        }
        flushFailure = null;
        spare = flushing;
        flushing = null;
        spare.recycle();
    }

    /**
     * Writes the flushing buffer's frames, after rolling the data log back to where they begin if
     * {@code again}; returns what failed, or null.
     */
    private Throwable tryWriteFrames(boolean again) {
        try {
            if (again) {
                dataWriter.truncate(flushingFrom);
            }
            writeFrames(flushing, dataWriter);
            return null;
        } catch (IOException | RuntimeException e) {
            return e;
        }
    }

    private void prepareWriters() throws IOException {
        if (writerFault) {
            truncateWriters();
        }
        if (dataWriter != null && dataWriter.size() >= options.segmentSize()) {
            closeDataWriter();
        }
        if (dataWriter == null) {
            int id = newFileId(DATA_PREFIX);
            dataWriter = createLog(DATA_PREFIX, id, FileType.AUR_DATA_LOG, dataStaging);
            activeData =
                    new LogSegment(id, dataWriter.file(), FileType.AUR_DATA_LOG, dataWriter.size());
            dataLogs.add(activeData);
        }
        if (indexWriter == null) {
            int id = newFileId(INDEX_PREFIX);
            indexWriter = createLog(INDEX_PREFIX, id, FileType.AUR_INDEX_LOG, indexStaging);
            activeIndex =
                    new LogSegment(
                            id, indexWriter.file(), FileType.AUR_INDEX_LOG, indexWriter.size());
            indexLogs.add(activeIndex);
        }
        publishSpace();
    }

    /** Creates log file {@code id}; if that fails, what was made of the file is deleted. */
    private LogWriter createLog(String prefix, int id, FileType type, IoBuffer staging)
            throws IOException {
        Path path = directory.resolve(fileName(prefix, id));
        try {
            return LogWriter.create(io, path, type, id, staging);
        } catch (IOException | RuntimeException e) {
            deleteQuietly(io, path, e);
            throw e;
        }
    }

    private void rollBackWriters(Throwable cause) {
        writerFault = true;
        try {
            truncateWriters();
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    private void truncateWriters() throws IOException {
        if (dataWriter != null) {
            dataWriter.truncate(activeData.size);
        }
        if (indexWriter != null) {
            indexWriter.truncate(activeIndex.size);
        }
        writerFault = false;
    }

    private void closeDataWriter() throws IOException {
        LogWriter writer = dataWriter;
        dataWriter = null;
        writer.close();
    }

    private void closeIndexWriter() throws IOException {
        LogWriter writer = indexWriter;
        indexWriter = null;
        writer.close();
    }

    private int newFileId(String prefix) {
        int id = nextFileId++;
        while (Files.exists(directory.resolve(fileName(prefix, id)))) {
            id = nextFileId++;
        }
        if (id > Positions.MAX_SEGMENT) {
            throw new IllegalStateException("AUR store in " + directory + " ran out of file ids");
        }
        return id;
    }

    static String fileName(String prefix, int id) {
        return String.format("%s%08d%s", prefix, id, LOG_SUFFIX);
    }

    // ---------------------------------------------------------------- reads

    /**
     * Passes the window's values to {@code consumer}: flushed ones first, then those still in the
     * write buffer, each group in append order. Returns false if the window has no value.
     */
    @Override
    public boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
        checkOpen();
        int id = table.find(key, window);
        if (id == NO_ID) {
            return false;
        }
        long ett = table.ett(id);
        if (ett != TriggerTimePredictor.UNKNOWN && ett > readClock) {
            readClock = ett;
        }
        boolean any = false;
        boolean hit = false;
        if (table.diskBytes(id) > 0) {
            if (ahead.holds(id)) {
                // Its copy is being read on the other thread: wait for it.
                ahead.settle();
            }
            if (table.prefetched(id) != null) {
                stats.addPrefetchHit();
                hit = true;
                any = loader.serveCopy(id, consumer);
            } else {
                stats.addPrefetchMiss();
                any = batchRead(id, consumer);
            }
        }
        any |= writeBuffer.forEachValue(id, consumer);
        table.setFlags(id, table.flags(id) | SERVED);
        if (hit && --hitsUntilAhead <= 0) {
            readAhead();
        }
        return any;
    }

    /**
     * A miss. With other windows to bet on, one index scan loads the requested window and the
     * predicted ones; with none, the window's frame chain is read, and no scan runs.
     */
    private boolean batchRead(int requested, ValueConsumer consumer) throws IOException {
        ahead.settle();
        settleFlush();
        writeBuffer.releaseSpares();
        releaseSpare();
        long stamp = ++batchStamp;
        requestedId = requested;
        boolean cacheRequested = prefetch.plan(requested, stamp, readClock);
        collectBatch(requested, stamp);
        boolean any = loader.load(requested, cacheRequested, stamp, consumer);
        aheadAfter(prefetch.betCount());
        return any;
    }

    /**
     * Collects the frames of {@code requested} ({@link WindowStatTable#NO_ID} for none) and of the
     * bets stamped {@code stamp}: along their frame chains, or by an index scan that compacts if
     * the store is due.
     */
    private void collectBatch(int requested, long stamp) throws IOException {
        batch.clear();
        boolean compact = shouldCompact();
        if (!compact && chainsCoverBatch(requested)) {
            // The chains say where the windows' frames are: O(their frames), whatever the store
            // holds. A scan of the index log would look up every live entry's window instead.
            stats.addChainRead();
            if (requested != NO_ID) {
                collectChain(requested, true);
            }
            for (int i = 0; i < prefetch.betCount(); i++) {
                if (!collectChain(prefetch.betId(i), false)) {
                    // The budget is full: the bets go, the window asked for stays.
                    dropBets();
                    break;
                }
            }
            batch.sortInFileOrder(dataLogs);
            return;
        }
        scanIndex(compact ? Reclaim.DEADEST : Reclaim.NOTHING, stamp);
    }

    /**
     * Once half the windows of the last batch are served, bets on the next ones and reads them on
     * another thread ({@link ReadAhead}), so that they are in memory when they fire instead of
     * missing. Rides on a hit; a store due for compaction compacts in the same index scan, as a
     * miss would.
     */
    private void readAhead() throws IOException {
        hitsUntilAhead = aheadEvery;
        if (!options.readAhead() || ahead.running()) {
            return;
        }
        // The bets' frames may be among those the last flush is still writing.
        settleFlush();
        long stamp = ++batchStamp;
        requestedId = NO_ID;
        writeBuffer.releaseSpares();
        releaseSpare();
        if (prefetch.planAhead(stamp, readClock) == 0) {
            // Nothing to bet on, or the buffer is still full of bets: look again later, and
            // less often each time it finds none.
            aheadEvery = Math.min(2 * aheadEvery, MAX_HITS_BETWEEN_READ_AHEADS);
            hitsUntilAhead = aheadEvery;
            return;
        }
        try {
            collectBatch(NO_ID, stamp);
            aheadAfter(ahead.start(stamp));
        } catch (IOException | RuntimeException e) {
            prefetch.dropBets();
            batch.clear();
            throw e;
        }
    }

    /** The last batch bet on {@code bets} windows: the next read ahead after half are served. */
    private void aheadAfter(int bets) {
        if (bets > 0) {
            aheadEvery = Math.max(1, bets / 2);
        }
        hitsUntilAhead = aheadEvery;
    }

    /** Whether the window asked for (if any) and every window bet on have an intact frame chain. */
    private boolean chainsCoverBatch(int requested) {
        if (requested != NO_ID && table.frameHead(requested) < 0) {
            return false;
        }
        for (int i = 0; i < prefetch.betCount(); i++) {
            if (table.frameHead(prefetch.betId(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Appends the window's buffered values, just flushed, to its prefetched copy, so that a session
     * that takes more elements after its prefetch is still served from memory when it fires; drops
     * the copy instead if the prefetch buffer or the budget has no room for them.
     */
    private void extendPrefetched(int id) {
        long extra = writeBuffer.payloadBytes(id);
        OffHeapBuffer values = prefetch.grow(id, extra);
        if (values != null) {
            writeBuffer.copyPayload(id, values, values.capacity() - extra);
        }
    }

    // ---------------------------------------------------------------- scan and compaction

    private boolean shouldCompact() {
        return deadBytes > 0 && (liveBytes <= 0 || (amplified(compactionThreshold) && growing()));
    }

    private boolean shouldCompactWithoutRead() {
        return deadBytes > 0
                && (liveBytes <= 0 || (amplified(2 * compactionThreshold) && growing()));
    }

    private boolean amplified(double threshold) {
        return (double) (liveBytes + deadBytes) / liveBytes > threshold;
    }

    /**
     * Whether the store has flushed at least (threshold - 1) x its live bytes since its windows
     * began to die. A compaction rewrites every live byte to reclaim the dead ones, which pays off
     * while new data keeps arriving. A store that only drains (its windows fire and are removed,
     * nothing new is flushed) takes no more disk than it already did, and the windows left are the
     * next to be read and removed: compacting it would copy them again at every threshold crossed,
     * about twice the live bytes over a whole drain. Its dead bytes are reclaimed once it grows
     * again, or all at once by the first flush or miss after its last window is gone.
     */
    private boolean growing() {
        return flushedSinceDeath >= (compactionThreshold - 1) * liveBytes;
    }

    /** Moves every live data frame to a new data log and rewrites the index log, now. */
    public void compact() throws IOException {
        checkOpen();
        compact(Reclaim.ALL);
    }

    /** An index scan for compaction alone, collecting no window. */
    private void compact(Reclaim reclaim) throws IOException {
        ahead.settle();
        settleFlush();
        batch.clear();
        scanIndex(reclaim, ++batchStamp);
    }

    /** What an index scan reclaims. */
    private enum Reclaim {
        /** Nothing: the scan only collects entries. */
        NOTHING,
        /**
         * The data logs with the fewest live bytes per byte, until the space amplification is
         * halfway between 1 and the threshold; the index log is rewritten whole.
         */
        DEADEST,
        /** Every data log and the index log. */
        ALL
    }

    /**
     * The one index scan: collects the entries of windows marked with {@code stamp} and, unless
     * {@code reclaim} is {@link Reclaim#NOTHING}, copies the live frames of the chosen data logs
     * into a new data log (recording the new positions) and every live entry into a new index log.
     */
    private void scanIndex(Reclaim reclaim, long stamp) throws IOException {
        Compaction compaction = null;
        if (reclaim != Reclaim.NOTHING) {
            if (writerFault) {
                truncateWriters();
            }
            if (indexWriter != null) {
                // The compaction's index log takes over the staging buffer and, once installed,
                // further flushes; if it fails, the next flush starts a new index log.
                closeIndexWriter();
            }
            chooseVictims(reclaim == Reclaim.ALL);
            compaction = startCompaction();
        }
        try {
            Compaction moving = compaction;
            long scanned =
                    indexLogs.scanLive(
                            entry,
                            table,
                            id -> {
                                long position = entry.position;
                                if (moving != null) {
                                    position = moving.move(entry);
                                    moving.chain(id, position, entry.frameLength);
                                }
                                if (table.batchStamp(id) == stamp) {
                                    collect(id, position, entry.frameLength);
                                }
                            });
            stats.addIndexScan(scanned);
            if (compaction != null) {
                compaction.finish(liveBytes);
            }
        } catch (IOException | RuntimeException e) {
            if (compaction != null) {
                compaction.abort(e);
            }
            throw e;
        }
        if (compaction != null) {
            install(compaction);
        }
    }

    /**
     * Marks the data logs a compaction empties: all of them, or the cheapest run that brings the
     * space amplification down to halfway between 1 and the threshold ({@link
     * DataLogs#markVictims}), whose live bytes are first counted from the frame chains.
     */
    private void chooseVictims(boolean all) {
        long excess = 0;
        if (!all) {
            countLiveBytesFromChains();
            excess =
                    liveBytes
                            + deadBytes
                            - (long) (liveBytes * (1 + (compactionThreshold - 1) / 2));
        }
        dataLogs.markVictims(all, excess, activeData);
    }

    // ---------------------------------------------------------------- frame chains

    private void extendChain(int id, long position, int length) {
        long head = table.frameHead(id);
        if (head == FrameChains.BROKEN) {
            return;
        }
        long extended = chains.extend(head, position, length);
        if (extended == FrameChains.BROKEN) {
            // The budget is full: this window is read by an index scan until the next compaction.
            liveChainRecords -= chainLength(id);
        } else {
            liveChainRecords++;
        }
        table.setFrameHead(id, extended);
    }

    /**
     * Sets each data log's {@link LogSegment#live} from the frame chains of the live windows. A
     * window whose chain the budget broke is not counted: its logs look deader than they are, which
     * costs a compaction that empties them more copying, never a lost frame (the move itself
     * follows the index).
     */
    private void countLiveBytesFromChains() {
        for (LogSegment segment : dataLogs) {
            segment.live = 0;
        }
        for (int id = 0, end = table.highWater(); id < end; id++) {
            if (!table.inUse(id)) {
                continue;
            }
            for (long r = table.frameHead(id); r >= 0; r = chains.previous(r)) {
                LogSegment segment = dataLogs.find(Positions.segment(chains.position(r)));
                if (segment != null) {
                    segment.live += chains.length(r);
                }
            }
        }
    }

    private long chainLength(int id) {
        long n = 0;
        for (long r = table.frameHead(id); r >= 0; r = chains.previous(r)) {
            n++;
        }
        return n;
    }

    /**
     * Collects the window's frames, oldest first, as an index scan would have. Returns false if the
     * budget refused the room for them (and {@code required} is false).
     */
    private boolean collectChain(int id, boolean required) {
        return batch.addChain(id, chains, table.frameHead(id), chainLength(id), required);
    }

    private FrameChains newChains() {
        return new FrameChains(
                budget,
                io,
                directory.resolve(
                        WindowStatTable.SCRATCH_PREFIX + "chains-" + chainFiles++ + ".records"),
                Math.max(PagedRecords.MIN_CACHE_BYTES, options.statCacheBytes() / 8),
                statShare);
    }

    /** Removed windows leave their records behind: copy the live ones once they are outnumbered. */
    private void copyChainsIfMostlyDead() {
        if (chains.records() <= 2 * liveChainRecords + CHAIN_COPY_SLACK) {
            return;
        }
        ahead.settle();
        FrameChains copy = newChains();
        long kept = 0;
        for (int id = 0, end = table.highWater(); id < end; id++) {
            if (!table.inUse(id)) {
                continue;
            }
            long head = table.frameHead(id);
            if (head < 0) {
                table.setRebuiltHead(id, head);
                continue;
            }
            batch.clear();
            if (!collectChain(id, false)) {
                // No room to copy: keep the old chains, dead records and all, for now.
                batch.clear();
                copy.close();
                return;
            }
            long previous = FrameChains.END;
            for (int k = 0; k < batch.size() && previous != FrameChains.BROKEN; k++) {
                previous = copy.extend(previous, batch.position(k), batch.length(k));
            }
            table.setRebuiltHead(id, previous);
        }
        batch.clear();
        installChains(copy);
    }

    /** Makes {@code rebuilt}, whose heads are in {@code rebuiltHead}, the store's chains. */
    private void installChains(FrameChains rebuilt) {
        chains.close();
        chains = rebuilt;
        long live = 0;
        for (int id = 0, end = table.highWater(); id < end; id++) {
            if (table.inUse(id)) {
                table.setFrameHead(id, table.rebuiltHead(id));
                table.setRebuiltHead(id, FrameChains.END);
                live += chainLength(id);
            }
        }
        liveChainRecords = live;
    }

    private void collect(int id, long position, int length) {
        if (!batch.tryAdd(id, position, length)) {
            // The budget is full: the bets go, the window asked for stays.
            dropBets();
            if (id != requestedId) {
                return;
            }
            batch.add(id, position, length);
        }
    }

    /**
     * Forgets the predicted windows of the read now running, and the entries collected for them.
     */
    private void dropBets() {
        prefetch.dropBets();
        batch.keepOnly(requestedId);
    }

    /**
     * Creates the logs a compaction writes (a data log with its header, an index log taking over
     * the index staging buffer) and the chains it rebuilds; deletes what it created if that fails.
     */
    private Compaction startCompaction() throws IOException {
        int dataId = newFileId(DATA_PREFIX);
        Path dataPath = directory.resolve(fileName(DATA_PREFIX, dataId));
        FileChannel channel = io.openForAppend(dataPath);
        try {
            ByteBuffer header = ByteBuffer.allocate(LogFileHeader.LENGTH);
            LogFileHeader.write(header, FileType.AUR_DATA_LOG, dataId);
            header.flip();
            while (header.hasRemaining()) {
                channel.write(header);
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(channel, e);
            deleteQuietly(io, dataPath, e);
            throw new IOException("Could not create compacted data log " + dataPath, e);
        }
        int indexId = newFileId(INDEX_PREFIX);
        LogWriter out;
        try {
            out = createLog(INDEX_PREFIX, indexId, FileType.AUR_INDEX_LOG, indexStaging);
        } catch (IOException | RuntimeException e) {
            closeQuietly(channel, e);
            deleteQuietly(io, dataPath, e);
            throw e;
        }
        LogSegment data =
                new LogSegment(dataId, dataPath, FileType.AUR_DATA_LOG, LogFileHeader.LENGTH);
        LogSegment index = new LogSegment(indexId, out.file(), FileType.AUR_INDEX_LOG, 0);
        FrameChains rebuilt;
        try {
            rebuilt = newChains();
        } catch (RuntimeException e) {
            closeQuietly(channel, e);
            closeQuietly(out, e);
            deleteQuietly(io, dataPath, e);
            deleteQuietly(io, index.path, e);
            throw e;
        }
        return new Compaction(io, table, dataLogs, data, channel, index, out, rebuilt);
    }

    /** Switches to the compacted logs and deletes the victims and the old index logs. */
    private void install(Compaction c) throws IOException {
        List<LogSegment> oldData = new ArrayList<>();
        List<LogSegment> oldIndex = new ArrayList<>(indexLogs.asList());
        LogWriter oldDataWriter = null;
        if (activeData != null && activeData.victim) {
            oldDataWriter = dataWriter;
            dataWriter = null;
            activeData = null;
        }
        indexWriter = c.writer;
        activeIndex = c.index;
        writerFault = false;
        // Frames moved only out of victims with frames, so a compacted log with any takes the
        // place of the first of them: the run it empties.
        boolean toPlace = c.dataSize > LogFileHeader.LENGTH;
        List<LogSegment> kept = new ArrayList<>(dataLogs.size());
        long dataBytes = toPlace ? c.dataSize - LogFileHeader.LENGTH : 0;
        IOException failure = toPlace ? null : delete(c.data.path, null);
        for (LogSegment segment : dataLogs) {
            if (!segment.victim) {
                kept.add(segment);
                dataBytes += segment.size - LogFileHeader.LENGTH;
                continue;
            }
            if (toPlace && segment.size > LogFileHeader.LENGTH) {
                toPlace = false;
                kept.add(c.data);
            }
            oldData.add(segment);
        }
        dataLogs.replaceAll(kept);
        indexLogs.replaceAll(List.of(c.index));
        stats.addCompaction(c.moved);
        installChains(c.chains);
        deadBytes = dataBytes - liveBytes;
        flushedSinceDeath = 0;
        publishSpace();
        failure = closeWriter(oldDataWriter, failure);
        for (LogSegment segment : oldData) {
            failure = closeAndDelete(segment, failure);
        }
        for (LogSegment segment : oldIndex) {
            failure = closeAndDelete(segment, failure);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static IOException closeWriter(LogWriter writer, IOException failure) {
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
        }
        return failure;
    }

    private IOException closeAndDelete(LogSegment segment, IOException failure) {
        try {
            segment.close();
        } catch (IOException e) {
            failure = chain(failure, e);
        }
        return delete(segment.path, failure);
    }

    private IOException delete(Path path, IOException failure) {
        try {
            io.delete(path);
        } catch (IOException e) {
            failure = chain(failure, e);
        }
        return failure;
    }

    // ---------------------------------------------------------------- iteration, seal, restore

    /** Visits every live value: per window the flushed ones, then those in the write buffer. */
    @Override
    public void forEach(EntryVisitor visitor) throws IOException {
        checkOpen();
        ahead.settle();
        settleFlush();
        IndexEntryDescriptor e = new IndexEntryDescriptor();
        long scanned =
                indexLogs.scanLive(
                        e,
                        table,
                        id -> {
                            LogSegment data = dataLogs.require(Positions.segment(e.position));
                            long offset = Positions.offset(e.position);
                            byte[] payload = data.reader(io).readFrame(offset);
                            byte[] key = table.key(id);
                            byte[] window = table.window(id);
                            int p = 0;
                            while (p < payload.length) {
                                int length =
                                        p + 4 <= payload.length
                                                ? FrameDescriptor.readIntLE(payload, p)
                                                : -1;
                                if (length < 0 || length > payload.length - p - 4) {
                                    throw new CorruptLogException(
                                            data.path,
                                            offset + FrameDescriptor.HEADER_LENGTH + p,
                                            "bad value length " + length + " in data frame");
                                }
                                visitor.visit(key, window, payload, p + 4, length);
                                p += 4 + length;
                            }
                        });
        stats.addIndexScan(scanned);
        for (int i = 0, windows = writeBuffer.windows(); i < windows; i++) {
            int id = writeBuffer.window(i);
            byte[] key = table.key(id);
            byte[] window = table.window(id);
            writeBuffer.forEachValue(
                    id,
                    (value, offset, length) -> visitor.visit(key, window, value, offset, length));
        }
    }

    /**
     * Flushes, syncs and closes the current logs (later writes go to new files) and writes a
     * manifest listing every log with its length and the stat table.
     *
     * <p>Fsyncs the files and the manifest only when {@code durable}; see {@link SealedStore}.
     */
    @Override
    public SealedStore seal(boolean durable) throws IOException {
        checkOpen();
        ahead.settle();
        flush();
        settleFlush();
        if (writerFault) {
            truncateWriters();
        }
        try {
            if (dataWriter != null) {
                dataWriter.flush(durable);
            }
            if (indexWriter != null) {
                indexWriter.flush(durable);
            }
        } catch (IOException e) {
            writerFault = true;
            throw e;
        }
        if (dataWriter != null) {
            closeDataWriter();
        }
        if (indexWriter != null) {
            closeIndexWriter();
        }
        byte[] payload =
                AurManifest.encode(
                        flushSeq, nextFileId, readClock, dataLogs, indexLogs.asList(), table);
        int manifestId = newFileId(MANIFEST_PREFIX);
        Path manifest = directory.resolve(fileName(MANIFEST_PREFIX, manifestId));
        ManifestFile.write(io, manifest, manifestId, payload, durable);
        if (lastManifest != null) {
            io.delete(lastManifest);
        }
        lastManifest = manifest;
        List<SealedStore.SealedFile> files = new ArrayList<>();
        for (LogSegment segment : dataLogs) {
            files.add(new SealedStore.SealedFile(segment.path, segment.size));
        }
        for (LogSegment segment : indexLogs) {
            files.add(new SealedStore.SealedFile(segment.path, segment.size));
        }
        return new SealedStore(manifest, files);
    }

    private void load(Path manifest, byte[] payload) throws IOException {
        long start = System.nanoTime();
        AurManifest m = AurManifest.decode(manifest, payload, directory, table);
        long decoded = System.nanoTime();
        flushSeq = m.flushSeq;
        nextFileId = m.nextFileId;
        readClock = m.readClock;
        // Listed first, so that closing the store on a failure closes the logs opened so far.
        dataLogs.replaceAll(m.dataLogs);
        indexLogs.replaceAll(m.indexLogs);
        long dataTotal = 0;
        for (LogSegment segment : m.dataLogs) {
            if (options.openDataLogsOnRestore()) {
                segment.reader(io);
            }
            dataTotal += segment.size - LogFileHeader.LENGTH;
        }
        long[] scanned = verifyIndex(manifest, m.windowsWithData);
        long verified = System.nanoTime();
        LOG.info(
                "AUR store {} restored: {} windows from its manifest in {} ms, {} index entries"
                        + " ({} bytes) checked and chained in {} ms, {} page reads",
                directory,
                table.size(),
                (decoded - start) / 1_000_000,
                scanned[0],
                scanned[1],
                (verified - decoded) / 1_000_000,
                statPageReads());
        liveBytes = m.liveBytes;
        deadBytes = dataTotal - m.liveBytes;
        if (deadBytes < 0) {
            throw new CorruptLogException(
                    manifest,
                    0,
                    "windows hold "
                            + m.liveBytes
                            + " data bytes but the data logs only "
                            + dataTotal);
        }
        publishSpace();
    }

    /**
     * Checks every index frame's checksum and that the index and the stat table agree. Returns the
     * entries and the entry bytes scanned.
     *
     * <p>The table holds what the manifest inserted, every window's collected bytes at 0, of which
     * {@code windowsWithData} hold data. The scan keeps count of the windows whose collected bytes
     * differ from their data bytes, so that only a mismatch makes a second pass over the table: one
     * pass too many pages it all back in once the table outgrows its page cache.
     */
    private long[] verifyIndex(Path manifest, int windowsWithData) throws IOException {
        liveChainRecords = 0;
        IndexEntryDescriptor e = new IndexEntryDescriptor();
        long[] entries = {0};
        int[] mismatched = {windowsWithData};
        long bytes =
                indexLogs.scan(
                        e,
                        (log, frameOffset) -> {
                            entries[0]++;
                            LogSegment data = dataLogs.find(Positions.segment(e.position));
                            if (data == null
                                    || Positions.offset(e.position) < LogFileHeader.LENGTH
                                    || Positions.offset(e.position) + e.frameLength > data.size) {
                                throw new CorruptLogException(
                                        log.path,
                                        frameOffset,
                                        "index entry points outside the data logs: segment "
                                                + Positions.segment(e.position)
                                                + " offset "
                                                + Positions.offset(e.position));
                            }
                            int id = e.liveId(table);
                            if (id != NO_ID) {
                                long before = table.collectedBytes(id);
                                long after = before + e.frameLength;
                                long disk = table.diskBytes(id);
                                if (before == disk) {
                                    mismatched[0]++;
                                } else if (after == disk) {
                                    mismatched[0]--;
                                }
                                table.setCollectedBytes(id, after);
                                extendChain(id, e.position, e.frameLength);
                            }
                        });
        if (mismatched[0] == 0) {
            return new long[] {entries[0], bytes};
        }
        for (int id = 0, end = table.highWater(); id < end; id++) {
            if (table.inUse(id) && table.collectedBytes(id) != table.diskBytes(id)) {
                throw new CorruptLogException(
                        manifest,
                        0,
                        "the index logs hold "
                                + table.collectedBytes(id)
                                + " data bytes of a window the manifest records with "
                                + table.diskBytes(id));
            }
        }
        throw new IllegalStateException(
                "AUR restore counted " + mismatched[0] + " mismatched windows but found none");
    }

    // ---------------------------------------------------------------- accounting

    @Override
    public StoreStats stats() {
        return stats;
    }

    /** Prefetch hits over gets that needed flushed data; NaN before the first. */
    public double hitRatio() {
        return stats.hitRatio();
    }

    /** Data-log bytes read by gets over the bytes of flushed values they returned; NaN before. */
    public double readAmplification() {
        return stats.readAmplification();
    }

    /**
     * The space amplification that triggers compaction: the MSA scaled by this instance's jitter.
     */
    double compactionThreshold() {
        return compactionThreshold;
    }

    /**
     * Pages of the stat table and frame chains read back from their scratch files: nonzero once the
     * live windows outgrew {@link AurStoreOptions#statCacheBytes()}.
     */
    public long statPageReads() {
        return table.pageReads() + chains.pageReads();
    }

    /** Native bytes of the stat table and frame chains: their page caches and page tables. */
    long statMemoryBytes() {
        return table.memoryBytes() + chains.memoryBytes();
    }

    /** Windows in the stat table. */
    public int liveWindows() {
        return table.size();
    }

    public long prefetchBufferBytes() {
        return prefetch.used();
    }

    /** Budget bytes the write buffer holds (for tests). */
    long writeBufferBytes() {
        return writeBuffer.memoryBytes() + otherWriteBufferBytes();
    }

    /**
     * Budget bytes of the write buffer in flight or kept spare. Metrics call this from their own
     * thread, so each field is read once.
     */
    private long otherWriteBufferBytes() {
        WriteBuffer inFlight = flushing;
        WriteBuffer kept = spare;
        return (inFlight != null ? inFlight.memoryBytes() : 0)
                + (kept != null ? kept.memoryBytes() : 0);
    }

    @Override
    public long memoryUsed() {
        if (closed) {
            return 0;
        }
        return table.memoryBytes()
                + writeBuffer.memoryBytes()
                + otherWriteBufferBytes()
                + prefetch.memoryBytes()
                + batch.memoryBytes()
                + dataStaging.capacity()
                + indexStaging.capacity()
                + chains.memoryBytes();
    }

    /** Publishes what the store holds on disk; called wherever a window or a log file goes. */
    private void publishSpace() {
        stats.setLiveBytes(liveBytes);
        stats.setDeadBytes(deadBytes);
        stats.setFiles(dataLogs.size() + indexLogs.size());
        stats.setEntries(table.size());
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("AUR store in " + directory + " is closed");
        }
        String failure = table.failure() != null ? table.failure() : chains.failure();
        if (failure != null) {
            // A page of the stat table or the chains was lost half way through an operation.
            throw new IllegalStateException(
                    "AUR store in "
                            + directory
                            + " is unusable: "
                            + failure
                            + "; restore it from its last checkpoint");
        }
    }

    /** Closes every file and returns every byte to the budget. Files stay on disk. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException failure = null;
        try {
            ahead.settle();
        } catch (RuntimeException e) {
            failure = new IOException("AUR store in " + directory + ": read ahead failed", e);
        }
        if (flushTask != null) {
            // Files stay on disk, but the writer must not be closed under the flush thread.
            BackgroundWork.await(flushTask);
            flushTask = null;
        }
        failure = closeWriter(dataWriter, failure);
        failure = closeWriter(indexWriter, failure);
        dataWriter = null;
        indexWriter = null;
        dataStaging.close();
        indexStaging.close();
        for (LogSegment segment : dataLogs) {
            failure = closeSegment(segment, failure);
        }
        for (LogSegment segment : indexLogs) {
            failure = closeSegment(segment, failure);
        }
        // The table may be unusable (a scratch page could not be written): release without it.
        prefetch.close();
        chains.close();
        table.release();
        writeBuffer.close();
        if (flushing != null) {
            flushing.close();
        }
        if (spare != null) {
            spare.close();
        }
        batch.close();
        loader.release();
        if (failure != null) {
            throw failure;
        }
    }

    private static IOException closeSegment(LogSegment segment, IOException failure) {
        try {
            segment.close();
        } catch (IOException e) {
            failure = chain(failure, e);
        }
        return failure;
    }
}
