package io.flowkv.core.queue;

/**
 * The payload of one block (one frame) of a sorted run file, block layout version 2. The file is a
 * {@link io.flowkv.core.log.LogFileHeader} of type {@link io.flowkv.core.log.FileType#SORTED_RUN}
 * and then frames ({@link io.flowkv.core.log.FrameDescriptor}), one per block, each a sequence of
 * entries:
 *
 * <pre>
 *  +------------------+----------------+------------------+------------------+----
 *  | length (varint)  | element bytes  | record (varint)  | length (varint)  | ...
 *  +------------------+----------------+------------------+------------------+----
 *
 *  record:  63                                                     1   0
 *          +--------------------------------------------------------+---+
 *          |                    sequence number                     | k |  k: 0 ADD, 1 DEL
 *          +--------------------------------------------------------+---+
 * </pre>
 *
 * Varints are unsigned LEB128: 7 bits per byte, least significant group first, the high bit set on
 * every byte but the last; a length takes at most 5 bytes, a record at most 9 (it is below 2^63).
 * Elements ascend strictly in unsigned lexicographic order ({@link
 * java.util.Arrays#compareUnsigned(byte[], byte[])}) within a block and from one block to the next,
 * so a run holds at most one record per element. Of two records of one element, the one with the
 * higher sequence number is the later; since the sequence number fills the high bits, that is the
 * larger record. A block is closed once its payload reaches {@link #BLOCK_BYTES}, so it exceeds
 * that by at most one entry.
 *
 * <p>Version 1 had no record: an element in a run was simply present.
 */
final class SortedRunDescriptor {
    /** Payload size at which a block is closed: small enough to decode without a large buffer. */
    static final int BLOCK_BYTES = 4096;

    static final int MAX_LENGTH_BYTES = 5;
    static final int MAX_RECORD_BYTES = 9;

    static final int ADD = 0;
    static final int DEL = 1;

    private SortedRunDescriptor() {}

    /**
     * The record of mutation {@code seq} of kind {@link #ADD} or {@link #DEL}. Sequence numbers
     * stay below 2^62: a store would need centuries of mutations to reach it.
     */
    static long record(long seq, int kind) {
        return seq << 1 | kind;
    }

    static boolean isAdd(long record) {
        return (record & 1) == ADD;
    }

    /** Writes {@code value} (not negative) as a varint at {@code dst[at]}; returns the bytes. */
    static int writeVarint(long value, byte[] dst, int at) {
        int n = 0;
        long v = value;
        while ((v & ~0x7FL) != 0) {
            dst[at + n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        dst[at + n++] = (byte) v;
        return n;
    }
}
