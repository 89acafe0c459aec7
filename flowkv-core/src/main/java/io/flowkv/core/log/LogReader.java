package io.flowkv.core.log;

import io.flowkv.core.CorruptLogException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Reads one FlowKV file: validates its header on open, reads and checks frames at known offsets,
 * scans frames sequentially, and moves raw byte ranges to another file without copying them through
 * user space ({@link #transferTo}).
 */
public final class LogReader implements AutoCloseable {
    private final Path file;
    private final FileChannel channel;
    private final long size;
    private final long fileId;

    private LogReader(Path file, FileChannel channel, long size, long fileId) {
        this.file = file;
        this.channel = channel;
        this.size = size;
        this.fileId = fileId;
    }

    /**
     * Opens {@code file} and validates its header. {@code expectedSize}, when not negative, is the
     * size the store recorded when it sealed the file: a shorter file is reported as truncated and
     * bytes past it (a torn append after the seal) are ignored.
     */
    public static LogReader open(FileIo io, Path file, FileType type, long expectedSize)
            throws IOException {
        FileChannel channel = io.openForRead(file);
        try {
            long actual = channel.size();
            if (expectedSize >= 0 && actual < expectedSize) {
                throw new CorruptLogException(
                        file,
                        actual,
                        "file truncated: expected " + expectedSize + " bytes, found " + actual);
            }
            ByteBuffer header = ByteBuffer.allocate(LogFileHeader.LENGTH);
            readFully(channel, header, 0, file);
            header.flip();
            long fileId = LogFileHeader.validate(header, file, type);
            return new LogReader(file, channel, expectedSize >= 0 ? expectedSize : actual, fileId);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    public Path file() {
        return file;
    }

    public long size() {
        return size;
    }

    public long fileId() {
        return fileId;
    }

    /** Reads {@code dst.remaining()} bytes at {@code offset}; fails if the file ends first. */
    public void readFully(long offset, ByteBuffer dst) throws IOException {
        if (offset + dst.remaining() > size) {
            throw new CorruptLogException(
                    file,
                    offset,
                    "read of " + dst.remaining() + " bytes past the end (" + size + ")");
        }
        readFully(channel, dst, offset, file);
    }

    /** Reads and checks the frame at {@code offset}; returns its payload. */
    public byte[] readFrame(long offset) throws IOException {
        if (offset < LogFileHeader.LENGTH || offset + FrameDescriptor.HEADER_LENGTH > size) {
            throw new CorruptLogException(
                    file, offset, "frame offset outside the file (size " + size + ")");
        }
        byte[] header = new byte[FrameDescriptor.HEADER_LENGTH];
        readFully(offset, ByteBuffer.wrap(header));
        int length = FrameDescriptor.readIntLE(header, 0);
        if (length < 0 || offset + FrameDescriptor.HEADER_LENGTH + length > size) {
            throw new CorruptLogException(file, offset, "bad frame length " + length);
        }
        byte[] frame = new byte[FrameDescriptor.HEADER_LENGTH + length];
        System.arraycopy(header, 0, frame, 0, header.length);
        readFully(offset + header.length, ByteBuffer.wrap(frame, header.length, length));
        FrameDescriptor.verify(frame, 0, frame.length, file, offset);
        byte[] payload = new byte[length];
        System.arraycopy(frame, FrameDescriptor.HEADER_LENGTH, payload, 0, length);
        return payload;
    }

    /**
     * Scans the frames in {@code [from, to)} sequentially, reading {@code bufferSize} at a time.
     */
    public FrameScanner scan(long from, long to, int bufferSize) {
        return new FrameScanner(this, from, Math.min(to, size), bufferSize);
    }

    /** Scans every frame of the file. */
    public FrameScanner scanAll(int bufferSize) {
        return scan(LogFileHeader.LENGTH, size, bufferSize);
    }

    /** Copies {@code count} bytes at {@code offset} to the end of {@code target} in the kernel. */
    public void transferTo(long offset, long count, FileChannel target) throws IOException {
        if (offset + count > size) {
            throw new CorruptLogException(
                    file, offset, "transfer of " + count + " bytes past the end");
        }
        long done = 0;
        while (done < count) {
            long n = channel.transferTo(offset + done, count - done, target);
            if (n <= 0) {
                throw new IOException(
                        "transferTo made no progress copying "
                                + file
                                + " at offset "
                                + (offset + done));
            }
            done += n;
        }
    }

    static void readFully(FileChannel channel, ByteBuffer dst, long offset, Path file)
            throws IOException {
        long at = offset;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, at);
            if (n < 0) {
                throw new CorruptLogException(file, at, "unexpected end of file");
            }
            at += n;
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
