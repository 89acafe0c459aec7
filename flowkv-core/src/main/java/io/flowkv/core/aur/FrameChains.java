package io.flowkv.core.aur;

import io.flowkv.core.index.CacheShare;
import io.flowkv.core.index.PagedRecords;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import java.nio.file.Path;

/**
 * Where the flushed frames of each window are: one chain per window, newest frame first, in {@link
 * PagedRecords} (a bounded page cache in native memory charged to the budget, the rest in a scratch
 * page file). A read that has nothing to bet on (no other window with a known trigger time to
 * prefetch) follows its window's chain instead of scanning the whole index log, so it costs
 * O(frames of that window): count windows, global windows and any window whose trigger time is
 * unknown are read this way.
 *
 * <pre>
 *   0                 8                 16         20         24
 *  +-----------------+-----------------+----------+----------+
 *  | previous record |  data position  | frame len| (unused) |
 *  +-----------------+-----------------+----------+----------+
 * </pre>
 *
 * Records are numbered in append order and never freed one by one: a removed window leaves its
 * records behind, and the store copies the live chains into a new instance when the dead ones
 * outweigh them (and after a compaction, which moves every frame, rebuilds them anyway). A record
 * the budget refuses (the page table cannot grow, or no page can be cached at all) returns {@link
 * #NO_SPACE}; the store then reads that window by an index scan.
 */
final class FrameChains implements AutoCloseable {
    static final long END = -1L;

    /** The head of a window whose chain lost a record: read it by an index scan. */
    static final long BROKEN = -2L;

    static final long NO_SPACE = -3L;

    private static final int PREVIOUS = 0;
    private static final int POSITION = 8;
    private static final int LENGTH = 16;
    private static final int RECORD_BYTES = 24;

    private final PagedRecords pages;
    private long records;

    /**
     * Chains whose page cache takes {@code cacheBytes}, and then more from {@code share}; pages
     * spill to {@code file}.
     */
    FrameChains(MemoryBudget budget, FileIo io, Path file, long cacheBytes, CacheShare share) {
        this.pages =
                new PagedRecords(
                        budget,
                        io,
                        file,
                        "AUR frame chains",
                        RECORD_BYTES,
                        Math.max(PagedRecords.MIN_CACHE_BYTES, cacheBytes),
                        share);
    }

    /**
     * Adds a frame after {@code previous} ({@link #END} for a window's first); returns the new
     * record, the window's new chain head, or {@link #NO_SPACE}.
     */
    long append(long previous, long position, int length) {
        long r = records;
        try {
            pages.ensureCapacity(r + 1);
            pages.putLong(r, PREVIOUS, previous);
            pages.putLong(r, POSITION, position);
            pages.putInt(r, LENGTH, length);
        } catch (MemoryBudgetExceededException e) {
            // No page table or no first page: the window is read by an index scan instead.
            return NO_SPACE;
        }
        records++;
        return r;
    }

    /**
     * Adds a frame after {@code head} and returns the new head; {@link #BROKEN} if {@code head}
     * already was, or if the budget refused the record.
     */
    long extend(long head, long position, int length) {
        if (head == BROKEN) {
            return BROKEN;
        }
        long r = append(head, position, length);
        return r == NO_SPACE ? BROKEN : r;
    }

    long previous(long record) {
        return pages.getLong(record, PREVIOUS);
    }

    long position(long record) {
        return pages.getLong(record, POSITION);
    }

    int length(long record) {
        return pages.getInt(record, LENGTH);
    }

    /** Records appended, live or not. */
    long records() {
        return records;
    }

    /** Why the chains became unusable (a scratch page was lost), or null. */
    String failure() {
        return pages.failure();
    }

    long memoryBytes() {
        return pages.memoryBytes();
    }

    long pageReads() {
        return pages.pageReads();
    }

    @Override
    public void close() {
        pages.close();
    }
}
