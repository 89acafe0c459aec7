package io.flowkv.core.index;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of the page files of a {@link PagedHashIndex} ({@code *.pages}) and of {@link
 * PagedRecords} ({@code *.records}): a header in the first 4 KiB, then page {@code p} at {@code
 * 4096 * (p + 1)}. A page's CRC32C is kept in memory, in the owner's page table, and checked
 * whenever the page is read back. The files are scratch space of one running store, never part of a
 * checkpoint: after a restart they are deleted, not read.
 *
 * <pre>
 *   header (little-endian), then zero padding to 4096:
 *   0      4        6        8           12          16                20
 *   +------+--------+--------+-----------+-----------+-----------------+
 *   |magic | version| unused | page bytes| parameter | crc32c of 0..16 |
 *   +------+--------+--------+-----------+-----------+-----------------+
 *    "FKVP" (hash index; parameter: table bits) or "FKVR" (records; parameter: record bytes)
 *    version 1
 *
 *   hash index page: 256 x [hash:long LE][value:long LE]   (value -1 = empty slot)
 *   records page:    floor(4096 / record bytes) records, the owner's layout, zero padding
 * </pre>
 */
final class PageFileDescriptor {
    static final int MAGIC = 0x50564B46; // "FKVP" read as little-endian int
    static final int RECORDS_MAGIC = 0x52564B46; // "FKVR" read as little-endian int
    static final short VERSION = 1;
    static final int HEADER_LENGTH = 20;
    static final long FIRST_PAGE = PagedHashIndex.PAGE_BYTES;

    private PageFileDescriptor() {}

    static long pageOffset(int page) {
        return FIRST_PAGE + (long) page * PagedHashIndex.PAGE_BYTES;
    }

    /** Writes the header at {@code dst}'s position (little-endian), advancing it. */
    static void writeHeader(ByteBuffer dst, int tableBits) {
        writeHeader(dst, MAGIC, tableBits);
    }

    /** Writes the header of a file with {@code magic} and its {@code parameter}. */
    static void writeHeader(ByteBuffer dst, int magic, int parameter) {
        ByteBuffer b = dst.order(ByteOrder.LITTLE_ENDIAN);
        int start = b.position();
        b.putInt(magic).putShort(VERSION).putShort((short) 0);
        b.putInt(PagedHashIndex.PAGE_BYTES).putInt(parameter);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), b.arrayOffset() + start, 16);
        b.putInt((int) crc.getValue());
    }
}
