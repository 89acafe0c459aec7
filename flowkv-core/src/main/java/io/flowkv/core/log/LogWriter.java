package io.flowkv.core.log;

import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.OffHeapBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

/**
 * Appends frames to one FlowKV file through a staging {@link IoBuffer}. A frame is built with
 * {@link #beginFrame()}, any number of {@code put*} calls and {@link #endFrame()}; it may be larger
 * than the staging buffer (its header is then patched in place with a positional write).
 *
 * <p>Bytes are durable only after {@link #sync()}. If any write fails the writer refuses further
 * use until {@link #truncate(long)} rolls the file back to a size the caller knows to be good; the
 * caller still holds the data it tried to write, so nothing acknowledged is lost.
 *
 * <p><b>Writing behind</b> ({@link #writeBehind}): a full staging buffer, or a flushed one, is
 * queued for a background thread and the writer goes on in a spare buffer, waiting only when no
 * spare is free. The bytes of a queued buffer count in {@link #size()} at once; readers of the file
 * wait for them with {@link #awaitWritten} ({@link LogReader} does when it was opened with this
 * writer). A failed background write keeps its buffer and every one queued after it: the writer's
 * next use writes them again on the calling thread and fails if that fails, and readers fail while
 * they are owed. {@link #sync()}, {@link #truncate} and {@link #close()} wait for the queue.
 */
public final class LogWriter implements AutoCloseable {
    private final Path file;
    private final FileChannel channel;
    private IoBuffer staging;
    private ByteBuffer buf;
    private final CRC32C crc = new CRC32C();

    /** Writing behind: where queued buffers are written; null when every write is synchronous. */
    private Executor behind;

    /** Guards the queue, the spares, {@link #running} and {@link #behindFailure}. */
    private final Object lock = new Object();

    /** Buffers waiting for the background thread, oldest first (the head is being written). */
    private final ArrayDeque<Queued> queue = new ArrayDeque<>();

    private final ArrayDeque<IoBuffer> spares = new ArrayDeque<>();

    /** A background thread is working through the queue. */
    private boolean running;

    /** Why the queue's head could not be written; the queue stays until a write succeeds. */
    private IOException behindFailure;

