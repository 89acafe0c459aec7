package io.flowkv.core.queue;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogReader;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads the entries of one sorted run file in order, a block at a time, through one heap read
 * buffer: the file's size, but at most {@link #MAX_READ_BUFFER} bytes. Every block's checksum is
 * verified when it is read, and elements must ascend strictly; anything else is a {@link
 * CorruptLogException} naming the file and the block's offset.
 *
 * <p>{@link #head()} is the current element and {@link #headRecord()} its record. A failed {@link
 * #advance()} leaves the head where it was and reads the same block again when retried, so a caller
 * that retries meets the same error (or, after a transient read error, goes on) instead of skipping
 * entries.
 */
final class RunCursor implements Closeable {
    static final int MAX_READ_BUFFER = 16 << 10;

    private final FileIo io;
    private final Path file;
    private final long runId;
    private final long size;
    private final LogReader reader;
    private FrameScanner frames;

    private byte[] block;
    private int pos;
    private int end;

    /** File offset of the frame holding the head. */
    private long blockOffset;

    /** File offset of the frame after the head's: where {@link #nextFrame()} resumes. */
    private long nextFrameOffset;

    /** A read of the scanner failed: its buffer is in no known state, start a new one. */
    private boolean rescan;

    /** Index of the head among its block's entries. */
    private int entryIndex;

    /** Bytes of the varint {@link #varintAt} read last. */
    private int varintBytes;

    private byte[] head;
    private long headRecord = -1;
    private boolean closed;

    private RunCursor(
            FileIo io, Path file, long runId, long size, LogReader reader, FrameScanner frames) {
        this.io = io;
        this.file = file;
        this.runId = runId;
        this.size = size;
        this.reader = reader;
        this.frames = frames;
    }

    /**
     * Opens the run {@code file} of {@code size} bytes at the element {@code skip} of the block at
     * {@code blockOffset}; {@link #head()} is null if that is the end of the run.
     */
    static RunCursor open(FileIo io, Path file, long runId, long size, long blockOffset, int skip)
            throws IOException {
        LogReader reader = null;
        try {
            reader = LogReader.open(io, file, FileType.SORTED_RUN, size);
            if (reader.fileId() != runId) {
                throw new CorruptLogException(
                        file, 8, "file id " + reader.fileId() + ", expected run " + runId);
            }
            RunCursor cursor =
                    new RunCursor(
                            io,
                            file,
                            runId,
                            size,
                            reader,
                            reader.scan(blockOffset, size, bufferSize(size)));
            cursor.nextFrameOffset = blockOffset;
            cursor.start(skip);
            return cursor;
        } catch (IOException | RuntimeException e) {
            if (reader != null) {
                try {
                    reader.close();
                } catch (IOException closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
    }

    private static int bufferSize(long size) {
        return (int) Math.max(64, Math.min(MAX_READ_BUFFER, size - LogFileHeader.LENGTH));
    }

    /** A second cursor over the same run, at the same head; this one does not move. */
    RunCursor reopen() throws IOException {
        if (head == null) {
            throw new IllegalStateException("run " + file + " is exhausted");
        }
        return open(io, file, runId, size, blockOffset, entryIndex);
    }

    private void start(int skip) throws IOException {
        if (!nextFrame()) {
            return;
        }
        enterBlock();
        for (int i = 0; i < skip; i++) {
            if (pos >= end) {
                throw corrupt("block holds " + i + " entries, expected more than " + skip);
            }
            int length = lengthAt(pos);
            int recordAt = pos + varintBytes + length;
            recordAt(recordAt);
            pos = recordAt + varintBytes;
            entryIndex++;
        }
        advance();
    }

    /** The current element, or null once the run is exhausted. */
    byte[] head() {
        return head;
    }

    /** The record of the current element ({@link SortedRunDescriptor#record}); -1 at the end. */
    long headRecord() {
        return headRecord;
    }

    /** Moves to the next entry; returns false (head null) at the end of the run. */
    boolean advance() throws IOException {
        if (pos >= end) {
            if (!nextFrame()) {
                head = null;
                headRecord = -1;
                return false;
            }
            enterBlock();
        }
        int length = lengthAt(pos);
        int from = pos + varintBytes;
        long record = recordAt(from + length);
        byte[] next = Arrays.copyOfRange(block, from, from + length);
        if (head != null && Arrays.compareUnsigned(head, next) >= 0) {
            throw corrupt("element " + (entryIndex + 1) + " of the block is out of order");
        }
        pos = from + length + varintBytes;
        entryIndex++;
        head = next;
        headRecord = record;
        return true;
    }

    /**
     * Moves the scanner to the next frame. After a failed read (a transient I/O error, or a
     * checksum that will fail again) the next call reads that frame anew, through a new scanner.
     */
    private boolean nextFrame() throws IOException {
        if (rescan) {
            frames = reader.scan(nextFrameOffset, size, bufferSize(size));
            rescan = false;
        }
        try {
            return frames.next();
        } catch (IOException | RuntimeException e) {
            rescan = true;
            throw e;
        }
    }

    private void enterBlock() throws CorruptLogException {
        if (frames.payloadLength() == 0) {
            throw new CorruptLogException(file, frames.frameOffset(), "empty block");
        }
        block = frames.array();
        pos = frames.payloadOffset();
        end = pos + frames.payloadLength();
        blockOffset = frames.frameOffset();
        nextFrameOffset = blockOffset + FrameDescriptor.HEADER_LENGTH + frames.payloadLength();
        entryIndex = -1;
    }

    /** Reads the element length at {@code at} (its size into {@link #varintBytes}). */
    private int lengthAt(int at) throws CorruptLogException {
        long length = varintAt(at, SortedRunDescriptor.MAX_LENGTH_BYTES, "element length");
        long left = end - (at + varintBytes);
        if (length > left) {
            throw corrupt(
                    "element of "
                            + length
                            + " bytes runs past the end of the block ("
                            + left
                            + " bytes left)");
        }
        return (int) length;
    }

    /** Reads the record at {@code at} (its size into {@link #varintBytes}). */
    private long recordAt(int at) throws CorruptLogException {
        return varintAt(at, SortedRunDescriptor.MAX_RECORD_BYTES, "record");
    }

    /** Reads a varint of at most {@code maxBytes} at {@code at}, within the block. */
    private long varintAt(int at, int maxBytes, String what) throws CorruptLogException {
        long value = 0;
        for (int i = 0; i < maxBytes && at + i < end; i++) {
            int b = block[at + i];
            value |= (long) (b & 0x7F) << (7 * i);
            if ((b & 0x80) == 0) {
                varintBytes = i + 1;
                return value;
            }
        }
        throw corrupt("malformed " + what + " or " + what + " past the end of the block");
    }

    private CorruptLogException corrupt(String problem) {
        return new CorruptLogException(file, blockOffset, problem);
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        reader.close();
    }
}
