package io.flowkv.core.rmw;

import io.flowkv.core.Checks;
import io.flowkv.core.CorruptLogException;
import io.flowkv.core.EntryVisitor;
import io.flowkv.core.Jitter;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.index.LongHashIndex.KeyMatcher;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.IoFailures;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.ManifestFile;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapArena;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.flowkv.core.log.IoFailures.chain;
import static io.flowkv.core.log.IoFailures.deleteQuietly;
import static io.flowkv.core.rmw.RmwRecordDescriptor.FRAME_PAYLOAD;
import static io.flowkv.core.rmw.RmwRecordDescriptor.HEADER;

/**
 * The read-modify-write store (FlowKV §4.3): point get/put/remove of one value per (key,
 * namespace), for aggregating and reducing window state and for every other keyed state of a job.
 *
 * <p>Writes go to a hash write buffer ({@link RmwWriteBuffer}); a full buffer is flushed as one
 * frame per record to the end of the value log, and a hash index maps each (key, namespace) hash to
 * the packed {@link Positions position} of its latest frame. The index holds no keys: on a hash
 * match the key is checked against the frame itself, which a point read has to load anyway, so a
 * get costs one positional read of one frame whose checksum is verified. One frame per record keeps
 * that read small; batching records into larger frames would make every point read pay for its
 * neighbours.
 *
 * <p>The log only grows; overwritten and removed versions are dead bytes. When (live + dead) / live
 * exceeds the maximum space amplification (jittered per instance, never above it) the store
 * compacts: every live frame is moved, long runs of adjacent frames with {@code transferTo}, into
 * new segments, the index is rewritten and the old segments are deleted. Compaction writes new
 * files only, so the files a {@link #seal()} listed never change (they may be deleted).
 *
 * <p>Single writer: one thread calls every method. Consumers and visitors must not call back into
 * the store. {@link #close()} does not flush: what was not sealed is dropped, as after a failure.
 */