    /** Every byte below this offset is in the file (not necessarily synced). */
    private volatile long written;

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
            writer.written = writer.size();
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
            // The header went out with an earlier buffer: patch it in the file once that is there.
            settle();
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
        settle();
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
        written = stagingBase;
        return at;
    }

    /** Writes staged bytes to the file (not yet fsynced). No frame may be open. */
    public void flush() throws IOException {
        checkUsable();
        if (frameStart >= 0) {
            throw new IllegalStateException("cannot flush with an open frame at " + frameStart);
        }
        if (behind == null) {
            drain();
        } else if (buf.position() > 0) {
            handOff();
        }
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
        settle();
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
        settleBelow(goodSize);
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
        written = goodSize;
        failed = false;
    }

    private void ensure(int bytes) throws IOException {
        checkUsable();
        if (buf.remaining() < bytes) {
            if (frameStart >= 0) {
                updateCrc();
            }
            if (behind == null) {
                drain();
            } else {
                handOff();
            }
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
        written = stagingBase;
    }

    /**
     * From now on, full and flushed staging buffers are written on {@code executor} while this
     * writer goes on in one of {@code spareBuffers} (see the class comment). The buffers stay the
     * caller's: it must not free them, nor give them to another writer, before {@link #close()}
     * returns. No frame may be open. Without spare buffers the writer stays synchronous.
     */
    public void writeBehind(Executor executor, List<IoBuffer> spareBuffers) throws IOException {
        checkUsable();
        if (frameStart >= 0) {
            throw new IllegalStateException("cannot start writing behind with an open frame");
        }
        if (spareBuffers.isEmpty()) {
            return;
        }
        for (IoBuffer spare : spareBuffers) {
            if (spare.capacity() < 64) {
                throw new IllegalArgumentException("staging buffer too small: " + spare.capacity());
            }
        }
        drain();
        synchronized (lock) {
            spares.addAll(spareBuffers);
        }
        behind = executor;
    }

    /**
     * Waits until every byte below {@code end} is in the file; any thread may call it. Fails while
     * a background write of those bytes has failed (they stay in memory until a write succeeds).
     */
    public void awaitWritten(long end) throws IOException {
        if (written >= end) {
            return;
        }
        synchronized (lock) {
            waitUntil(() -> written >= end || behindFailure != null || idle());
            if (written >= end) {
                return;
            }
            if (behindFailure != null) {
                throw new IOException(
                        "Bytes of "
                                + file
                                + " before offset "
                                + end
                                + " are not in the file: their background write failed (they stay"
                                + " in memory until a write succeeds)",
                        behindFailure);
            }
            throw new IllegalStateException(
                    "Bytes of "
                            + file
                            + " before offset "
                            + end
                            + " were never flushed (written up to "
                            + written
                            + ")");
        }
    }

    /**
     * For a reader of this file (any thread): copies into {@code dst} those of the {@code
     * dst.remaining()} bytes at {@code offset} that are queued but not in the file yet, and returns
     * how many leading bytes are in the file, for the reader to read there. Neither {@code dst}'s
     * position nor its limit moves. So a read never waits for the background thread, and the bytes
     * of a failed background write are read from memory until a write succeeds.
     */
    public int copyUnwritten(long offset, ByteBuffer dst) {
        int length = dst.remaining();
        long end = offset + length;
        if (written >= end) {
            return length;
        }
        synchronized (lock) {
            long from = Math.max(offset, written);
            long covered = from;
            for (Queued queued : queue) {
                long lo = Math.max(queued.base, from);
                long hi = Math.min(queued.end(), end);
                if (lo < hi) {
                    dst.put(
                            dst.position() + (int) (lo - offset),
                            queued.buffer.buffer(),
                            (int) (lo - queued.base),
                            (int) (hi - lo));
                    covered = Math.max(covered, hi);
                }
            }
            if (covered < end) {
                throw new IllegalStateException(
                        "Bytes of "
                                + file
                                + " before offset "
                                + end
                                + " were never flushed (queued up to "
                                + covered
                                + ")");
            }
            return (int) (from - offset);
        }
    }

    /** Queues the staging buffer's complete bytes for the background thread; goes on in a spare. */
    private void handOff() throws IOException {
        IoBuffer next = takeSpare();
        ByteBuffer nextBuf = next.buffer().clear().order(ByteOrder.LITTLE_ENDIAN);
        int cut = buf.position();
        if (frameStart >= stagingBase) {
            // A frame begun in this buffer moves to the next whole, so that its header is patched
            // in memory, unless it fills most of a buffer already (then the header is patched in
            // the file once this buffer is there).
            int at = (int) (frameStart - stagingBase);
            if (at > 0 && cut - at <= nextBuf.capacity() / 2) {
                ByteBuffer open = buf.duplicate();
                open.position(at).limit(cut);
                nextBuf.put(open);
                cut = at;
            }
        }
        buf.limit(cut).position(0);
        enqueue(new Queued(staging, stagingBase, cut));
        stagingBase += cut;
        staging = next;
        buf = nextBuf;
        crcMark = buf.position();
    }

    private IoBuffer takeSpare() throws IOException {
        synchronized (lock) {
            waitUntil(() -> !spares.isEmpty() || behindFailure != null);
            if (behindFailure != null) {
                writeOwed();
            }
            return spares.pop();
        }
    }

    private void enqueue(Queued queued) {
        synchronized (lock) {
            queue.add(queued);
            if (!running && behindFailure == null) {
                running = true;
                try {
                    behind.execute(this::writeQueue);
                } catch (RuntimeException e) {
                    running = false;
                    behindFailure = new IOException("Could not start writing " + file, e);
                }
            }
        }
    }

    /** The background thread: writes queued buffers in order until none is left or one fails. */
    private void writeQueue() {
        while (true) {
            Queued next;
            synchronized (lock) {
                next = queue.peek();
                if (next == null) {
                    running = false;
                    lock.notifyAll();
                    return;
                }
            }
            try {
                next.write();
            } catch (Throwable e) {
                synchronized (lock) {
                    behindFailure = next.failure(e);
                    running = false;
                    lock.notifyAll();
                }
                return;
            }
            synchronized (lock) {
                queue.poll();
                spares.push(next.buffer);
                written = next.end();
                lock.notifyAll();
            }
        }
    }

    /**
     * Waits until every queued buffer is in the file; writes them on this thread if the background
     * write failed, and fails (the writer then needs a {@link #truncate}) if that fails too.
     */
    public void settle() throws IOException {
        if (behind == null) {
            return;
        }
        synchronized (lock) {
            waitUntil(this::idle);
            writeOwed();
        }
    }

    /**
     * For a truncation to {@code goodSize}: waits for the background thread, drops queued buffers
     * at or past {@code goodSize} and writes the others here if the background failed.
     */
    private void settleBelow(long goodSize) throws IOException {
        if (behind == null) {
            return;
        }
        synchronized (lock) {
            waitUntil(() -> !running);
            while (!queue.isEmpty() && queue.peekLast().base >= goodSize) {
                spares.push(queue.pollLast().buffer);
            }
            writeOwed();
            behindFailure = null;
        }
    }

    /** Writes what the background thread left (after a failure) on this thread; holds the lock. */
    private void writeOwed() throws IOException {
        Queued owed;
        while ((owed = queue.peek()) != null) {
            try {
                owed.write();
            } catch (IOException e) {
                failed = true;
                throw owed.failure(e);
            }
            queue.poll();
            spares.push(owed.buffer);
            written = owed.end();
        }
        behindFailure = null;
    }

    /** Nothing queued, or the background thread stopped at a failure; holds the lock. */
    private boolean idle() {
        return !running && (queue.isEmpty() || behindFailure != null);
    }

    /**
     * Waits on the lock (held) until {@code condition}, through interrupts, keeping their status.
     */
    private void waitUntil(BooleanSupplier condition) {
        boolean interrupted = false;
        while (!condition.getAsBoolean()) {
            try {
                lock.wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A staging buffer waiting to be written: {@code length} bytes for file offset {@code base}.
     */
    private final class Queued {
        final IoBuffer buffer;
        final long base;
        final int length;

        Queued(IoBuffer buffer, long base, int length) {
            this.buffer = buffer;
            this.base = base;
            this.length = length;
        }

        long end() {
            return base + length;
        }

        /** Writes the whole buffer (again, after a failure: positional writes are idempotent). */
        void write() throws IOException {
            ByteBuffer bytes = buffer.buffer();
            bytes.limit(length).position(0);
            while (bytes.hasRemaining()) {
                channel.write(bytes, base + bytes.position());
            }
        }

        IOException failure(Throwable cause) {
            return new IOException(
                    "Error writing " + length + " bytes to " + file + " at offset " + base, cause);
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
                settle();
                drain();
            }
        } finally {
            synchronized (lock) {
                // The buffers belong to the caller, who may free them once this returns.
                waitUntil(() -> !running);
            }
            channel.close();
        }
    }
}
