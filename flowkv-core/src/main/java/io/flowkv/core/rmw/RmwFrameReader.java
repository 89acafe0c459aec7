package io.flowkv.core.rmw;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.Positions;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

import static io.flowkv.core.rmw.RmwRecordDescriptor.FRAME_PAYLOAD;
import static io.flowkv.core.rmw.RmwRecordDescriptor.HEADER;

/**
 * The RMW store's read buffer: the last frame read from the value log, verified, and the position
 * it came from, so that the put of a read-modify-write finds the frame it supersedes without a
 * second read. The store also copies write-buffer values into it to hand them out ({@link #forget}
 * then marks it as holding no frame).
 *
 * <pre>
 *   array(): [frame header 8 B][payload: kind, key length, namespace length, value length,
 *             key, namespace, value] ...           (FrameDescriptor, RmwRecordDescriptor)
 * </pre>
 *
 * The buffer is a heap array, not charged to the budget (which stands for native memory): it grows
 * to the largest frame read, a value that leaves it for the caller's deserializer on the heap.
 */
final class RmwFrameReader {
    /** First read of a point lookup: covers a typical small frame in one system call. */
    private static final int FIRST_READ = 512;

    private static final long NONE = Positions.NONE;

    private final RmwValueLog log;
    private final StoreStats stats;

    private byte[] frame;
    private ByteBuffer view;

    /** Position of the verified frame now in {@link #frame}, or NONE. */
    private long position = NONE;

    private int length;

    RmwFrameReader(RmwValueLog log, StoreStats stats) {
        this.log = log;
        this.stats = stats;
        this.frame = new byte[FIRST_READ * 8];
        this.view = ByteBuffer.wrap(frame);
    }

    /** The buffer: a frame at 0 after {@link #read}, or what the store copied into it. */
    byte[] array() {
        return frame;
    }

    /** Position of the verified frame in the buffer, or NONE. */
    long position() {
        return position;
    }

    /** Length of the verified frame in the buffer. */
    int length() {
        return length;
    }

    /** The buffer no longer holds a verified frame (moved by compaction, or overwritten). */
    void forget() {
        position = NONE;
    }

    /** Reads and verifies the frame at {@code pos} into the buffer; returns its length. */
    int read(long pos) throws IOException {
        position = NONE;
        RmwSegment s = log.segment(Positions.segment(pos));
        long offset = Positions.offset(pos);
        long left = s.size - offset;
        if (offset < LogFileHeader.LENGTH || left < FrameDescriptor.HEADER_LENGTH) {
            throw new CorruptLogException(
                    s.path, offset, "frame offset outside the file (size " + s.size + ")");
        }
        int first = (int) Math.min(left, FIRST_READ);
        view.clear().limit(first);
        s.readFully(offset, view);
        int payload = FrameDescriptor.readIntLE(frame, 0);
        if (payload < 0 || FrameDescriptor.HEADER_LENGTH + (long) payload > left) {
            throw new CorruptLogException(s.path, offset, "bad frame length " + payload);
        }
        int bytes = FrameDescriptor.HEADER_LENGTH + payload;
        if (bytes > first) {
            ensureCapacity(bytes);
            view.clear().position(first).limit(bytes);
            s.readFully(offset + first, view);
        }
        stats.addRead(Math.max(first, bytes));
        FrameDescriptor.verify(frame, 0, bytes, s.path, offset);
        RmwRecordDescriptor.validate(frame, FRAME_PAYLOAD, payload, s.path, offset);
        position = pos;
        length = bytes;
        return bytes;
    }

    /** Whether the buffer holds a verified frame of (key, namespace). */
    boolean holds(byte[] key, byte[] namespace) {
        if (position == NONE) {
            return false;
        }
        int p = FRAME_PAYLOAD;
        int keyLen = RmwRecordDescriptor.keyLength(frame, p);
        int nsLen = RmwRecordDescriptor.namespaceLength(frame, p);
        int from = p + HEADER;
        return keyLen == key.length
                && nsLen == namespace.length
                && Arrays.equals(frame, from, from + keyLen, key, 0, keyLen)
                && Arrays.equals(frame, from + keyLen, from + keyLen + nsLen, namespace, 0, nsLen);
    }

    /**
     * Whether the buffer's frame has the (key, namespace) of the record payload at {@code b[p]}.
     */
    boolean holdsKeyOf(byte[] b, int p) {
        int keyLen = RmwRecordDescriptor.keyLength(b, p);
        int nsLen = RmwRecordDescriptor.namespaceLength(b, p);
        return RmwRecordDescriptor.keyLength(frame, FRAME_PAYLOAD) == keyLen
                && RmwRecordDescriptor.namespaceLength(frame, FRAME_PAYLOAD) == nsLen
                && Arrays.equals(
                        frame,
                        FRAME_PAYLOAD + HEADER,
                        FRAME_PAYLOAD + HEADER + keyLen + nsLen,
                        b,
                        p + HEADER,
                        p + HEADER + keyLen + nsLen);
    }

    /** Grows the buffer (keeping its content) to at least {@code need} bytes. */
    private void ensureCapacity(int need) {
        if (need <= frame.length) {
            return;
        }
        int bigger = Math.max(need, (int) Math.min(Integer.MAX_VALUE - 8, 2L * frame.length));
        frame = Arrays.copyOf(frame, bigger);
        view = ByteBuffer.wrap(frame);
    }
}
