package io.flowkv.core.rmw;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.StoreStats;
import io.flowkv.core.index.LongHashIndex.KeyMatcher;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static io.flowkv.core.rmw.RmwRecordDescriptor.HEADER;

/**
 * Compaction of the RMW value log: moves every live frame into new segments, a batch at a time, in
 * bounded memory, and deletes the old segments.
 *
 * <pre>
 *   old segments: [put a][put b'][tomb c][put b][put d] ...   scanned in order
 *   batch ({@link CompactionBatch}): every put frame met, (hash, position), in log order
 *   1. in index placement order: live = the index still points at the frame   (page after page)
 *   2. in log order, runs of adjacent live frames:
 *       short run  (< 4 KiB): copied from the block its headers came in, checksum verified
 *       long run:             one transferTo, checksums kept (a corrupt frame is still caught
 *                             when read)
 *      written and flushed
 *   3. in index placement order: the index is pointed at the copies             (page after page)
 *   an old segment all of whose frames went through a finished batch is deleted
 * </pre>
 *
 * Once the index spills to its page file, an entry looked up in log order costs a random page read
 * (and a write when its page is evicted dirty); in placement order a batch reads each page it needs
 * once, in file order. The batch takes as much of the budget as a full write buffer would (the
 * write buffer is empty while a compaction runs), less if the budget refuses.
 *
 * <p>A failure leaves the store consistent: the batch's output is rolled back, entries already
 * moved are read from their copies and the rest from the old segments.
 */
final class RmwCompactor {
    /** Runs of live frames shorter than this are copied through memory, longer ones transferred. */
    private static final int COPY_RUN_LIMIT = 4096;

    private final RmwValueLog log;
    private final PagedHashIndex index;
    private final StoreStats stats;
    private final FileIo io;
    private final int ioBufferBytes;
    private final long hashMask;
    private final MemoryBudget budget;
    private final long batchBytes;

    /** The position {@link #isPosition} accepts. */
    private long position;

    private final KeyMatcher isPosition = v -> v == position;

    /** Old segments scanned to their end whose last batch has not been moved yet. */
    private final List<RmwSegment> scanned = new ArrayList<>();

    /** The frame bytes of {@link #scanned}. */
    private long scannedBytes;

    RmwCompactor(
            RmwValueLog log,
            PagedHashIndex index,
            StoreStats stats,
            FileIo io,
            int ioBufferBytes,
            long hashMask,
            MemoryBudget budget,
            long batchBytes) {
        this.log = log;
        this.index = index;
        this.stats = stats;
        this.io = io;
        this.ioBufferBytes = ioBufferBytes;
        this.hashMask = hashMask;
        this.budget = budget;
        this.batchBytes = batchBytes;
    }

    /** Moves every live frame and deletes every old segment; returns the bytes moved. */
    long compact() throws IOException {
        if (log.writer() != null) {
            log.closeActive();
        }
        long written = 0;
        try (CompactionBatch batch = CompactionBatch.allocate(budget, batchBytes)) {
            for (RmwSegment source : new ArrayList<>(log.segments())) {
                long frameBytes = 0;
                try (LogReader reader =
                        LogReader.open(io, source.path, FileType.RMW_VALUE_LOG, source.size)) {
                    FrameScanner frames = reader.scanAll(ioBufferBytes);
                    while (frames.next()) {
                        byte[] b = frames.array();
                        int p = frames.payloadOffset();
                        frameBytes += FrameDescriptor.HEADER_LENGTH + frames.payloadLength();
                        if (RmwRecordDescriptor.kind(b, p) != RmwRecordDescriptor.PUT) {
                            continue;
                        }
                        batch.add(
                                RmwRecordDescriptor.payloadHash(b, p) & hashMask,
                                Positions.pack(source.id, frames.frameOffset()));
                        if (batch.isFull()) {
                            written += moveBatch(batch);
                            deleteScanned();
                        }
                    }
                }
                scanned.add(source);
                scannedBytes += frameBytes;
            }
            written += moveBatch(batch);
            deleteScanned();
        } finally {
            scanned.clear();
            scannedBytes = 0;
        }
        if (log.writer() != null) {
            log.flushWriter();
        }
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
        return written;
    }

    /** Deletes the wholly scanned segments: every frame of them went through a finished batch. */
    private void deleteScanned() throws IOException {
        while (!scanned.isEmpty()) {
            RmwSegment s = scanned.remove(0);
            log.delete(s);
        }
        // Every frame of a deleted segment was dead by now: moved, overwritten or removed.
        stats.addDeadBytes(-scannedBytes);
        scannedBytes = 0;
    }

