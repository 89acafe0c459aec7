package io.flowkv.core.aar;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.index.Hashing;
import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapArena;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a window partition straight from its segments, frame by frame, for a partition that does
 * not fit in the budget even alone ({@link PartitionLoader#load} returned null). A window larger
 * than the managed memory is what FlowKV exists for, so reads must not fail for lack of memory;
 * they get slower instead: every read is a scan of the partition's segments with one I/O buffer.
 *
 * <p>The replay rule is the loaded view's: a REMOVE of a key kills the key's values before it, in
 * the segments and (for a buffered REMOVE) in all of them. So a read first finds the key's last
 * REMOVE, then emits the key's values after it, in log order:
 *
 * <ul>
 *   <li>{@link #emit}: two scans for one key (the second starts at the frame of the key's first
 *       live value); no memory beyond the I/O buffer.
 *   <li>{@link #liveBytes} (for a remove): one scan summing the key's live record bytes.
 *   <li>{@link #forEach}: a first scan records the last REMOVE position of every removed key in a
 *       budget-charged table (memory proportional to removed keys only), a second scan emits the
 *       values after them. If even that table does not fit, each value is checked by a scan for a
 *       later REMOVE of its key: quadratic, but correct and bounded.
 * </ul>
 *
 * Positions are {@link Positions packed} (segment index, file offset of the record); they order the
 * records of a partition. Records are checked as the loader checks them.
 */
final class PartitionScanner {
    /** After every record of the segments: where a buffered REMOVE sits. */
    private static final long AFTER_SEGMENTS = Long.MAX_VALUE;

    /** Removed-key table entry: last REMOVE position (8), key length (4), key bytes. */
    private static final int REMOVED_POSITION_OFFSET = 0;

    private static final int REMOVED_KEY_LENGTH_OFFSET = 8;
    private static final int REMOVED_KEY_OFFSET = 12;

    /** Sees one checked record; {@code b} is valid during the call only. */
    @FunctionalInterface
    private interface RecordVisitor {
        void visit(
                byte type,
                byte[] b,
                int keyAt,
                int keyLength,
                int valueLength,
                long position,
                long frame)
                throws IOException;
    }

    private final MemoryBudget budget;
    private final FileIo io;
    private final SegmentFiles files;
    private final WriteBuffer buffer;
    private final int ioBufferBytes;
    private final StoreStats stats;
    private final LoadedPartition.MemoryRelief relief;

    /** State of the scan in progress, read by the visitors (single thread). */
    private long lastRemove;

    private long firstLive;
    private long firstLiveFrame;
    private long bytes;
    private boolean laterRemove;

    PartitionScanner(
            MemoryBudget budget,
            FileIo io,
            SegmentFiles files,
            WriteBuffer buffer,
            int ioBufferBytes,
            StoreStats stats,
            LoadedPartition.MemoryRelief relief) {
        this.budget = budget;
        this.io = io;
        this.files = files;
        this.buffer = buffer;
        this.ioBufferBytes = ioBufferBytes;
        this.stats = stats;
        this.relief = relief;
    }

    /** Passes the key's live values in the segments to {@code consumer}, in log order. */
    boolean emit(AarPartition p, long hash, byte[] key, ValueConsumer consumer) throws IOException {
        if (buffer.hasRemove(p, hash, key)) {
            // Every value in the segments precedes that REMOVE.
            return false;
        }
        lastRemove = Positions.NONE;
        firstLive = Positions.NONE;
        firstLiveFrame = Positions.NONE;
        scan(
                p,
                Positions.pack(0, LogFileHeader.LENGTH),
                (type, b, keyAt, keyLength, valueLength, position, frame) -> {
                    if (!isKey(b, keyAt, keyLength, key)) {
                        return;
                    }
                    if (type == AarRecordDescriptor.REMOVE) {
                        lastRemove = position;
                        firstLive = Positions.NONE;
                    } else if (firstLive == Positions.NONE) {
                        firstLive = position;
                        firstLiveFrame = frame;
                    }
                });
        if (firstLive == Positions.NONE) {
            return false;
        }
        long after = lastRemove;
        scan(
                p,
                firstLiveFrame,
                (type, b, keyAt, keyLength, valueLength, position, frame) -> {
                    if (type == AarRecordDescriptor.APPEND
                            && position > after
                            && isKey(b, keyAt, keyLength, key)) {
                        consumer.accept(b, keyAt + keyLength, valueLength);
                    }
                });
        return true;
    }

    /**
     * Log bytes of the key's live values in the segments (0 if none): what a remove of the key
     * turns dead.
     */
    long liveBytes(AarPartition p, long hash, byte[] key) throws IOException {
        if (buffer.hasRemove(p, hash, key)) {
            return 0;
        }
        bytes = 0;
        scan(
                p,
                Positions.pack(0, LogFileHeader.LENGTH),
                (type, b, keyAt, keyLength, valueLength, position, frame) -> {
                    if (isKey(b, keyAt, keyLength, key)) {
                        bytes =
                                type == AarRecordDescriptor.REMOVE
                                        ? 0
                                        : bytes
                                                + AarRecordDescriptor.logRecordLength(
                                                        keyLength, valueLength);
                    }
                });
        return bytes;
    }

    /** Visits every live value in the segments, each key's in log order (a snapshot path). */
    void forEach(AarPartition p, byte[] window, EntryVisitor visitor) throws IOException {
        RemovedKeys removed = collectRemoves(p);
        if (removed == null) {
            forEachCheckingEachValue(p, window, visitor);
            return;
        }
        try {
            scan(
                    p,
                    Positions.pack(0, LogFileHeader.LENGTH),
                    (type, b, keyAt, keyLength, valueLength, position, frame) -> {
                        if (type == AarRecordDescriptor.APPEND
                                && position > removed.lastRemove(b, keyAt, keyLength)) {
                            visit(window, visitor, b, keyAt, keyLength, valueLength);
                        }
                    });
        } finally {
            removed.close();
        }
    }

    /** The last REMOVE of every removed key, or null if the table does not fit in the budget. */
    private RemovedKeys collectRemoves(AarPartition p) throws IOException {
        while (true) {
            RemovedKeys removed = newRemovedKeys();
            if (removed == null) {
                return null;
            }
            // Making room may flush, which moves buffered records (REMOVEs too) into the segments
            // behind the scan: collect again from the new content then.
            int segments = p.segmentCount();
            long lastLength = p.length(segments - 1);
            try {
                scan(
                        p,
                        Positions.pack(0, LogFileHeader.LENGTH),
                        (type, b, keyAt, keyLength, valueLength, position, frame) -> {
                            if (type == AarRecordDescriptor.REMOVE) {
                                removed.put(b, keyAt, keyLength, position);
                            }
                        });
                if (p.segmentCount() == segments && p.length(segments - 1) == lastLength) {
                    // Copy the buffered REMOVEs out first: growing the table may flush, and a
                    // flush resets the buffer under the chain being walked.
                    List<byte[]> buffered = new ArrayList<>();
                    buffer.forEachRemove(
                            p,
                            (hash, b, off, len) ->
                                    buffered.add(Arrays.copyOfRange(b, off, off + len)));
                    for (byte[] key : buffered) {
                        removed.put(key, 0, key.length, AFTER_SEGMENTS);
                    }
                    if (p.segmentCount() == segments && p.length(segments - 1) == lastLength) {
                        return removed;
                    }
                }
            } catch (MemoryBudgetExceededException e) {
                removed.close();
                return null;
            } catch (IOException | RuntimeException e) {
                removed.close();
                throw e;
            }
            removed.close();
        }
    }

    private RemovedKeys newRemovedKeys() throws IOException {
        while (true) {
            try {
                return new RemovedKeys();
            } catch (MemoryBudgetExceededException e) {
                if (!relief.relieve()) {
                    return null;
                }
            }
        }
    }

    private void forEachCheckingEachValue(AarPartition p, byte[] window, EntryVisitor visitor)
            throws IOException {
        scan(
                p,
                Positions.pack(0, LogFileHeader.LENGTH),
                (type, b, keyAt, keyLength, valueLength, position, frame) -> {
                    if (type != AarRecordDescriptor.APPEND) {
                        return;
                    }
                    long hash = Hashing.hash64(b, keyAt, keyLength);
                    byte[] key = new byte[keyLength];
                    System.arraycopy(b, keyAt, key, 0, keyLength);
                    if (!buffer.hasRemove(p, hash, key)
                            && !hasRemoveAfter(p, key, frame, position)) {
                        visit(window, visitor, b, keyAt, keyLength, valueLength);
                    }
                });
    }

    /**
     * Whether the segments hold a REMOVE of the key after {@code position}, scanning from its
     * frame. A second scanner (and I/O buffer) while the caller's scan is open: this path runs only
     * when the budget is exhausted, and heap I/O buffers are not what exhausted it.
     */
    private boolean hasRemoveAfter(AarPartition p, byte[] key, long frame, long position)
            throws IOException {
        laterRemove = false;
        scan(
                p,
                frame,
                (type, b, keyAt, keyLength, valueLength, at, f) -> {
                    if (type == AarRecordDescriptor.REMOVE
                            && at > position
                            && isKey(b, keyAt, keyLength, key)) {
                        laterRemove = true;
                    }
                });
        return laterRemove;
    }

    private static void visit(
            byte[] window,
            EntryVisitor visitor,
            byte[] b,
            int keyAt,
            int keyLength,
            int valueLength) {
        byte[] key = new byte[keyLength];
        System.arraycopy(b, keyAt, key, 0, keyLength);
        visitor.visit(key, window, b, keyAt + keyLength, valueLength);
    }

    /**
     * Calls {@code visitor} for every record from the frame at packed position {@code from} to the
     * end of the partition's segments.
     */
    private void scan(AarPartition p, long from, RecordVisitor visitor) throws IOException {
        for (int s = Positions.segment(from); s < p.segmentCount(); s++) {
            long fileId = p.fileId(s);
            long start =
                    s == Positions.segment(from) ? Positions.offset(from) : LogFileHeader.LENGTH;
            long end = p.length(s);
            if (start >= end) {
                continue;
            }
            Path file = files.path(fileId);
            try (LogReader reader = LogReader.open(io, file, FileType.AAR_WINDOW, end)) {
                PartitionLoader.checkFileId(reader, fileId);
                FrameScanner frames = reader.scan(start, end, ioBufferBytes);
                while (frames.next()) {
                    byte[] b = frames.array();
                    int off = frames.payloadOffset();
                    int stop = off + frames.payloadLength();
                    long payloadFileOffset = frames.frameOffset() + FrameDescriptor.HEADER_LENGTH;
                    long frame = Positions.pack(s, frames.frameOffset());
                    for (int at = off; at < stop; ) {
                        int length =
                                AarRecordDescriptor.checkRecord(
                                        b, at, stop, file, payloadFileOffset, off);
                        int keyLength =
                                FrameDescriptor.readIntLE(
                                        b, at + AarRecordDescriptor.KEY_LENGTH_OFFSET);
                        visitor.visit(
                                b[at + AarRecordDescriptor.TYPE_OFFSET],
                                b,
                                at + AarRecordDescriptor.LOG_HEADER_LENGTH,
                                keyLength,
                                length - AarRecordDescriptor.LOG_HEADER_LENGTH - keyLength,
                                Positions.pack(s, payloadFileOffset + (at - off)),
                                frame);
                        at += length;
                    }
                }
            }
            stats.addRead(end - start);
        }
    }

    private static boolean isKey(byte[] b, int keyAt, int keyLength, byte[] key) {
        return keyLength == key.length
                && Arrays.equals(b, keyAt, keyAt + keyLength, key, 0, key.length);
    }

    /** Key -> position of its last REMOVE, charged to the budget. */
    private final class RemovedKeys implements AutoCloseable {
        private final OffHeapArena arena = new OffHeapArena(budget, 4096);
        private final LongHashIndex index = new LongHashIndex(budget, 64);
        private final LongHashIndex.KeyMatcher matcher = this::matchesProbe;
        private byte[] probe;
        private int probeOffset;
        private int probeLength;

        void put(byte[] b, int off, int len, long position) throws IOException {
            long hash = Hashing.hash64(b, off, len);
            setProbe(b, off, len);
            long entry = index.get(hash, matcher);
            if (entry == LongHashIndex.NONE) {
                entry = allocate(REMOVED_KEY_OFFSET + len);
                arena.putInt(entry, REMOVED_KEY_LENGTH_OFFSET, len);
                arena.putBytes(entry, REMOVED_KEY_OFFSET, b, off, len);
                while (true) {
                    try {
                        setProbe(b, off, len);
                        index.put(hash, entry, matcher);
                        break;
                    } catch (MemoryBudgetExceededException e) {
                        if (!relief.relieve()) {
                            throw e;
                        }
                    }
                }
            }
            arena.putLong(entry, REMOVED_POSITION_OFFSET, position);
        }

        /** The key's last REMOVE position, or {@link Positions#NONE}. */
        long lastRemove(byte[] b, int off, int len) {
            setProbe(b, off, len);
            long entry = index.get(Hashing.hash64(b, off, len), matcher);
            return entry == LongHashIndex.NONE
                    ? Positions.NONE
                    : arena.getLong(entry, REMOVED_POSITION_OFFSET);
        }

        private long allocate(int length) throws IOException {
            while (true) {
                long pos = arena.tryAllocate(length);
                if (pos != OffHeapArena.NO_SPACE) {
                    return pos;
                }
                if (!relief.relieve()) {
                    throw new MemoryBudgetExceededException(
                            "AAR removed keys of a streamed partition",
                            length,
                            budget.available(),
                            budget.capacity());
                }
            }
        }

        private void setProbe(byte[] b, int off, int len) {
            probe = b;
            probeOffset = off;
            probeLength = len;
        }

        private boolean matchesProbe(long entry) {
            return arena.getInt(entry, REMOVED_KEY_LENGTH_OFFSET) == probeLength
                    && arena.equalsBytes(
                            entry, REMOVED_KEY_OFFSET, probe, probeOffset, probeLength);
        }

        @Override
        public void close() {
            arena.close();
            index.release();
        }
    }
}
