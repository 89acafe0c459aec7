package io.flowkv.core.queue;

/**
 * The payload of one block (one frame) of a sorted run file. The file is a {@link
 * io.flowkv.core.log.LogFileHeader} of type {@link io.flowkv.core.log.FileType#SORTED_RUN} and then
 * frames ({@link io.flowkv.core.log.FrameDescriptor}), one per block:
 *
 * <pre>
 *  +------------------+----------------+------------------+----------------+----
 *  | length (varint)  | element bytes  | length (varint)  | element bytes  | ...
 *  +------------------+----------------+------------------+----------------+----
 * </pre>
 *
 * The length is unsigned LEB128: 7 bits per byte, least significant group first, the high bit set
 * on every byte but the last; at most 5 bytes. Elements ascend strictly in unsigned lexicographic
 * order ({@link java.util.Arrays#compareUnsigned(byte[], byte[])}) within a block and from one
 * block to the next, so a run holds each element at most once. A block is closed once its payload
 * reaches {@link #BLOCK_BYTES}, so it exceeds that by at most one element.
 */
final class SortedRunDescriptor {
    /** Payload size at which a block is closed: small enough to decode without a large buffer. */
    static final int BLOCK_BYTES = 4096;

    static final int MAX_LENGTH_BYTES = 5;

    private SortedRunDescriptor() {}

    /** Writes {@code length} as a varint at {@code dst[at]}; returns the bytes written. */
    static int writeLength(int length, byte[] dst, int at) {
        int n = 0;
        int v = length;
        while ((v & ~0x7F) != 0) {
            dst[at + n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        dst[at + n++] = (byte) v;
        return n;
    }
}
