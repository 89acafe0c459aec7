package io.flowkv.core.log;

import io.flowkv.core.CorruptLogException;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Iterates the frames of a file range with one reusable heap buffer (grown for a frame larger than
 * it). After {@link #next()} returns true, the payload is {@code array()[payloadOffset() ..
 * payloadOffset() + payloadLength())}, valid until the next call.
 */
public final class FrameScanner {
    private final LogReader reader;
    private final long end;
    private byte[] buf;
    private long bufBase;
    private int bufLen;
    private long next;
    private long frameOffset = -1;
    private int payloadOffset;
    private int payloadLength;

    FrameScanner(LogReader reader, long from, long end, int bufferSize) {
        this.reader = reader;
        this.end = end;
        this.buf = new byte[Math.max(bufferSize, 64)];
        this.next = from;
        this.bufBase = from;
    }

    public boolean next() throws IOException {
        if (next >= end) {
            return false;
        }
        if (end - next < FrameDescriptor.HEADER_LENGTH) {
            throw new CorruptLogException(
                    reader.file(), next, "truncated frame header at end of range");
        }
        fill(FrameDescriptor.HEADER_LENGTH);
        int at = (int) (next - bufBase);
        int length = FrameDescriptor.readIntLE(buf, at);
        if (length < 0 || next + FrameDescriptor.HEADER_LENGTH + (long) length > end) {
            throw new CorruptLogException(
                    reader.file(),
                    next,
                    "bad frame length " + length + " (range ends at " + end + ")");
        }
        fill(FrameDescriptor.HEADER_LENGTH + length);
        at = (int) (next - bufBase);
        FrameDescriptor.verify(buf, at, bufLen - at, reader.file(), next);
        frameOffset = next;
        payloadOffset = at + FrameDescriptor.HEADER_LENGTH;
        payloadLength = length;
        next += FrameDescriptor.HEADER_LENGTH + length;
        return true;
    }

    /** Makes {@code [next, next + need)} available in the buffer. */
    private void fill(int need) throws IOException {
        int at = (int) (next - bufBase);
        if (at + need <= bufLen) {
            return;
        }
        int keep = bufLen - at;
        if (need > buf.length) {
            byte[] bigger = new byte[need];
            System.arraycopy(buf, at, bigger, 0, keep);
            buf = bigger;
        } else {
            System.arraycopy(buf, at, buf, 0, keep);
        }
        bufBase = next;
        // Only the kept bytes are valid until the read succeeds: a failed read leaves the scanner
        // at the same frame with a consistent buffer, so a retry reads again instead of
        // verifying stale bytes.
        bufLen = keep;
        int want = (int) Math.min(buf.length - keep, end - (bufBase + keep));
        reader.readFully(bufBase + keep, ByteBuffer.wrap(buf, keep, want));
        bufLen = keep + want;
    }

    public long frameOffset() {
        return frameOffset;
    }

    /** File offset just past the current frame. */
    public long nextOffset() {
        return next;
    }

    public byte[] array() {
        return buf;
    }

    public int payloadOffset() {
        return payloadOffset;
    }

    public int payloadLength() {
        return payloadLength;
    }
}