public final class RmwStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RmwStore.class);

    private static final long NONE = Positions.NONE;
    private static final String PREFIX = "rmw-";

    /** The index's page files: scratch, not store files (so not "rmw-"), never in a seal. */
    private static final String INDEX_FILE_PREFIX = "index-";

    private static final Pattern SEGMENT_NAME = Pattern.compile("rmw-(\\d{8})\\.log");
    private static final Pattern MANIFEST_NAME = Pattern.compile("rmw-(\\d{8})\\.manifest");

    /** First read of a point lookup: covers a typical small frame in one system call. */
    private static final int FIRST_READ = 512;

    private static final int MAX_ARENA_CHUNK = 1 << 20;

    /** Live frames moved per step of a compaction: bounds its working memory (24 B each). */
    private static final int COMPACTION_BATCH = 4096;

    /** Runs of live frames shorter than this are copied through memory, longer ones transferred. */
    private static final int COPY_RUN_LIMIT = 4096;

    private final RmwStoreOptions options;
    private final MemoryBudget budget;
    private final FileIo io;
    private final Path directory;
    private final Jitter jitter;
    private final StoreStats stats = new StoreStats();

    private final RmwWriteBuffer buffer;
    private final PagedHashIndex index;
    private final IoBuffer staging;

    /** Ordered by id; the active segment, if any, is the last. */
    private final List<RmwSegment> segments = new ArrayList<>();

    private LogWriter writer;
    private RmwSegment active;
    private int nextSegmentId;
    private long manifestId;
    private Path lastManifest;

    private final long flushThreshold;
    private final long hashMask;
    private double compactionThreshold;

    /** Holds the last frame read from the log (or a value copied out of the write buffer). */
    private byte[] scratch;

    private ByteBuffer scratchView;
    private long scratchReserved;

    /** Length of the value {@link #locate} found. */
    private int foundLength;

    /** Position of the verified frame now in {@link #scratch}, or NONE. */
    private long scratchFramePos = NONE;

    private int scratchFrameLength;

    // What the key matchers compare against; set before each index call (single writer).
    private byte[] lookupKey;
    private byte[] lookupNamespace;
    private long lookupRecord;
    private byte[] lookupPayload;
    private int lookupPayloadOffset;
    private long lookupPosition;

    /** Frame length of the log entry the last successful disk match accepted. */
    private int matchedFrameLength;

    private final KeyMatcher bufferMatchesKey = this::bufferMatchesKey;
    private final KeyMatcher bufferMatchesPayload = this::bufferMatchesPayload;
    private final KeyMatcher logMatchesKey = this::logMatchesKey;
    private final KeyMatcher logMatchesRecord = this::logMatchesRecord;
    private final KeyMatcher logMatchesPayload = this::logMatchesPayload;
    private final KeyMatcher isLookupPosition = v -> v == lookupPosition;

    /** Counts write-buffer resets: arena positions from an older epoch are meaningless. */
    private long flushEpoch;

    private boolean closed;

    private RmwStore(RmwStoreOptions options, MemoryBudget budget) throws IOException {
        this.options = Checks.checkNotNull("options", options);
        this.budget = Checks.checkNotNull("budget", budget);
        this.io = options.fileIo();
        this.directory = options.directory();
        this.jitter = options.newJitter();
        this.flushThreshold = jitter.scale(options.writeBufferBytes());
        this.hashMask = options.hashMask();
        this.compactionThreshold = jitter.scaleAmplification(options.maxSpaceAmplification());
        Files.createDirectories(directory);
        // A sixteenth of the write buffer per chunk: an idle store keeps one chunk, and many idle
        // stores sharing one budget must not pin it.
        int chunk = (int) Math.max(256, Math.min(MAX_ARENA_CHUNK, options.writeBufferBytes() / 16));
        RmwWriteBuffer wb = null;
        PagedHashIndex idx = null;
        IoBuffer stage = null;
        try {
            wb = new RmwWriteBuffer(budget, chunk);
            idx =
                    new PagedHashIndex(
                            budget,
                            io,
                            directory,
                            INDEX_FILE_PREFIX,
                            options.indexCacheBytes(),
                            1024);
            stage = IoBuffer.allocate(budget, options.ioBufferBytes(), "RMW staging buffer");
            budget.reserve(FIRST_READ * 8, "RMW read buffer");
        } catch (RuntimeException e) {
            if (stage != null) {
                stage.close();
            }
            if (idx != null) {
                idx.close();
            }
            if (wb != null) {
                wb.close();
            }
            throw e;
        }
        this.buffer = wb;
        this.index = idx;
        this.staging = stage;
        this.scratchReserved = FIRST_READ * 8;
        this.scratch = new byte[FIRST_READ * 8];
        this.scratchView = ByteBuffer.wrap(scratch);
    }

    /** A new, empty store in {@code options.directory()}, which must hold no RMW files. */
    public static RmwStore open(RmwStoreOptions options, MemoryBudget budget) throws IOException {
        RmwStore store = new RmwStore(options, budget);
        try {
            store.checkNoStoreFiles();
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    /**
     * Reopens a sealed store: reads the manifest, then rebuilds the index by scanning its segments
     * (in {@code options.directory()}) in order, verifying every checksum. Later records win;
     * tombstones delete. New writes go to new segments.
     */
    public static RmwStore restore(RmwStoreOptions options, MemoryBudget budget, Path manifest)
            throws IOException {
        RmwManifest m = RmwManifest.decode(ManifestFile.read(options.fileIo(), manifest), manifest);
        RmwStore store = new RmwStore(options, budget);
        try {
            store.load(m, manifest);
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    // ---------------------------------------------------------------- point operations

    /** Delivers the value of (key, namespace) to {@code consumer}; false if there is none. */
    public boolean get(byte[] key, byte[] namespace, ValueConsumer consumer) throws IOException {
        int at = locate(key, namespace);
        if (at < 0) {
            return false;
        }
        consumer.accept(scratch, at, foundLength);
        return true;
    }

    /** The value of (key, namespace) as a new array, or null. */
    public byte[] get(byte[] key, byte[] namespace) throws IOException {
        int at = locate(key, namespace);
        return at < 0 ? null : Arrays.copyOfRange(scratch, at, at + foundLength);
    }

    /** Puts the value into {@link #scratch}; returns its offset there or -1 if absent. */
    private int locate(byte[] key, byte[] namespace) throws IOException {
        checkOpen();
        setLookup(key, namespace);
        long hash = hash(key, namespace);
        long rec = buffer.find(hash, bufferMatchesKey);
        if (rec != NONE) {
            if (buffer.kind(rec) != RmwRecordDescriptor.PUT) {
                return -1;
            }
            foundLength = buffer.valueLength(rec);
            ensureScratch(foundLength);
            scratchFramePos = NONE;
            buffer.copyValue(rec, scratch, 0);
            return 0;
        }
        if (lookupLog(hash, logMatchesKey) == NONE) {
            return -1;
        }
        int payload = FRAME_PAYLOAD;
        foundLength = RmwRecordDescriptor.valueLength(scratch, payload);
        return payload + HEADER + key.length + namespace.length;
    }

    /** Sets (key, namespace) to {@code value}. */
    public void put(byte[] key, byte[] namespace, byte[] value) throws IOException {
        checkOpen();
        Checks.checkNotNull("value", value);
        setLookup(key, namespace);
        long hash = hash(key, namespace);
        stats.addAppended(
                RmwRecordDescriptor.payloadLength(key.length, namespace.length, value.length));
        long rec = buffer.find(hash, bufferMatchesKey);
        if (rec != NONE && buffer.valueCapacity(rec) >= value.length) {
            buffer.setValue(rec, value);
            return;
        }
        long epoch = flushEpoch;
        long pos = allocate(hash, key, namespace, value.length);
        if (epoch != flushEpoch) {
            rec = NONE; // flushed: the old record is gone and its position may be reused
        }
        if (rec != NONE) {
            buffer.setPrevious(pos, buffer.previousPosition(rec), buffer.previousFrameLength(rec));
        } else if (scratchHoldsKey(key, namespace)) {
            // The usual read-modify-write: the get that came first left the old frame in scratch.
            buffer.setPrevious(pos, scratchFramePos, scratchFrameLength);
        }
        buffer.setValue(pos, value);
        publish(pos, key, namespace, value);
    }

    /** Removes (key, namespace); returns whether it had a value. */
    public boolean remove(byte[] key, byte[] namespace) throws IOException {
        checkOpen();
        setLookup(key, namespace);
        long hash = hash(key, namespace);
        long rec = buffer.find(hash, bufferMatchesKey);
        if (rec != NONE) {
            if (buffer.kind(rec) != RmwRecordDescriptor.PUT) {
                return false;
            }
            long onLog = lookupLog(hash, logMatchesKey);
            if (onLog == NONE) {
                buffer.drop(rec, bufferMatchesKey);
            } else {
                buffer.makeTombstone(rec);
                buffer.setPrevious(rec, onLog, matchedFrameLength);
            }
            stats.addAppended(RmwRecordDescriptor.payloadLength(key.length, namespace.length, 0));
            return true;
        }
        long onLog = lookupLog(hash, logMatchesKey);
        if (onLog == NONE) {
            return false;
        }
        long epoch = flushEpoch;
        long pos = allocate(hash, key, namespace, 0);
        if (epoch != flushEpoch) {
            // The flush may have compacted and moved the logged version: find it again.
            onLog = lookupLog(hash, logMatchesKey);
        }
        buffer.makeTombstone(pos);
        buffer.setPrevious(pos, onLog, matchedFrameLength);
        publish(pos, key, namespace, null);
        stats.addAppended(RmwRecordDescriptor.payloadLength(key.length, namespace.length, 0));
        return true;
    }

    /** Allocates a write-buffer record, flushing first when the buffer is full. */
    private long allocate(long hash, byte[] key, byte[] namespace, int valueCapacity)
            throws IOException {
        int size = RmwWriteBuffer.recordSize(key.length, namespace.length, valueCapacity);
        if (buffer.usedBytes() > 0 && buffer.usedBytes() + size > flushThreshold) {
            flush();
            setLookup(key, namespace);
        }
        long pos = buffer.tryAllocate(hash, key, namespace, valueCapacity);
        if (pos == OffHeapArena.NO_SPACE && buffer.usedBytes() > 0) {
            flush();
            setLookup(key, namespace);
            pos = buffer.tryAllocate(hash, key, namespace, valueCapacity);
        }
        if (pos == OffHeapArena.NO_SPACE) {
            throw new MemoryBudgetExceededException(
                    "RMW write buffer record of " + size + " bytes",
                    size,
                    budget.available(),
                    budget.capacity());
        }
        return pos;
    }

    private void publish(long pos, byte[] key, byte[] namespace, byte[] value) throws IOException {
        try {
            buffer.publish(pos, bufferMatchesKey);
        } catch (MemoryBudgetExceededException e) {
            // The buffer's hash table could not grow: flush (it keeps its capacity) and retry.
            if (buffer.liveCount() == 0) {
                throw e;
            }
            flush();
            if (value != null) {
                put(key, namespace, value);
            } else {
                remove(key, namespace);
            }
        }
    }

    /** Live (key, namespace) entries. Probes the log for keys the write buffer changed. */
    public long size() throws IOException {
        checkOpen();
        long n = index.size();
        try {
            for (int i = 0; i < buffer.recordCount(); i++) {
                long rec = buffer.record(i);
                byte kind = buffer.kind(rec);
                if (kind == RmwWriteBuffer.SUPERSEDED) {
                    continue;
                }
                lookupRecord = rec;
                boolean logged = index.get(buffer.hash(rec), logMatchesRecord) != NONE;
                if (kind == RmwRecordDescriptor.PUT && !logged) {
                    n++;
                } else if (kind == RmwRecordDescriptor.TOMBSTONE && logged) {
                    n--;
                }
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return n;
    }

    // ---------------------------------------------------------------- flush

    /**
     * Appends every current write-buffer record to the value log and points the index at it. If a
     * write fails, the log is rolled back, the buffer keeps everything and a later flush can retry.
     */
    public void flush() throws IOException {
        checkOpen();
        if (buffer.liveCount() == 0) {
            buffer.reset();
            flushEpoch++;
            return;
        }
        ensureWriter();
        long goodSize = writer.size();
        long written = 0;
        try {
            for (int i = 0; i < buffer.recordCount(); i++) {
                long rec = buffer.record(i);
                if (buffer.kind(rec) == RmwWriteBuffer.SUPERSEDED) {
                    continue;
                }
                int payload = buffer.payloadLength(rec);
                long offset = writer.beginFrame();
                writer.putBytes(buffer.chunk(rec), buffer.payloadIndex(rec), payload);
                writer.endFrame();
                buffer.setNewPosition(rec, Positions.pack(active.id, offset));
                written += FrameDescriptor.HEADER_LENGTH + payload;
            }
            writer.flush();
        } catch (IOException | RuntimeException e) {
            rollBack(goodSize, e);
            throw e;
        }
        active.size = writer.size();
        // Only now does the index change: a failed write above left it untouched.
        int i = 0;
        try {
            for (; i < buffer.recordCount(); i++) {
                long rec = buffer.record(i);
                byte kind = buffer.kind(rec);
                if (kind == RmwWriteBuffer.SUPERSEDED) {
                    continue;
                }
                lookupRecord = rec;
                boolean put = kind == RmwRecordDescriptor.PUT;
                applyToIndex(
                        put,
                        buffer.hash(rec),
                        put ? buffer.newPosition(rec) : NONE,
                        FrameDescriptor.HEADER_LENGTH + buffer.payloadLength(rec),
                        logMatchesRecord);
            }
        } catch (UncheckedIOException | MemoryBudgetExceededException e) {
            // A corrupt frame met by a key check, or an index that cannot grow: the records from
            // i on stay in the buffer for a retry, and the frames just written for them are dead.
            for (; i < buffer.recordCount(); i++) {
                long rec = buffer.record(i);
                if (buffer.kind(rec) != RmwWriteBuffer.SUPERSEDED) {
                    stats.addDeadBytes(FrameDescriptor.HEADER_LENGTH + buffer.payloadLength(rec));
                }
            }
            if (e instanceof UncheckedIOException u) {
                throw u.getCause();
            }
            throw e;
        }
        buffer.reset();
        flushEpoch++;
        stats.addFlushed(written);
        maybeCompact();
    }

    private void rollBack(long goodSize, Exception failure) {
        try {
            writer.truncate(goodSize);
        } catch (IOException | RuntimeException t) {
            failure.addSuppressed(t);
            // The file cannot be trusted past goodSize: stop appending to it.
            closeQuietly(writer, failure);
            active.size = goodSize;
            writer = null;
            active = null;
        }
    }

    private void ensureWriter() throws IOException {
        if (writer != null && writer.size() >= options.segmentRollBytes()) {
            closeActive();
        }
        if (writer == null) {
            segments.add(startSegment());
        }
    }

    /** Creates a segment file and makes it the active one (the caller lists it). */
    private RmwSegment startSegment() throws IOException {
        if (nextSegmentId > Positions.MAX_SEGMENT) {
            throw new IOException(
                    "RMW store in "
                            + directory
                            + " ran out of segment ids ("
                            + nextSegmentId
                            + ")");
        }
        int id = nextSegmentId++;
        Path path = segmentPath(id);
        LogWriter w;
        try {
            w = LogWriter.create(io, path, FileType.RMW_VALUE_LOG, id, staging);
        } catch (IOException e) {
            deleteQuietly(io, path, e);
            throw e;
        }
        FileChannel channel;
        try {
            channel = io.openForRead(path);
        } catch (IOException e) {
            closeQuietly(w, e);
            deleteQuietly(io, path, e);
            throw e;
        }
        writer = w;
        active = new RmwSegment(id, path, channel, w.size());
        return active;
    }

    /**
     * Closes the active segment: from now on it is immutable. Not synced here: durability is
     * promised by {@link #seal()} only, which syncs every segment that is not yet.
     */
    private void closeActive() throws IOException {
        LogWriter w = writer;
        writer = null;
        RmwSegment segment = active;
        active = null;
        try {
            w.flush();
            segment.size = w.size();
        } finally {
            w.close();
        }
    }

    // ---------------------------------------------------------------- compaction

    private void maybeCompact() throws IOException {
        long live = stats.liveBytes();
        long dead = stats.deadBytes();
        if (dead > 0 && (live == 0 || (double) (live + dead) / live > compactionThreshold)) {
            compactNow();
        }
    }

    /** Flushes, then compacts if any byte of the log is dead. */
    public void compact() throws IOException {
        checkOpen();
        flush();
        if (stats.deadBytes() > 0) {
            compactNow();
        }
    }

    /**
     * Moves every live frame into new segments, one old segment at a time, in bounded memory: the
     * segment is scanned in order, each put frame the index still points at is live, and live
     * frames are moved in batches of {@link #COMPACTION_BATCH}. Long runs of adjacent live frames
     * move with one {@code transferTo} each and keep their checksums (a corrupt frame is still
     * caught when read); short runs are copied from memory with their checksums verified. After a
     * batch is written and flushed the index is pointed at the copies; a segment all of whose live
     * frames have moved is deleted. A failure leaves the store consistent: the batch's output is
     * rolled back, moved entries are read from their copies and the rest from the old segments.
     */
    private void compactNow() throws IOException {
        if (writer != null) {
            closeActive();
        }
        long[] live = new long[COMPACTION_BATCH];
        long[] moved = new long[COMPACTION_BATCH];
        long[] hashes = new long[COMPACTION_BATCH];
        long written = 0;
        for (RmwSegment source : new ArrayList<>(segments)) {
            written += compactSegment(source, live, moved, hashes);
        }
        if (writer != null) {
            writer.flush();
            active.size = writer.size();
        }
        scratchFramePos = NONE;
        if (written != stats.liveBytes() || stats.deadBytes() != 0) {
            throw new IllegalStateException(
                    "RMW live byte accounting drifted: compaction moved "
                            + written
                            + " bytes, expected "
                            + stats.liveBytes()
                            + "; "
                            + stats.deadBytes()
                            + " dead bytes left");
        }
        stats.addCompaction(written);
        compactionThreshold = jitter.scaleAmplification(options.maxSpaceAmplification());
    }

    /** Moves the live frames of {@code source} and deletes it; returns the bytes moved. */
    private long compactSegment(RmwSegment source, long[] live, long[] moved, long[] hashes)
            throws IOException {
        long frameBytes = 0;
        long written = 0;
        int n = 0;
        try (LogReader reader =
                LogReader.open(io, source.path, FileType.RMW_VALUE_LOG, source.size)) {
            FrameScanner frames = reader.scanAll(options.ioBufferBytes());
            while (frames.next()) {
                byte[] b = frames.array();
                int p = frames.payloadOffset();
                frameBytes += FrameDescriptor.HEADER_LENGTH + frames.payloadLength();
                if (RmwRecordDescriptor.kind(b, p) != RmwRecordDescriptor.PUT) {
                    continue;
                }
                long hash = payloadHash(b, p);
                lookupPosition = Positions.pack(source.id, frames.frameOffset());
                if (lookupLog(hash, isLookupPosition) == NONE) {
                    continue;
                }
                live[n] = lookupPosition;
                hashes[n] = hash;
                if (++n == live.length) {
                    written += moveBatch(live, moved, hashes, n);
                    n = 0;
                }
            }
        }
        if (n > 0) {
            written += moveBatch(live, moved, hashes, n);
        }
        segments.remove(source);
        source.channel.close();
        io.delete(source.path);
        // Every frame of the deleted segment was dead by now: moved, overwritten or removed.
        stats.addDeadBytes(-frameBytes);
        return written;
    }

    /**
     * Copies the frames at the sorted positions {@code live[0..n)} to the active output, then
     * points the index at the copies. Each moved frame leaves one dead copy, old or new, whatever
     * happens to the index updates.
     */
    private long moveBatch(long[] live, long[] moved, long[] hashes, int n) throws IOException {
        int outputsBefore = segments.size();
        long goodSize = writer == null ? -1 : writer.size();
        long bytes;
        try {
            bytes = move(live, moved, n);
            writer.flush();
            active.size = writer.size();
        } catch (IOException | RuntimeException e) {
            abandonBatch(outputsBefore, goodSize, e);
            throw e;
        }
        stats.addDeadBytes(bytes);
        for (int k = 0; k < n; k++) {
            lookupPosition = live[k];
            try {
                index.put(hashes[k], moved[k], isLookupPosition);
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        }
        return bytes;
    }

    /** Drops what a failed batch wrote: the segments it started, the tail it appended. */
    private void abandonBatch(int outputsBefore, long goodSize, Exception failure) {
        while (segments.size() > outputsBefore) {
            RmwSegment s = segments.remove(segments.size() - 1);
            if (s == active) {
                closeQuietly(writer, failure);
                writer = null;
                active = null;
            }
            IoFailures.closeQuietly(s.channel, failure);
            deleteQuietly(io, s.path, failure);
        }
        if (writer != null && goodSize >= 0) {
            rollBack(goodSize, failure);
        }
    }

    /**
     * Copies the frames at the sorted positions {@code live[0..n)} to the active segment, starting
     * new ones (listed in {@link #segments}) as segments fill; fills {@code moved} with their new
     * positions.
     */
    private long move(long[] live, long[] moved, int n) throws IOException {
        HeaderWindow headers = new HeaderWindow(new byte[options.ioBufferBytes()]);
        long written = 0;
        int i = 0;
        while (i < n) {
            RmwSegment source = segment(Positions.segment(live[i]));
            headers.reset(source);
            try (LogReader reader =
                    LogReader.open(io, source.path, FileType.RMW_VALUE_LOG, source.size)) {
                while (i < n && Positions.segment(live[i]) == source.id) {
                    long runStart = Positions.offset(live[i]);
                    long runEnd = runStart + headers.frameLength(runStart);
                    int j = i + 1;
                    while (j < n
                            && Positions.segment(live[j]) == source.id
                            && Positions.offset(live[j]) == runEnd) {
                        runEnd += headers.frameLength(runEnd);
                        j++;
                    }
                    if (writer == null || writer.size() >= options.segmentRollBytes()) {
                        if (writer != null) {
                            closeActive();
                        }
                        segments.add(startSegment());
                    }
                    long runLength = runEnd - runStart;
                    if (runLength < COPY_RUN_LIMIT && headers.cover(runStart, runLength)) {
                        // A short run costs less copied from the block its headers came in than
                        // a transferTo system call (and two more for position and size) would.
                        for (int k = i; k < j; k++) {
                            moved[k] = Positions.pack(active.id, headers.copyFrame(live[k]));
                        }
                    } else {
                        long base = writer.transferFrom(reader, runStart, runLength);
                        for (int k = i; k < j; k++) {
                            moved[k] =
                                    Positions.pack(
                                            active.id, base + Positions.offset(live[k]) - runStart);
                        }
                    }
                    written += runLength;
                    i = j;
                }
            }
        }
        return written;
    }

    /**
     * Reads frame headers at increasing offsets of one segment through a block buffer, and copies
     * short runs of frames out of that block.
     */
    private final class HeaderWindow {
        private final byte[] block;
        private final ByteBuffer view;
        private RmwSegment segment;
        private long start;
        private int length;

        HeaderWindow(byte[] block) {
            this.block = block;
            this.view = ByteBuffer.wrap(block);
        }

        void reset(RmwSegment s) {
            segment = s;
            start = 0;
            length = 0;
        }

        int frameLength(long offset) throws IOException {
            if (offset < start || offset + FrameDescriptor.HEADER_LENGTH > start + length) {
                long left = segment.size - offset;
                if (left < FrameDescriptor.HEADER_LENGTH) {
                    throw new CorruptLogException(
                            segment.path, offset, "frame header past the end");
                }
                int want = (int) Math.min(block.length, left);
                view.clear().limit(want);
                segment.readFully(offset, view);
                stats.addRead(want);
                start = offset;
                length = want;
            }
            int payload = FrameDescriptor.readIntLE(block, (int) (offset - start));
            if (payload < HEADER
                    || offset + FrameDescriptor.HEADER_LENGTH + payload > segment.size) {
                throw new CorruptLogException(segment.path, offset, "bad frame length " + payload);
            }
            return FrameDescriptor.HEADER_LENGTH + payload;
        }

        /** Makes {@code [offset, offset + count)} available in the block, if it can hold it. */
        boolean cover(long offset, long count) throws IOException {
            if (count > block.length) {
                return false;
            }
            if (offset < start || offset + count > start + length) {
                int want = (int) Math.min(block.length, segment.size - offset);
                view.clear().limit(want);
                segment.readFully(offset, view);
                stats.addRead(want);
                start = offset;
                length = want;
            }
            return true;
        }

        /**
         * Appends the covered frame at {@code position} to the active writer, its checksum verified
         * first so that a corrupt frame is not given a fresh, valid one; returns its new offset.
         */
        long copyFrame(long position) throws IOException {
            long offset = Positions.offset(position);
            int at = (int) (offset - start);
            int payload = FrameDescriptor.verify(block, at, length - at, segment.path, offset);
            return writer.appendFrame(block, at + FrameDescriptor.HEADER_LENGTH, payload);
        }
    }

    // ---------------------------------------------------------------- seal, restore, scan

    /**
     * Flushes, syncs and closes the active segment, writes a manifest and returns it with every
     * segment. Later writes go to a new segment. Compaction may later delete listed segments: copy
     * them before calling the store again.
     */
    public SealedStore seal() throws IOException {
        return seal(true);
    }

    /**
     * {@link #seal()}, fsyncing the segments and the manifest only when {@code durable}. See {@link
     * SealedStore} for when a seal need not be durable.
     */
    public SealedStore seal(boolean durable) throws IOException {
        checkOpen();
        flush();
        if (writer != null) {
            closeActive();
        }
        if (durable) {
            for (RmwSegment s : segments) {
                if (!s.synced) {
                    s.channel.force(false);
                    s.synced = true;
                }
            }
        }
        int[] ids = new int[segments.size()];
        long[] lengths = new long[segments.size()];
        List<SealedStore.SealedFile> files = new ArrayList<>(segments.size());
        for (int i = 0; i < ids.length; i++) {
            RmwSegment s = segments.get(i);
            ids[i] = s.id;
            lengths[i] = s.size;
            files.add(new SealedStore.SealedFile(s.path, s.size));
        }
        RmwManifest m =
                new RmwManifest(
                        nextSegmentId,
                        index.size(),
                        stats.liveBytes(),
                        stats.deadBytes(),
                        ids,
                        lengths);
        long id = ++manifestId;
        Path manifest = directory.resolve(String.format("%s%08d.manifest", PREFIX, id));
        ManifestFile.write(io, manifest, id, m.encode(), durable);
        if (lastManifest != null) {
            try {
                io.delete(lastManifest);
            } catch (IOException e) {
                LOG.warn("Could not delete superseded RMW manifest {}", lastManifest, e);
            }
        }
        lastManifest = manifest;
        return new SealedStore(manifest, files);
    }

    private void load(RmwManifest m, Path manifest) throws IOException {
        nextSegmentId = (int) Math.max(m.nextSegmentId(), highestIdOnDisk(SEGMENT_NAME) + 1);
        manifestId = Math.max(0, highestIdOnDisk(MANIFEST_NAME));
        try {
            for (int i = 0; i < m.segmentIds().length; i++) {
                loadSegment(m.segmentIds()[i], m.segmentLengths()[i]);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        if (index.size() != m.entryCount()
                || stats.liveBytes() != m.liveBytes()
                || stats.deadBytes() != m.deadBytes()) {
            throw new CorruptLogException(
                    manifest,
                    LogFileHeader.LENGTH,
                    "segments hold "
                            + index.size()
                            + " entries, "
                            + stats.liveBytes()
                            + " live and "
                            + stats.deadBytes()
                            + " dead bytes; the manifest expects "
                            + m.entryCount()
                            + ", "
                            + m.liveBytes()
                            + " and "
                            + m.deadBytes());
        }
    }

    private void loadSegment(int id, long length) throws IOException {
        Path path = segmentPath(id);
        try (LogReader reader = LogReader.open(io, path, FileType.RMW_VALUE_LOG, length)) {
            if (reader.fileId() != id) {
                throw new CorruptLogException(
                        path, 8, "segment id " + reader.fileId() + " in header, expected " + id);
            }
            RmwSegment segment = new RmwSegment(id, path, io.openForRead(path), length);
            segment.synced = true;
            segments.add(segment);
            FrameScanner frames = reader.scanAll(options.ioBufferBytes());
            while (frames.next()) {
                byte[] b = frames.array();
                int p = frames.payloadOffset();
                int len = frames.payloadLength();
                RmwRecordDescriptor.validate(b, p, len, path, frames.frameOffset());
                int frame = FrameDescriptor.HEADER_LENGTH + len;
                lookupPayload = b;
                lookupPayloadOffset = p;
                boolean put = RmwRecordDescriptor.kind(b, p) == RmwRecordDescriptor.PUT;
                applyToIndex(
                        put,
                        payloadHash(b, p),
                        put ? Positions.pack(id, frames.frameOffset()) : NONE,
                        frame,
                        logMatchesPayload);
            }
        }
    }

    /**
     * Applies one logged frame to the index, on flush and on restore alike: a put points the entry
     * at {@code position}, a tombstone drops it. The frame's bytes count as live (put) or dead
     * (tombstone), and the frame it supersedes, if any, moves from live to dead.
     */
    private void applyToIndex(
            boolean put, long hash, long position, int frame, KeyMatcher matches) {
        long old;
        if (put) {
            old = index.put(hash, position, matches);
            stats.addLiveBytes(frame);
        } else {
            old = index.remove(hash, matches);
            stats.addDeadBytes(frame);
        }
        if (old != NONE) {
            stats.addLiveBytes(-matchedFrameLength);
            stats.addDeadBytes(matchedFrameLength);
        }
    }

    /**
     * Visits every live entry (the namespace is passed as the window). Write-buffer entries come
     * first, then the logged entries the buffer does not shadow, segment by segment.
     */
    public void forEach(EntryVisitor visitor) throws IOException {
        checkOpen();
        for (int i = 0; i < buffer.recordCount(); i++) {
            long rec = buffer.record(i);
            if (buffer.kind(rec) != RmwRecordDescriptor.PUT) {
                continue;
            }
            int length = buffer.valueLength(rec);
            byte[] value = new byte[length];
            buffer.copyValue(rec, value, 0);
            visitor.visit(buffer.copyKey(rec), buffer.copyNamespace(rec), value, 0, length);
        }
        for (RmwSegment s : new ArrayList<>(segments)) {
            try (LogReader reader = LogReader.open(io, s.path, FileType.RMW_VALUE_LOG, s.size)) {
                FrameScanner frames = reader.scanAll(options.ioBufferBytes());
                while (frames.next()) {
                    byte[] b = frames.array();
                    int p = frames.payloadOffset();
                    if (RmwRecordDescriptor.kind(b, p) != RmwRecordDescriptor.PUT) {
                        continue;
                    }
                    long hash = payloadHash(b, p);
                    lookupPosition = Positions.pack(s.id, frames.frameOffset());
                    if (index.get(hash, isLookupPosition) == NONE) {
                        continue;
                    }
                    lookupPayload = b;
                    lookupPayloadOffset = p;
                    if (buffer.find(hash, bufferMatchesPayload) != NONE) {
                        continue;
                    }
                    int keyLen = RmwRecordDescriptor.keyLength(b, p);
                    int nsLen = RmwRecordDescriptor.namespaceLength(b, p);
                    int from = p + HEADER;
                    byte[] key = Arrays.copyOfRange(b, from, from + keyLen);
                    byte[] ns = Arrays.copyOfRange(b, from + keyLen, from + keyLen + nsLen);
                    visitor.visit(
                            key,
                            ns,
                            b,
                            from + keyLen + nsLen,
                            RmwRecordDescriptor.valueLength(b, p));
                }
            }
        }
    }

    // ---------------------------------------------------------------- reads and matching

    /** Index lookup whose matcher reads frames; the accepted frame is left in {@link #scratch}. */
    private long lookupLog(long hash, KeyMatcher matcher) throws IOException {
        try {
            return index.get(hash, matcher);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Reads and verifies the frame at {@code pos} into {@link #scratch}; returns its length. */
    private int readFrame(long pos) throws IOException {
        scratchFramePos = NONE;
        RmwSegment s = segment(Positions.segment(pos));
        long offset = Positions.offset(pos);
        long left = s.size - offset;
        if (offset < LogFileHeader.LENGTH || left < FrameDescriptor.HEADER_LENGTH) {
            throw new CorruptLogException(
                    s.path, offset, "frame offset outside the file (size " + s.size + ")");
        }
        int first = (int) Math.min(left, FIRST_READ);
        scratchView.clear().limit(first);
        s.readFully(offset, scratchView);
        int payload = FrameDescriptor.readIntLE(scratch, 0);
        if (payload < 0 || FrameDescriptor.HEADER_LENGTH + (long) payload > left) {
            throw new CorruptLogException(s.path, offset, "bad frame length " + payload);
        }
        int frame = FrameDescriptor.HEADER_LENGTH + payload;
        if (frame > first) {
            ensureScratch(frame);
            scratchView.clear().position(first).limit(frame);
            s.readFully(offset + first, scratchView);
        }
        stats.addRead(Math.max(first, frame));
        FrameDescriptor.verify(scratch, 0, frame, s.path, offset);
        RmwRecordDescriptor.validate(scratch, FRAME_PAYLOAD, payload, s.path, offset);
        scratchFramePos = pos;
        scratchFrameLength = frame;
        return frame;
    }

    private int readFrameUnchecked(long pos) {
        try {
            return readFrame(pos);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private boolean bufferMatchesKey(long rec) {
        return buffer.keyEquals(rec, lookupKey, lookupNamespace);
    }

    private boolean bufferMatchesPayload(long rec) {
        return buffer.keyEquals(rec, lookupPayload, lookupPayloadOffset);
    }

    private boolean logMatchesKey(long pos) {
        int frame = readFrameUnchecked(pos);
        if (scratchHoldsKey(lookupKey, lookupNamespace)) {
            matchedFrameLength = frame;
            return true;
        }
        return false;
    }

    private boolean logMatchesRecord(long pos) {
        if (pos == buffer.previousPosition(lookupRecord)) {
            // That frame was read and matched when the record was created: no read needed.
            matchedFrameLength = buffer.previousFrameLength(lookupRecord);
            return true;
        }
        int frame = readFrameUnchecked(pos);
        if (buffer.keyEquals(lookupRecord, scratch, FRAME_PAYLOAD)) {
            matchedFrameLength = frame;
            return true;
        }
        return false;
    }

    private boolean logMatchesPayload(long pos) {
        int frame = readFrameUnchecked(pos);
        byte[] b = lookupPayload;
        int p = lookupPayloadOffset;
        int keyLen = RmwRecordDescriptor.keyLength(b, p);
        int nsLen = RmwRecordDescriptor.namespaceLength(b, p);
        if (RmwRecordDescriptor.keyLength(scratch, FRAME_PAYLOAD) == keyLen
                && RmwRecordDescriptor.namespaceLength(scratch, FRAME_PAYLOAD) == nsLen
                && Arrays.equals(
                        scratch,
                        FRAME_PAYLOAD + HEADER,
                        FRAME_PAYLOAD + HEADER + keyLen + nsLen,
                        b,
                        p + HEADER,
                        p + HEADER + keyLen + nsLen)) {
            matchedFrameLength = frame;
            return true;
        }
        return false;
    }

    /** Whether {@link #scratch} holds a verified frame of (key, namespace). */
    private boolean scratchHoldsKey(byte[] key, byte[] namespace) {
        if (scratchFramePos == NONE) {
            return false;
        }
        int p = FRAME_PAYLOAD;
        int keyLen = RmwRecordDescriptor.keyLength(scratch, p);
        int nsLen = RmwRecordDescriptor.namespaceLength(scratch, p);
        int from = p + HEADER;
        return keyLen == key.length
                && nsLen == namespace.length
                && Arrays.equals(scratch, from, from + keyLen, key, 0, keyLen)
                && Arrays.equals(
                        scratch, from + keyLen, from + keyLen + nsLen, namespace, 0, nsLen);
    }

    private long hash(byte[] key, byte[] namespace) {
        return RmwRecordDescriptor.hash(key, namespace) & hashMask;
    }

    private long payloadHash(byte[] b, int p) {
        int keyLen = RmwRecordDescriptor.keyLength(b, p);
        int nsLen = RmwRecordDescriptor.namespaceLength(b, p);
        return RmwRecordDescriptor.hash(b, p + HEADER, keyLen, b, p + HEADER + keyLen, nsLen)
                & hashMask;
    }

    private void setLookup(byte[] key, byte[] namespace) {
        lookupKey = Checks.checkNotNull("key", key);
        lookupNamespace = Checks.checkNotNull("namespace", namespace);
    }

    /** Grows {@link #scratch} (keeping its content) to at least {@code need} bytes. */
    private void ensureScratch(int need) {
        if (need <= scratch.length) {
            return;
        }
        int bigger = Math.max(need, (int) Math.min(Integer.MAX_VALUE - 8, 2L * scratch.length));
        budget.reserve(bigger - scratchReserved, "RMW read buffer");
        scratchReserved = bigger;
        scratch = Arrays.copyOf(scratch, bigger);
        scratchView = ByteBuffer.wrap(scratch);
    }

    private RmwSegment segment(int id) {
        int lo = 0;
        int hi = segments.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int at = segments.get(mid).id;
            if (at < id) {
                lo = mid + 1;
            } else if (at > id) {
                hi = mid - 1;
            } else {
                return segments.get(mid);
            }
        }
        throw new IllegalStateException("no RMW segment " + id + " in " + directory);
    }

    // ---------------------------------------------------------------- files

    private Path segmentPath(int id) {
        return directory.resolve(String.format("%s%08d.log", PREFIX, id));
    }

    private void checkNoStoreFiles() throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, PREFIX + "*")) {
            for (Path f : files) {
                throw new IOException(
                        "Cannot open a new RMW store in "
                                + directory
                                + ": it already holds "
                                + f.getFileName()
                                + " (use restore)");
            }
        }
    }

    /**
     * The highest id among the directory's files named like {@code pattern}, or -1. Files written
     * after the seal being restored (or by an older seal) must not be overwritten: new ids go
     * above.
     */
    private long highestIdOnDisk(Pattern pattern) throws IOException {
        long highest = -1;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, PREFIX + "*")) {
            for (Path f : files) {
                Matcher m = pattern.matcher(f.getFileName().toString());
                if (m.matches()) {
                    highest = Math.max(highest, Long.parseLong(m.group(1)));
                }
            }
        }
        return highest;
    }

    /** Unlike {@link IoFailures#closeQuietly}, also collects runtime failures of the close. */
    private static void closeQuietly(LogWriter w, Exception failure) {
        try {
            w.close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    // ---------------------------------------------------------------- lifecycle, metrics

    public StoreStats stats() {
        if (!closed) {
            stats.setIndexPageCounts(index.pageReads(), index.pageWrites());
        }
        return stats;
    }

    /** Bytes this store holds from its budget. */
    public long memoryUsed() {
        return buffer.memoryBytes() + index.memoryBytes() + staging.capacity() + scratchReserved;
    }

    public RmwStoreOptions options() {
        return options;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("RMW store in " + directory + " is closed");
        }
    }

    /** Closes every file and returns every byte to the budget. Does not flush. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException failure = null;
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException e) {
                failure = e;
            }
            writer = null;
        }
        for (RmwSegment s : segments) {
            try {
                s.channel.close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
        }
        segments.clear();
        buffer.close();
        try {
            index.close();
        } catch (UncheckedIOException e) {
            failure = chain(failure, e.getCause());
        }
        staging.close();
        budget.release(scratchReserved);
        scratchReserved = 0;
        if (failure != null) {
            throw failure;
        }
    }
}
