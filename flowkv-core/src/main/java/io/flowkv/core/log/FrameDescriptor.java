package io.flowkv.core.log;

import io.flowkv.core.CorruptLogException;

import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * A frame: the unit of checksumming in every FlowKV file. What a payload holds is the business of
 * the file type (see docs/FORMAT.md). Little-endian.
 *
 * <pre>
 *   0               4               8
 *  +---------------+---------------+------------------------------+
 *  | payload length| CRC32C(payload)|  payload (length bytes) ... |
 *  +---------------+---------------+------------------------------+
 * </pre>
 */
public final class FrameDescriptor {
    public static final int HEADER_LENGTH = 8;

    /** A frame is bounded so that a corrupt length cannot make a reader allocate gigabytes. */
    public static final int MAX_PAYLOAD = 1 << 30;

    private FrameDescriptor() {}

    public static int readIntLE(byte[] b, int o) {
        return (b[o] & 0xFF)
                | (b[o + 1] & 0xFF) << 8
                | (b[o + 2] & 0xFF) << 16
                | (b[o + 3] & 0xFF) << 24;
    }

    public static long readLongLE(byte[] b, int o) {
        return (readIntLE(b, o) & 0xFFFFFFFFL) | ((long) readIntLE(b, o + 4) << 32);
    }

    public static void writeIntLE(byte[] b, int o, int v) {
        b[o] = (byte) v;
        b[o + 1] = (byte) (v >>> 8);
        b[o + 2] = (byte) (v >>> 16);
        b[o + 3] = (byte) (v >>> 24);
    }

    public static void writeLongLE(byte[] b, int o, long v) {
        writeIntLE(b, o, (int) v);
        writeIntLE(b, o + 4, (int) (v >>> 32));
    }

    /**
     * Checks the frame whose header starts at {@code buf[off]} (all of it in {@code buf}); returns
     * the payload length. {@code fileOffset} is where the frame sits in {@code file}, for errors.
     */
    public static int verify(byte[] buf, int off, int available, Path file, long fileOffset)
            throws CorruptLogException {
        if (available < HEADER_LENGTH) {
            throw new CorruptLogException(file, fileOffset, "truncated frame header");
        }
        int length = readIntLE(buf, off);
        if (length < 0 || length > MAX_PAYLOAD) {
            throw new CorruptLogException(file, fileOffset, "bad frame length " + length);
        }
        if (available - HEADER_LENGTH < length) {
            throw new CorruptLogException(
                    file,
                    fileOffset,
                    "truncated frame: length "
                            + length
                            + " but "
                            + (available - HEADER_LENGTH)
                            + " bytes left");
        }
        CRC32C crc = new CRC32C();
        crc.update(buf, off + HEADER_LENGTH, length);
        if ((int) crc.getValue() != readIntLE(buf, off + 4)) {
            throw new CorruptLogException(file, fileOffset, "frame checksum mismatch");
        }
        return length;
    }
}
