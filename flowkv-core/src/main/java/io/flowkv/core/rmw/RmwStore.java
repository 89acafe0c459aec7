package io.flowkv.core.rmw;

import io.flowkv.core.Checks;
import io.flowkv.core.CorruptLogException;
import io.flowkv.core.EntryVisitor;
import io.flowkv.core.Jitter;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.ValueStore;
import io.flowkv.core.index.LongHashIndex.KeyMatcher;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
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
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.flowkv.core.log.IoFailures.chain;
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
public final class RmwStore implements ValueStore {
    private static final Logger LOG = LoggerFactory.getLogger(RmwStore.class);

    private static final long NONE = Positions.NONE;
    private static final String PREFIX = RmwValueLog.PREFIX;

    /** The index's page files: scratch, not store files (so not "rmw-"), never in a seal. */
    private static final String INDEX_FILE_PREFIX = "index-";

    private static final Pattern SEGMENT_NAME = Pattern.compile("rmw-(\\d{8})\\.log");
    private static final Pattern MANIFEST_NAME = Pattern.compile("rmw-(\\d{8})\\.manifest");

    private static final int MAX_ARENA_CHUNK = 1 << 20;

    /** Values from the write buffer up to this size are copied into a buffer kept for the next. */
    private static final int KEPT_VALUE_BYTES = 64 << 10;

    private final RmwStoreOptions options;
    private final MemoryBudget budget;
    private final FileIo io;
    private final Path directory;
    private final Jitter jitter;
    private final StoreStats stats = new StoreStats();

    private final RmwWriteBuffer buffer;
    private final PagedHashIndex index;
    private final IoBuffer staging;

    private final RmwValueLog log;
    private final RmwCompactor compactor;
    private long manifestId;
    private Path lastManifest;

    private final long flushThreshold;
    private final long hashMask;
    private double compactionThreshold;

    /** Holds the last frame read from the log, verified. */
    private final RmwFrameReader frames;

    /** Where {@link #locate} put the value: the frame reader's buffer or {@link #bufferedValue}. */
    private byte[] foundIn;

    /** A value found in the write buffer, copied out; kept for values up to 64 KiB. */
    private byte[] bufferedValue = new byte[64];

    /** Length of the value {@link #locate} found. */
    private int foundLength;

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
        RmwValueLog valueLog;
        RmwFrameReader reader;
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
            valueLog = new RmwValueLog(io, directory, stage, options.segmentRollBytes(), stats);
            reader = new RmwFrameReader(valueLog, stats);
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
        this.log = valueLog;
        this.frames = reader;
        this.compactor =
                new RmwCompactor(
                        log,
                        idx,
                        stats,
                        io,
                        options.ioBufferBytes(),
                        hashMask,
                        budget,
                        options.writeBufferBytes());
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
    @Override
    public boolean get(byte[] key, byte[] namespace, ValueConsumer consumer) throws IOException {
        int at = locate(key, namespace);
        if (at < 0) {
            return false;
        }
        consumer.accept(foundIn, at, foundLength);
        return true;
    }

    /** The value of (key, namespace) as a new array, or null. */
    public byte[] get(byte[] key, byte[] namespace) throws IOException {
        int at = locate(key, namespace);
        return at < 0 ? null : Arrays.copyOfRange(foundIn, at, at + foundLength);
    }

