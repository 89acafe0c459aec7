package io.flowkv.core.index;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of a {@link PagedHashIndex} page file ({@code *.pages}): a header in the first 4 KiB, then
 * page {@code p} of the table at {@code 4096 * (p + 1)}. A page holds 256 slots of 16 bytes; its
 * CRC32C is kept in memory, in the index's page table, and checked whenever the page is read back.
 * The file is scratch space of one running store, never part of a checkpoint: after a restart it is
 * deleted, not read.
 *
 * <pre>
 *   header (little-endian), then zero padding to 4096:
 *   0      4        6        8           12          16                20
 *   +------+--------+--------+-----------+-----------+-----------------+
 *   |magic | version| unused | page bytes| table bits| crc32c of 0..16 |
 *   +------+--------+--------+-----------+-----------+-----------------+
 *    "FKVP"    1
 *
 *   page: 256 x [hash:long LE][value:long LE]   (value -1 = empty slot)
 * </pre>
 */
final class PageFileDescriptor {
    static final int MAGIC = 0x50564B46; // "FKVP" read as little-endian int
    static final short VERSION = 1;
    static final int HEADER_LENGTH = 20;
    static final long FIRST_PAGE = PagedHashIndex.PAGE_BYTES;

    private PageFileDescriptor() {}

    static long pageOffset(int page) {
        return FIRST_PAGE + (long) page * PagedHashIndex.PAGE_BYTES;
    }

    /** Writes the header at {@code dst}'s position (little-endian), advancing it. */
    static void writeHeader(ByteBuffer dst, int tableBits) {
        ByteBuffer b = dst.order(ByteOrder.LITTLE_ENDIAN);
        int start = b.position();
        b.putInt(MAGIC).putShort(VERSION).putShort((short) 0);
        b.putInt(PagedHashIndex.PAGE_BYTES).putInt(tableBits);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), b.arrayOffset() + start, 16);
        b.putInt((int) crc.getValue());
    }
}
