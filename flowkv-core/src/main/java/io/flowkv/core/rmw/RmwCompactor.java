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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;

import static io.flowkv.core.rmw.RmwRecordDescriptor.HEADER;

/**
 * Compaction of the RMW value log: moves every live frame into new segments, one old segment at a
 * time, in bounded memory, and deletes the old segments.
 *
 * <pre>
 *   old segment:  [put a][put b'][tomb c][put b][put d] ...   scanned in order
 *                    |              dead     |      |
 *                    v  live = the index still points at it  v
 *   batch of <= 4096 live positions (sorted) -> runs of adjacent frames:
 *       short run  (< 4 KiB): copied from the block its headers came in, checksum verified
 *       long run:             one transferTo, checksums kept (a corrupt frame is still caught
 *                             when read)
 *   written and flushed -> the index is pointed at the copies -> next batch
 *   a segment all of whose live frames have moved is deleted
 * </pre>
 *
 * A failure leaves the store consistent: the batch's output is rolled back, entries already moved
 * are read from their copies and the rest from the old segments.
 */
final class RmwCompactor {
    /** Live frames moved per step: bounds the working memory (24 B each). */
    private static final int BATCH = 4096;

    /** Runs of live frames shorter than this are copied through memory, longer ones transferred. */
    private static final int COPY_RUN_LIMIT = 4096;

    private final RmwValueLog log;
    private final PagedHashIndex index;
    private final StoreStats stats;
    private final FileIo io;
    private final int ioBufferBytes;
    private final long hashMask;

    /** The position {@link #isPosition} accepts. */
    private long position;

    private final KeyMatcher isPosition = v -> v == position;

    RmwCompactor(
            RmwValueLog log,
            PagedHashIndex index,
            StoreStats stats,
            FileIo io,
            int ioBufferBytes,
            long hashMask) {
        this.log = log;
        this.index = index;
        this.stats = stats;
        this.io = io;
        this.ioBufferBytes = ioBufferBytes;
        this.hashMask = hashMask;
    }

    /** Moves every live frame and deletes every old segment; returns the bytes moved. */
    long compact() throws IOException {
        if (log.writer() != null) {
            log.closeActive();
        }
        long[] live = new long[BATCH];
        long[] moved = new long[BATCH];
        long[] hashes = new long[BATCH];
        long written = 0;
        for (RmwSegment source : new ArrayList<>(log.segments())) {
            written += compactSegment(source, live, moved, hashes);
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

    /** Moves the live frames of {@code source} and deletes it; returns the bytes moved. */
    private long compactSegment(RmwSegment source, long[] live, long[] moved, long[] hashes)
            throws IOException {
        long frameBytes = 0;
        long written = 0;
        int n = 0;
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
                long hash = RmwRecordDescriptor.payloadHash(b, p) & hashMask;
                position = Positions.pack(source.id, frames.frameOffset());
                if (lookup(hash) == Positions.NONE) {
                    continue;
                }
                live[n] = position;
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
        log.delete(source);
        // Every frame of the deleted segment was dead by now: moved, overwritten or removed.
        stats.addDeadBytes(-frameBytes);
        return written;
    }

    private long lookup(long hash) throws IOException {
        try {
            return index.get(hash, isPosition);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Copies the frames at the sorted positions {@code live[0..n)} to the active output, then
     * points the index at the copies. Each moved frame leaves one dead copy, old or new, whatever
     * happens to the index updates.
     */
    private long moveBatch(long[] live, long[] moved, long[] hashes, int n) throws IOException {
        int segmentsBefore = log.segments().size();
        long goodSize = log.writer() == null ? -1 : log.writer().size();
        long bytes;
        try {
            bytes = move(live, moved, n);
            log.flushWriter();
        } catch (IOException | RuntimeException e) {
            log.abandonSince(segmentsBefore, goodSize, e);
            throw e;
        }
        stats.addDeadBytes(bytes);
        for (int k = 0; k < n; k++) {
            position = live[k];
            try {
                index.put(hashes[k], moved[k], isPosition);
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        }
        return bytes;
    }

    /**
     * Copies the frames at the sorted positions {@code live[0..n)} to the active segment, starting
     * new ones as segments fill; fills {@code moved} with their new positions.
     */
    private long move(long[] live, long[] moved, int n) throws IOException {
        HeaderWindow headers = new HeaderWindow(new byte[ioBufferBytes]);
        long written = 0;
        int i = 0;
        while (i < n) {
            RmwSegment source = log.segment(Positions.segment(live[i]));
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
                    log.ensureWriter();
                    LogWriter writer = log.writer();
                    int activeId = log.active().id;
                    long runLength = runEnd - runStart;
                    if (runLength < COPY_RUN_LIMIT && headers.cover(runStart, runLength)) {
                        // A short run costs less copied from the block its headers came in than
                        // a transferTo system call (and two more for position and size) would.
                        for (int k = i; k < j; k++) {
                            moved[k] = Positions.pack(activeId, headers.copyFrame(live[k], writer));
                        }
                    } else {
                        long base = writer.transferFrom(reader, runStart, runLength);
                        for (int k = i; k < j; k++) {
                            moved[k] =
                                    Positions.pack(
                                            activeId, base + Positions.offset(live[k]) - runStart);
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
