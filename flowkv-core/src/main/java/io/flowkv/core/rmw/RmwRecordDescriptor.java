package io.flowkv.core.rmw;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.index.Hashing;
import io.flowkv.core.log.FrameDescriptor;

import java.nio.file.Path;

/**
 * The payload of one value-log frame: a put or a tombstone of one (key, namespace). The write
 * buffer keeps records in exactly this layout, so a flush copies them to the log byte for byte.
 * Little-endian.
 *
 * <pre>
 *   0      1               5               9               13
 *  +------+---------------+---------------+---------------+-----+-----------+-------+
 *  | kind |  key length   | namespace len |  value length | key | namespace | value |
 *  +------+---------------+---------------+---------------+-----+-----------+-------+
 * </pre>
 *
 * kind 0 = put, 1 = tombstone (value length 0). A whole frame is {@link
 * FrameDescriptor#HEADER_LENGTH} + {@link #HEADER} + key + namespace + value bytes.
 */
final class RmwRecordDescriptor {
    static final int KIND = 0;
    static final int KEY_LENGTH = 1;
    static final int NAMESPACE_LENGTH = 5;
    static final int VALUE_LENGTH = 9;
    static final int HEADER = 13;

    static final byte PUT = 0;
    static final byte TOMBSTONE = 1;

    /** Offset of the record's payload within a whole frame. */
    static final int FRAME_PAYLOAD = FrameDescriptor.HEADER_LENGTH;

    private RmwRecordDescriptor() {}

    static long hash(byte[] key, byte[] namespace) {
        return hash(key, 0, key.length, namespace, 0, namespace.length);
    }

    /** The hash of the pair: the namespace hashed with a seed taken from the key's hash. */
    static long hash(byte[] k, int keyOff, int keyLen, byte[] n, int nsOff, int nsLen) {
        long keyHash = Hashing.hash64(k, keyOff, keyLen);
        return Hashing.hash64(n, nsOff, nsLen, keyHash ^ ((long) keyLen << 1));
    }

    /** The hash of the (key, namespace) of the record whose payload starts at {@code b[p]}. */
    static long payloadHash(byte[] b, int p) {
        int keyLen = keyLength(b, p);
        return hash(b, p + HEADER, keyLen, b, p + HEADER + keyLen, namespaceLength(b, p));
    }

    static int payloadLength(int keyLen, int nsLen, int valueLen) {
        return HEADER + keyLen + nsLen + valueLen;
    }

    static int frameLength(int keyLen, int nsLen, int valueLen) {
        return FrameDescriptor.HEADER_LENGTH + payloadLength(keyLen, nsLen, valueLen);
    }

    /** Checks that the (checksum-verified) payload at {@code b[off..off+len)} is a record. */
    static void validate(byte[] b, int off, int len, Path file, long frameOffset)
            throws CorruptLogException {
        if (len < HEADER) {
            throw new CorruptLogException(
                    file, frameOffset, "record payload of " + len + " bytes, need " + HEADER);
        }
        byte kind = b[off + KIND];
        int keyLen = FrameDescriptor.readIntLE(b, off + KEY_LENGTH);
        int nsLen = FrameDescriptor.readIntLE(b, off + NAMESPACE_LENGTH);
        int valueLen = FrameDescriptor.readIntLE(b, off + VALUE_LENGTH);
        boolean kindOk = kind == PUT || (kind == TOMBSTONE && valueLen == 0);
        if (!kindOk
                || keyLen < 0
                || nsLen < 0
                || valueLen < 0
                || (long) HEADER + keyLen + nsLen + valueLen != len) {
            throw new CorruptLogException(
                    file,
                    frameOffset,
                    "malformed record: kind="
                            + kind
                            + " key="
                            + keyLen
                            + " namespace="
                            + nsLen
                            + " value="
                            + valueLen
                            + " payload="
                            + len);
        }
    }

    static byte kind(byte[] b, int off) {
        return b[off + KIND];
    }

    static int keyLength(byte[] b, int off) {
        return FrameDescriptor.readIntLE(b, off + KEY_LENGTH);
    }

    static int namespaceLength(byte[] b, int off) {
        return FrameDescriptor.readIntLE(b, off + NAMESPACE_LENGTH);
    }

    static int valueLength(byte[] b, int off) {
        return FrameDescriptor.readIntLE(b, off + VALUE_LENGTH);
    }
}
