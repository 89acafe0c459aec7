package io.flowkv.core.log;

import io.flowkv.core.CorruptLogException;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The 32-byte header that starts every FlowKV file. Little-endian.
 *
 * <pre>
 *   0               4       6       8                               16
 *  +---------------+-------+-------+-------------------------------+
 *  | magic "FKVL"  |version| type  |            file id            |
 *  +---------------+-------+-------+-------------------------------+
 *  16                              24              28              32
 *  +-------------------------------+---------------+---------------+
 *  |       reserved (zero)         | reserved (0)  | CRC32C(0..28) |
 *  +-------------------------------+---------------+---------------+
 * </pre>
 *
 * After the header come frames ({@link FrameDescriptor}).
 */
public final class LogFileHeader {
    public static final int LENGTH = 32;
    public static final int MAGIC = 0x4C564B46; // "FKVL" read as little-endian int
    public static final short VERSION = 1;

    private LogFileHeader() {}

    public static void write(ByteBuffer dst, FileType type, long fileId) {
        ByteBuffer b = dst.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int start = b.position();
        b.putInt(MAGIC).putShort(VERSION).putShort(type.code()).putLong(fileId);
        b.putLong(0L).putInt(0);
        CRC32C crc = new CRC32C();
        ByteBuffer covered = b.duplicate();
        covered.position(start).limit(start + 28);
        crc.update(covered);
        b.putInt((int) crc.getValue());
        dst.position(start + LENGTH);
    }

    /** Validates a header read from {@code file}; returns its file id. */
    public static long validate(ByteBuffer src, Path file, FileType expected)
            throws CorruptLogException {
        if (src.remaining() < LENGTH) {
            throw new CorruptLogException(
                    file, 0, "file shorter than its " + LENGTH + "-byte header");
        }
        ByteBuffer b = src.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int start = b.position();
        CRC32C crc = new CRC32C();
        ByteBuffer covered = b.duplicate();
        covered.limit(start + 28);
        crc.update(covered);
        int magic = b.getInt(start);
        if (magic != MAGIC) {
            throw new CorruptLogException(
                    file, 0, "bad magic 0x" + Integer.toHexString(magic) + ", not a FlowKV file");
        }
        if ((int) crc.getValue() != b.getInt(start + 28)) {
            throw new CorruptLogException(file, 28, "header checksum mismatch");
        }
        short version = b.getShort(start + 4);
        if (version != VERSION) {
            throw new CorruptLogException(
                    file,
                    4,
                    "unsupported format version "
                            + version
                            + " (this build reads "
                            + VERSION
                            + ")");
        }
        short type = b.getShort(start + 6);
        if (type != expected.code()) {
            FileType actual = FileType.fromCode(type);
            throw new CorruptLogException(
                    file,
                    6,
                    "file type " + (actual == null ? type : actual) + ", expected " + expected);
        }
        return b.getLong(start + 8);
    }
}