    /**
     * Puts the value into {@link #foundIn}; returns its offset there or -1 if absent. A value from
     * the write buffer is copied into a buffer of its own, so that the frame reader keeps the last
     * frame it verified (see {@link #readFrameUnchecked}).
     */
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
            byte[] into = bufferedValue;
            if (into.length < foundLength) {
                into = new byte[foundLength];
                if (foundLength <= KEPT_VALUE_BYTES) {
                    bufferedValue = into;
                }
            }
            buffer.copyValue(rec, into, 0);
            foundIn = into;
            return 0;
        }
        if (lookupLog(hash, logMatchesKey) == NONE) {
            return -1;
        }
        foundIn = frames.array();
        int payload = FRAME_PAYLOAD;
        foundLength = RmwRecordDescriptor.valueLength(frames.array(), payload);
        return payload + HEADER + key.length + namespace.length;
    }

    /** Sets (key, namespace) to {@code value}. */
    @Override
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
        } else if (frames.holds(key, namespace)) {
            // The usual read-modify-write: the get that came first left the old frame in the
            // read buffer.
            buffer.setPrevious(pos, frames.position(), frames.length());
        }
        buffer.setValue(pos, value);
        publish(pos, key, namespace, value);
    }

    /** Removes (key, namespace); returns whether it had a value. */
    @Override
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
    @Override
    public void flush() throws IOException {
        checkOpen();
        if (buffer.liveCount() == 0) {
            buffer.reset();
            flushEpoch++;
            return;
        }
        log.ensureWriter();
        LogWriter writer = log.writer();
        int activeId = log.active().id;
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
                buffer.setNewPosition(rec, Positions.pack(activeId, offset));
                written += FrameDescriptor.HEADER_LENGTH + payload;
            }
            log.flushWriter();
        } catch (IOException | RuntimeException e) {
            log.rollBack(goodSize, e);
            throw e;
        }
        // Only now does the index change: a failed write above left it untouched. Once the index
        // spills, records go in its page order: each cold page is read and dirtied once per flush,
        // not once per record (while it fits, the sort would cost more than it saves).
        if (index.spills()) {
            buffer.sortByIndexPlacement();
        }
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
        } finally {
            stats.setEntries(index.size());
        }
        buffer.reset();
        flushEpoch++;
        stats.addFlushed(written);
        maybeCompact();
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

    /** Moves every live frame into new segments and deletes the old ones ({@link RmwCompactor}). */
    private void compactNow() throws IOException {
        try {
            compactor.compact();
        } finally {
            // Frames moved: a verified frame cached by position may be gone.
            frames.forget();
        }
        compactionThreshold = jitter.scaleAmplification(options.maxSpaceAmplification());
    }

    // ---------------------------------------------------------------- seal, restore, scan

    /**
     * Flushes, syncs and closes the active segment, writes a manifest and returns it with every
     * segment. Later writes go to a new segment. Compaction may later delete listed segments: copy
     * them before calling the store again.
     *
     * <p>Fsyncs the files and the manifest only when {@code durable}; see {@link SealedStore}.
     */
    @Override
    public SealedStore seal(boolean durable) throws IOException {
        checkOpen();
        flush();
        if (log.writer() != null) {
            log.closeActive();
        }
        if (durable) {
            log.syncAll();
        }
        List<RmwSegment> segments = log.segments();
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
                        log.nextSegmentId(),
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
        log.nextSegmentId((int) Math.max(m.nextSegmentId(), highestIdOnDisk(SEGMENT_NAME) + 1));
        manifestId = Math.max(0, highestIdOnDisk(MANIFEST_NAME));
        try {
            for (int i = 0; i < m.segmentIds().length; i++) {
                loadSegment(m.segmentIds()[i], m.segmentLengths()[i]);
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        stats.setEntries(index.size());
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
        Path path = log.segmentPath(id);
        try (LogReader reader = LogReader.open(io, path, FileType.RMW_VALUE_LOG, length)) {
            if (reader.fileId() != id) {
                throw new CorruptLogException(
                        path, 8, "segment id " + reader.fileId() + " in header, expected " + id);
            }
            RmwSegment segment = new RmwSegment(id, path, io.openForRead(path), length);
            segment.synced = true;
            log.add(segment);
            FrameScanner frames = reader.scanAll(options.ioBufferBytes());
            while (frames.next()) {
                loadFrame(id, path, frames);
            }
        }
    }

    /**
     * Applies the frame {@code frames} is at to the index. A method of its own so that the JIT
     * compiles it after a few hundred frames: a restore loads each segment once per JVM, too few
     * loop iterations for the loop itself to be compiled.
     */
    private void loadFrame(int id, Path path, FrameScanner frames) throws IOException {
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
    @Override
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
        for (RmwSegment s : new ArrayList<>(log.segments())) {
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

    /** Index lookup whose matcher reads frames; the accepted frame is left in the read buffer. */
    private long lookupLog(long hash, KeyMatcher matcher) throws IOException {
        try {
            return index.get(hash, matcher);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Reads and verifies the frame at {@code pos}, unless the read buffer holds it verified
     * already: a map state's iteration gets an entry and then removes it, and the remove's key
     * check would read the same frame again.
     */
    private int readFrameUnchecked(long pos) {
        if (frames.position() == pos) {
            return frames.length();
        }
        try {
            return frames.read(pos);
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
        if (frames.holds(lookupKey, lookupNamespace)) {
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
        if (buffer.keyEquals(lookupRecord, frames.array(), FRAME_PAYLOAD)) {
            matchedFrameLength = frame;
            return true;
        }
        return false;
    }

    private boolean logMatchesPayload(long pos) {
        int frame = readFrameUnchecked(pos);
        if (frames.holdsKeyOf(lookupPayload, lookupPayloadOffset)) {
            matchedFrameLength = frame;
            return true;
        }
        return false;
    }

    private long hash(byte[] key, byte[] namespace) {
        return RmwRecordDescriptor.hash(key, namespace) & hashMask;
    }

    private long payloadHash(byte[] b, int p) {
        return RmwRecordDescriptor.payloadHash(b, p) & hashMask;
    }

    private void setLookup(byte[] key, byte[] namespace) {
        lookupKey = Checks.checkNotNull("key", key);
        lookupNamespace = Checks.checkNotNull("namespace", namespace);
    }

    // ---------------------------------------------------------------- files

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

    // ---------------------------------------------------------------- lifecycle, metrics

    @Override
    public StoreStats stats() {
        if (!closed) {
            stats.setIndexPageCounts(index.pageReads(), index.pageWrites());
        }
        return stats;
    }

    /** Bytes this store holds from its budget. */
    @Override
    public long memoryUsed() {
        return buffer.memoryBytes() + index.memoryBytes() + staging.capacity();
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
        IOException failure = log.close(null);
        buffer.close();
        try {
            index.close();
        } catch (UncheckedIOException e) {
            failure = chain(failure, e.getCause());
        }
        staging.close();
        if (failure != null) {
            throw failure;
        }
    }
}