    private long lookup(long hash) throws IOException {
        try {
            return index.get(hash, isPosition);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Finds which entries of the batch are live, copies their frames to the active output, then
     * points the index at the copies, and empties the batch. Each moved frame leaves one dead copy,
     * old or new, whatever happens to the index updates.
     */
    private long moveBatch(CompactionBatch batch) throws IOException {
        int n = batch.size();
        if (n == 0) {
            return 0;
        }
        batch.sortByPlacement();
        int live = 0;
        for (int k = 0; k < n; k++) {
            int i = batch.inPlacementOrder(k);
            position = batch.position(i);
            if (lookup(batch.hash(i)) == Positions.NONE) {
                batch.markDead(i);
            } else {
                live++;
            }
        }
        long bytes = 0;
        if (live > 0) {
            int segmentsBefore = log.segments().size();
            long goodSize = log.writer() == null ? -1 : log.writer().size();
            try {
                bytes = move(batch);
                log.flushWriter();
            } catch (IOException | RuntimeException e) {
                log.abandonSince(segmentsBefore, goodSize, e);
                throw e;
            }
            stats.addDeadBytes(bytes);
            for (int k = 0; k < n; k++) {
                int i = batch.inPlacementOrder(k);
                position = batch.position(i);
                if (position == Positions.NONE) {
                    continue;
                }
                try {
                    index.put(batch.hash(i), batch.moved(i), isPosition);
                } catch (UncheckedIOException e) {
                    throw e.getCause();
                }
            }
        }
        batch.clear();
        return bytes;
    }

    /**
     * Copies the frames of the batch's live entries, in log order, to the active segment, starting
     * new ones as segments fill; sets each entry's new position.
     */
    private long move(CompactionBatch batch) throws IOException {
        HeaderWindow headers = new HeaderWindow(new byte[ioBufferBytes]);
        int n = batch.size();
        long written = 0;
        int i = nextLive(batch, 0);
        while (i < n) {
            RmwSegment source = log.segment(Positions.segment(batch.position(i)));
            headers.reset(source);
            try (LogReader reader =
                    LogReader.open(io, source.path, FileType.RMW_VALUE_LOG, source.size)) {
                while (i < n && Positions.segment(batch.position(i)) == source.id) {
                    long runStart = Positions.offset(batch.position(i));
                    long runEnd = runStart + headers.frameLength(runStart);
                    int j = nextLive(batch, i + 1);
                    while (j < n
                            && Positions.segment(batch.position(j)) == source.id
                            && Positions.offset(batch.position(j)) == runEnd) {
                        runEnd += headers.frameLength(runEnd);
                        j = nextLive(batch, j + 1);
                    }
                    log.ensureWriter();
                    LogWriter writer = log.writer();
                    int activeId = log.active().id;
                    long runLength = runEnd - runStart;
                    boolean copy = runLength < COPY_RUN_LIMIT && headers.cover(runStart, runLength);
                    long base = copy ? 0 : writer.transferFrom(reader, runStart, runLength);
                    for (int k = i; k < j; k = nextLive(batch, k + 1)) {
                        long at = batch.position(k);
                        // A short run costs less copied from the block its headers came in than a
                        // transferTo system call (and two more for position and size) would.
                        long offset =
                                copy
                                        ? headers.copyFrame(at, writer)
                                        : base + Positions.offset(at) - runStart;
                        batch.setMoved(k, Positions.pack(activeId, offset));
                    }
                    written += runLength;
                    i = j;
                }
            }
        }
        return written;
    }

    /** The first live entry at or after {@code i}, or the batch's size. */
    private static int nextLive(CompactionBatch batch, int i) {
        int n = batch.size();
        while (i < n && batch.position(i) == Positions.NONE) {
            i++;
        }
        return i;
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
         * Appends the covered frame at {@code position} to {@code writer}, its checksum verified
         * first so that a corrupt frame is not given a fresh, valid one; returns its new offset.
         */
        long copyFrame(long position, LogWriter writer) throws IOException {
            long offset = Positions.offset(position);
            int at = (int) (offset - start);
            int payload = FrameDescriptor.verify(block, at, length - at, segment.path, offset);
            return writer.appendFrame(block, at + FrameDescriptor.HEADER_LENGTH, payload);
        }
    }
}
