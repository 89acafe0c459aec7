package io.flowkv.core.log;

import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.OffHeapBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Appends frames to one FlowKV file through a staging {@link IoBuffer}. A frame is built with
 * {@link #beginFrame()}, any number of {@code put*} calls and {@link #endFrame()}; it may be larger
 * than the staging buffer (its header is then patched in place with a positional write).
 *
 * <p>Bytes are durable only after {@link #sync()}. If any write fails the writer refuses further
 * use until {@link #truncate(long)} rolls the file back to a size the caller knows to be good; the
 * caller still holds the data it tried to write, so nothing acknowledged is lost.
 */
public final class LogWriter implements AutoCloseable {
    private final Path file;
    private final FileChannel channel;
    private final IoBuffer staging;
    private final ByteBuffer buf;
    private final CRC32C crc = new CRC32C();

    /** File offset of buf[0]. */
    private long stagingBase;

    private long frameStart = -1;

    /** Buffer index from which payload bytes still need to enter the CRC. */
    private int crcMark;

    private boolean failed;

    private LogWriter(Path file, FileChannel channel, IoBuffer staging) {
        this.file = file;
        this.channel = channel;
        this.staging = staging;
        this.buf = staging.buffer().clear().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Creates {@code file} (it must not exist) and writes its header. */
    public static LogWriter create(
            FileIo io, Path file, FileType type, long fileId, IoBuffer staging) throws IOException {
        if (staging.capacity() < 64) {
            throw new IllegalArgumentException("staging buffer too small: " + staging.capacity());
        }
        FileChannel channel = io.openForAppend(file);
        LogWriter writer = new LogWriter(file, channel, staging);
        try {
            LogFileHeader.write(writer.buf, type, fileId);
            writer.drain();
        } catch (IOException | RuntimeException e) {
            writer.closeQuietly();
            throw new IOException("Could not create FlowKV file " + file, e);
        }
        return writer;
    }

    public Path file() {
        return file;
    }

    /** Logical size: everything appended so far, staged or written. */
    public long size() {
        return stagingBase + buf.position();
    }

    /** Starts a frame; returns its file offset. */
    public long beginFrame() throws IOException {
        checkUsable();
        if (frameStart >= 0) {
            throw new IllegalStateException("frame already open at offset " + frameStart);
        }
        ensure(FrameDescriptor.HEADER_LENGTH);
        frameStart = size();
        buf.putLong(0L);
        crc.reset();
        crcMark = buf.position();
        return frameStart;
    }

    public void putInt(int value) throws IOException {
        ensure(4);
        buf.putInt(value);
    }

    public void putLong(long value) throws IOException {
        ensure(8);
        buf.putLong(value);
    }

    public void putByte(byte value) throws IOException {
        ensure(1);
        buf.put(value);
    }

    public void putBytes(byte[] src, int offset, int length) throws IOException {
        while (length > 0) {
            ensure(1);
            int n = Math.min(length, buf.remaining());
            buf.put(src, offset, n);
            offset += n;
            length -= n;
        }
    }

    public void putBytes(OffHeapBuffer src, long index, int length) throws IOException {
        while (length > 0) {
            ensure(1);
            int n = Math.min(length, buf.remaining());
            src.copyTo(index, staging, n);
            index += n;
            length -= n;
        }
    }

    /** Closes the open frame; returns its payload length. */
    public int endFrame() throws IOException {
        checkUsable();
        if (frameStart < 0) {
            throw new IllegalStateException("no open frame");
        }
        updateCrc();
        long length = size() - frameStart - FrameDescriptor.HEADER_LENGTH;
        if (length > FrameDescriptor.MAX_PAYLOAD) {
            failed = true;
            throw new IOException("frame of " + length + " bytes exceeds the maximum in " + file);
        }
        int crcValue = (int) crc.getValue();
        if (frameStart >= stagingBase) {
            int at = (int) (frameStart - stagingBase);
            buf.putInt(at, (int) length);
            buf.putInt(at + 4, crcValue);
        } else {
            ByteBuffer header = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            header.putInt((int) length).putInt(crcValue).flip();
            try {
                while (header.hasRemaining()) {
                    channel.write(header, frameStart + header.position());
                }
            } catch (IOException e) {
                failed = true;
                throw new IOException(
                        "Error writing frame header to " + file + " at offset " + frameStart, e);
            }
        }
        frameStart = -1;
        return (int) length;
    }

    /** Writes one complete frame from a heap array; returns its file offset. */
    public long appendFrame(byte[] payload, int offset, int length) throws IOException {
        long at = beginFrame();
        putBytes(payload, offset, length);
        endFrame();
        return at;
    }

    /**
     * Appends {@code count} raw bytes of {@code source} at {@code offset} (whole frames, checksums
     * included) without copying them through user space; returns the file offset they land at. No
     * frame may be open. On failure the writer refuses further use until {@link #truncate(long)}.
     */
    public long transferFrom(LogReader source, long offset, long count) throws IOException {
        flush();
        long at = size();
        try {
            // transferTo writes at the target's own position; every other write here is positional.
            channel.position(at);
            source.transferTo(offset, count, channel);
        } catch (IOException e) {
            failed = true;
            throw new IOException(
                    "Error transferring "
                            + count
                            + " bytes from "
                            + source.file()
                            + " at offset "
                            + offset
                            + " to "
                            + file
                            + " at offset "
                            + at,
                    e);
        }
        stagingBase += count;
        return at;
    }

    /** Writes staged bytes to the file (not yet fsynced). No frame may be open. */
    public void flush() throws IOException {
        checkUsable();
        if (frameStart >= 0) {
            throw new IllegalStateException("cannot flush with an open frame at " + frameStart);
        }
        drain();
    }

    /** {@link #sync()} when {@code durable}, else {@link #flush()}. */
    public void flush(boolean durable) throws IOException {
        if (durable) {
            sync();
        } else {
            flush();
        }
    }

    /** Flushes and forces the file's content to the device. */
    public void sync() throws IOException {
        flush();
        try {
            channel.force(false);
        } catch (IOException e) {
            failed = true;
            throw new IOException("Error syncing " + file, e);
        }
    }

    /**
     * Rolls the file back to {@code goodSize} (a size this writer reported earlier), dropping any
     * partial frame, and makes the writer usable again.
     */
    public void truncate(long goodSize) throws IOException {
        if (goodSize < LogFileHeader.LENGTH) {
            throw new IllegalArgumentException("cannot truncate below the header: " + goodSize);
        }
        frameStart = -1;
        buf.clear();
        try {
            channel.truncate(goodSize);
            channel.position(goodSize);
        } catch (IOException e) {
            failed = true;
            throw new IOException("Error truncating " + file + " to " + goodSize, e);
        }
        stagingBase = goodSize;
        failed = false;
    }

    private void ensure(int bytes) throws IOException {
        checkUsable();
        if (buf.remaining() < bytes) {
            if (frameStart >= 0) {
                updateCrc();
            }
            drain();
        }
    }

    private void updateCrc() {
        if (frameStart < 0) {
            return;
        }
        int from =
                Math.max(
                        crcMark,
                        (int)
                                Math.max(
                                        0,
                                        frameStart + FrameDescriptor.HEADER_LENGTH - stagingBase));
        if (buf.position() > from) {
            ByteBuffer slice = buf.duplicate();
            slice.position(from).limit(buf.position());
            crc.update(slice);
        }
        crcMark = buf.position();
    }

    private void drain() throws IOException {
        buf.flip();
        try {
            while (buf.hasRemaining()) {
                channel.write(buf, stagingBase + buf.position());
            }
        } catch (IOException e) {
            failed = true;
            throw new IOException(
                    "Error writing to " + file + " at offset " + (stagingBase + buf.position()), e);
        } finally {
            stagingBase += buf.position();
            buf.clear();
            crcMark = 0;
        }
    }

    private void checkUsable() throws IOException {
        if (failed) {
            throw new IOException(
                    "Writer of " + file + " failed earlier; truncate to a good size first");
        }
    }

    private void closeQuietly() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Already failing: the first error is the one worth reporting.
        }
    }

    /** Writes what is staged (unless the writer failed) and closes the file. */
    @Override
    public void close() throws IOException {
        try {
            if (!failed && frameStart < 0) {
                drain();
            }
        } finally {
            channel.close();
        }
    }
}
