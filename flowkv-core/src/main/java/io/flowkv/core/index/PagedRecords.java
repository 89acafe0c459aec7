package io.flowkv.core.index;

import io.flowkv.core.Checks;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * An array of fixed-size records larger than memory: records are packed into 4 KiB pages, a bounded
 * cache of pages lives in native memory charged to the budget, and pages it evicts go to a scratch
 * page file (layout in {@link PageFileDescriptor}) from which they are read back, checksum checked,
 * when next touched. A page never touched reads as zeros.
 *
 * <p>Every accessor faults in the record's page and may evict another, so nothing the caller
 * learned about where a page is stays valid across calls; the accessors copy values in and out.
 * Eviction is a clock: pages touched since the hand last passed get a second chance.
 *
 * <p>Memory: the cache ({@code cacheBytes}, at least {@link #MIN_CACHE_BYTES}, taken from the
 * budget one chunk of 16 pages at a time and only when the pages it holds are all in use) and a
 * page table of 8 bytes per page in native memory. A write to the page file that fails, or a page
 * read back with a bad checksum, throws {@link UncheckedIOException} and leaves the records
 * unusable.
 */
public final class PagedRecords implements AutoCloseable {
    public static final int PAGE_BYTES = PagedHashIndex.PAGE_BYTES;

    private static final int PAGE_SHIFT = 12;
    private static final int FRAMES_PER_CHUNK = 4;
    private static final int FRAME_SHIFT = 2;
    private static final long META_OFFSET = (long) FRAMES_PER_CHUNK * PAGE_BYTES;
    private static final long CHUNK_BYTES = META_OFFSET + FRAMES_PER_CHUNK * 8L;

    /** The least cache the records work with: one chunk of pages. */
    public static final long MIN_CACHE_BYTES = CHUNK_BYTES;

    private static final int NEVER_WRITTEN = -2;
    private static final int ON_DISK = -1;

    private static final long PAGE_MASK = 0xFFFF_FFFFL;
    private static final long REF = 1L << 33;
    private static final long DIRTY = 1L << 34;

    /** The cached page was never written to the page file: evicted clean, it still reads zeros. */
    private static final long FRESH = 1L << 35;

    private static final long FREE = 1L << 62;

    private final MemoryBudget budget;
    private final FileIo io;
    private final Path path;
    private final String purpose;
    private final int recordBytes;
    private final int recordsPerPage;
    private final int maxChunks;

    /** What chunks beyond {@link #maxChunks} took from a shared cache (null: no share). */
    private final CacheShare.Account shared;

    /** {@link #newChunk}, made once: misses call it. */
    private final Supplier<OffHeapBuffer> allocateChunk = this::newChunk;

    private final List<OffHeapBuffer> chunks = new ArrayList<>();
    private final byte[] transfer = new byte[PAGE_BYTES];
    private final ByteBuffer transferView = ByteBuffer.wrap(transfer);
    private final CRC32C crc = new CRC32C();

    /** Per page: [state: frame, or ON_DISK or NEVER_WRITTEN][crc32c of the page on disk]. */
    private OffHeapBuffer pageTable;

    private int pages;
    private long capacityRecords;
    private FileChannel file;
    private int freeHead = -1;
    private int hand;
    private boolean evicting;
    private String failure;
    private boolean closed;

    /** The page and frame of the last access: the common case touches one record many times. */
    private int lastPage = -1;

    private long lastRecord = -1;
    private long lastBase;
    private boolean lastDirty;
    private OffHeapBuffer lastChunk;

    private int lastFrame;
    private long pageReads;
    private long pageWrites;

    /**
     * Records of {@code recordBytes} (at most a page), none yet; {@link #ensureCapacity} makes
     * room. Nothing is taken from the budget before the first record. The page file is {@code
     * path}, created when a page is first evicted and deleted by {@link #close}; {@code purpose}
     * names the records in errors.
     */
    public PagedRecords(
            MemoryBudget budget,
            FileIo io,
            Path path,
            String purpose,
            int recordBytes,
            long cacheBytes) {
        this(budget, io, path, purpose, recordBytes, cacheBytes, null);
    }

    /**
     * As above; past {@code cacheBytes} the cache may grow further with bytes of {@code share}
     * (null: none), given back when it closes.
     */
    public PagedRecords(
            MemoryBudget budget,
            FileIo io,
            Path path,
            String purpose,
            int recordBytes,
            long cacheBytes,
            CacheShare share) {
        Checks.checkRange("record bytes", recordBytes, 8, PAGE_BYTES);
        if (cacheBytes < MIN_CACHE_BYTES) {
            throw new IllegalArgumentException(
                    purpose + " cache of " + cacheBytes + " bytes, must be >= " + MIN_CACHE_BYTES);
        }
        this.budget = budget;
        this.io = io;
        this.path = path;
        this.purpose = purpose;
        this.recordBytes = recordBytes;
        this.recordsPerPage = PAGE_BYTES / recordBytes;
        this.maxChunks =
                (int) Math.min(Integer.MAX_VALUE >>> FRAME_SHIFT, cacheBytes / CHUNK_BYTES);
        this.shared = share == null ? null : share.account();
    }

    /** Why the records became unusable (a page could not be written or read back), or null. */
    public String failure() {
        return failure;
    }

    /** Records that fit the pages the page table covers. */
    public long capacity() {
        return capacityRecords;
    }

    /** Makes records {@code [0, records)} addressable; new ones read as zeros. */
    public void ensureCapacity(long records) {
        checkUsable();
        long needed = (records + recordsPerPage - 1) / recordsPerPage;
        if (needed <= pages) {
            return;
        }
        if (needed > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException(purpose + ": " + records + " records is too many");
        }
        int capacity = pageTable == null ? 0 : (int) (pageTable.capacity() / 8);
        if (needed > capacity) {
            int grown = (int) Math.max(Math.max(needed, 16), 2L * capacity);
            OffHeapBuffer next = OffHeapBuffer.tryAllocate(budget, 8L * grown);
            if (next == null) {
                throw new MemoryBudgetExceededException(
                        "page table of " + purpose + " (" + grown + " pages)",
                        8L * grown,
                        budget.available(),
                        budget.capacity());
            }
            if (pageTable != null) {
                pageTable.copyTo(0, next, 0, 8L * pages);
                pageTable.close();
            }
            pageTable = next;
        }
        for (int p = pages; p < needed; p++) {
            pageTable.putInt(8L * p, NEVER_WRITTEN);
        }
        pages = (int) needed;
        capacityRecords = (long) pages * recordsPerPage;
    }

    public long getLong(long record, int field) {
        checkField(field, Long.BYTES);
        long at = at(record, false);
        return lastChunk.getLong(at + field);
    }

    public void putLong(long record, int field, long value) {
        checkField(field, Long.BYTES);
        long at = at(record, true);
        lastChunk.putLong(at + field, value);
    }

    public int getInt(long record, int field) {
        checkField(field, Integer.BYTES);
        long at = at(record, false);
        return lastChunk.getInt(at + field);
    }

    public void putInt(long record, int field, int value) {
        checkField(field, Integer.BYTES);
        long at = at(record, true);
        lastChunk.putInt(at + field, value);
    }

    public void putBytes(long record, int field, byte[] src, int offset, int length) {
        checkField(field, length);
        long at = at(record, true);
        lastChunk.putBytes(at + field, src, offset, length);
    }

    public void getBytes(long record, int field, byte[] dst, int offset, int length) {
        checkField(field, length);
        long at = at(record, false);
        lastChunk.getBytes(at + field, dst, offset, length);
    }

    public boolean equalsBytes(long record, int field, byte[] other, int offset, int length) {
        checkField(field, length);
        long at = at(record, false);
        return lastChunk.equalsBytes(at + field, other, offset, length);
    }

    /** Native bytes held: cached pages and the page table. */
    public long memoryBytes() {
        return chunks.size() * CHUNK_BYTES + (pageTable == null ? 0 : pageTable.capacity());
    }

    /** Pages read back from the page file. */
    public long pageReads() {
        return pageReads;
    }

    /** Pages written to the page file. */
    public long pageWrites() {
        return pageWrites;
    }

    private void checkField(int field, int length) {
        if (field < 0 || length < 0 || field + length > recordBytes) {
            throw new IndexOutOfBoundsException(
                    "field " + field + " length " + length + " in a record of " + recordBytes);
        }
    }

    /**
     * Where {@code record} starts in {@link #lastChunk}, its page faulted in (and marked dirty for
     * a write). Several fields of one record in a row cost one page lookup.
     */
    private long at(long record, boolean write) {
        if (record == lastRecord) {
            if (write && !lastDirty) {
                markDirty(lastFrame);
                lastDirty = true;
            }
            return lastBase;
        }
        int f = frame(record, write);
        lastRecord = record;
        lastDirty = write;
        lastChunk = chunkOf(f);
        lastBase = frameBase(f) + (record - (long) lastPage * recordsPerPage) * recordBytes;
        return lastBase;
    }

    private int frame(long record, boolean write) {
        if (record < 0 || record >= capacityRecords) {
            throw new IndexOutOfBoundsException(
                    purpose + ": record " + record + " of " + capacity());
        }
        int page = (int) (record / recordsPerPage);
        if (page == lastPage) {
            if (write) {
                markDirty(lastFrame);
            }
            return lastFrame;
        }
        checkUsable();
        int state = pageTable.getInt(8L * page);
        int f;
        if (state >= 0) {
            f = state;
            if (evicting) {
                long m = meta(f);
                if ((m & REF) == 0) {
                    setMeta(f, m | REF);
                }
            }
        } else {
            f = acquireFrame();
            try {
                if (state == NEVER_WRITTEN) {
                    OffHeapBuffer c = chunkOf(f);
                    long base = frameBase(f);
                    for (int i = 0; i < PAGE_BYTES; i += 8) {
                        c.putLong(base + i, 0);
                    }
                } else {
                    readPage(page);
                    chunkOf(f).putBytes(frameBase(f), transfer, 0, PAGE_BYTES);
                }
            } catch (RuntimeException e) {
                releaseFrame(f);
                throw e;
            }
            pageTable.putInt(8L * page, f);
            setMeta(f, page | REF | (state == NEVER_WRITTEN ? FRESH : 0));
        }
        if (write) {
            markDirty(f);
        }
        lastPage = page;
        lastFrame = f;
        return f;
    }

    private int acquireFrame() {
        if (freeHead >= 0) {
            int f = freeHead;
            freeHead = (int) (meta(f) & PAGE_MASK);
            return f;
        }
        OffHeapBuffer c =
                CacheShare.growChunk(
                        shared,
                        chunks.size(),
                        maxChunks,
                        Integer.MAX_VALUE >>> FRAME_SHIFT,
                        CHUNK_BYTES,
                        allocateChunk);
        if (c != null) {
            chunks.add(c);
            int first = (chunks.size() - 1) << FRAME_SHIFT;
            for (int f = first + FRAMES_PER_CHUNK - 1; f >= first; f--) {
                releaseFrame(f);
            }
            return acquireFrame();
        }
        if (chunks.isEmpty()) {
            throw new MemoryBudgetExceededException(
                    "page cache of " + purpose, CHUNK_BYTES, budget.available(), budget.capacity());
        }
        return evictOne();
    }

    /**
     * The first chunk from the budget, later ones as cache; null if the budget refuses. The first
     * chunk is the least the records work with; more is cache, which leaves the budget's headroom
     * to structures that cannot give way.
     */
    private OffHeapBuffer newChunk() {
        return chunks.isEmpty()
                ? OffHeapBuffer.tryAllocate(budget, CHUNK_BYTES)
                : OffHeapBuffer.tryAllocateForCache(budget, CHUNK_BYTES);
    }

    private int evictOne() {
        evicting = true;
        lastPage = -1;
        lastRecord = -1;
        int n = chunks.size() << FRAME_SHIFT;
        for (int sweep = 0; sweep < 3 * n; sweep++) {
            int f = hand;
            hand = hand + 1 == n ? 0 : hand + 1;
            long m = meta(f);
            if ((m & FREE) != 0) {
                continue;
            }
            if ((m & REF) != 0) {
                setMeta(f, m & ~REF);
                continue;
            }
            int page = (int) (m & PAGE_MASK);
            if ((m & DIRTY) != 0) {
                writePage(page, f);
                pageTable.putInt(8L * page, ON_DISK);
            } else {
                pageTable.putInt(8L * page, (m & FRESH) != 0 ? NEVER_WRITTEN : ON_DISK);
            }
            setMeta(f, 0);
            return f;
        }
        throw new IllegalStateException(purpose + " cache: no page to evict among " + n);
    }

    private void releaseFrame(int f) {
        setMeta(f, FREE | (freeHead & PAGE_MASK));
        freeHead = f;
    }

    private void markDirty(int f) {
        long m = meta(f);
        if ((m & DIRTY) == 0) {
            setMeta(f, m | DIRTY);
        }
    }

    private OffHeapBuffer chunkOf(int frame) {
        return chunks.get(frame >>> FRAME_SHIFT);
    }

    private static long frameBase(int frame) {
        return (long) (frame & (FRAMES_PER_CHUNK - 1)) << PAGE_SHIFT;
    }

    private long meta(int frame) {
        return chunkOf(frame).getLong(META_OFFSET + ((long) (frame & (FRAMES_PER_CHUNK - 1)) << 3));
    }

    private void setMeta(int frame, long m) {
        chunkOf(frame).putLong(META_OFFSET + ((long) (frame & (FRAMES_PER_CHUNK - 1)) << 3), m);
    }

    // ---------------------------------------------------------------- page file

    private void writePage(int page, int frame) {
        chunkOf(frame).getBytes(frameBase(frame), transfer, 0, PAGE_BYTES);
        crc.reset();
        crc.update(transfer, 0, PAGE_BYTES);
        try {
            FileChannel ch = file();
            transferView.clear();
            long at = PageFileDescriptor.pageOffset(page);
            while (transferView.hasRemaining()) {
                ch.write(transferView, at + transferView.position());
            }
        } catch (IOException e) {
            failure = "writing page " + page + " to " + path + " failed: " + e;
            throw new UncheckedIOException(
                    "Could not write page " + page + " of " + purpose + " to " + path, e);
        }
        pageTable.putInt(8L * page + 4, (int) crc.getValue());
        pageWrites++;
    }

    private void readPage(int page) {
        long at = PageFileDescriptor.pageOffset(page);
        try {
            if (file == null) {
                throw new IOException("page file was never written");
            }
            transferView.clear();
            while (transferView.hasRemaining()) {
                if (file.read(transferView, at + transferView.position()) < 0) {
                    throw new IOException("end of file");
                }
            }
        } catch (IOException e) {
            failure = "reading page " + page + " of " + path + " failed: " + e;
            throw new UncheckedIOException(
                    "Could not read page " + page + " of " + purpose + " in " + path, e);
        }
        crc.reset();
        crc.update(transfer, 0, PAGE_BYTES);
        if ((int) crc.getValue() != pageTable.getInt(8L * page + 4)) {
            failure = "page " + page + " of " + path + " is corrupt";
            throw new UncheckedIOException(
                    new IOException(
                            "Corrupt page "
                                    + page
                                    + " of "
                                    + purpose
                                    + " at offset "
                                    + at
                                    + " of "
                                    + path
                                    + ": checksum mismatch"));
        }
        pageReads++;
    }

    private FileChannel file() throws IOException {
        if (file == null) {
            io.delete(path); // a scratch file left by a crashed process
            FileChannel ch = io.openForAppend(path);
            try {
                ByteBuffer header =
                        ByteBuffer.allocate(PageFileDescriptor.HEADER_LENGTH)
                                .order(ByteOrder.LITTLE_ENDIAN);
                PageFileDescriptor.writeHeader(
                        header, PageFileDescriptor.RECORDS_MAGIC, recordBytes);
                header.flip();
                while (header.hasRemaining()) {
                    ch.write(header, header.position());
                }
            } catch (IOException | RuntimeException e) {
                ch.close();
                io.delete(path);
                throw e;
            }
            file = ch;
        }
        return file;
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException(purpose + " is closed");
        }
        if (failure != null) {
            throw new IllegalStateException(purpose + " unusable: " + failure);
        }
    }

    /** Frees the cache and page table and deletes the page file. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (OffHeapBuffer c : chunks) {
            c.close();
        }
        chunks.clear();
        if (shared != null) {
            shared.close();
        }
        freeHead = -1;
        lastPage = -1;
        lastRecord = -1;
        lastChunk = null;
        if (pageTable != null) {
            pageTable.close();
            pageTable = null;
        }
        if (file != null) {
            try {
                file.close();
                io.delete(path);
            } catch (IOException e) {
                throw new UncheckedIOException("Could not delete page file " + path, e);
            } finally {
                file = null;
            }
        }
    }
}
