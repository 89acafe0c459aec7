package io.flowkv.core.aur;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapArena;

/**
 * Where the flushed frames of each window are: one chain per window, newest frame first, in native
 * memory charged to the budget. A read that has nothing to bet on (no other window with a known
 * trigger time to prefetch) follows its window's chain instead of scanning the whole index log, so
 * it costs O(frames of that window): count windows, global windows and any window whose trigger
 * time is unknown are read this way.
 *
 * <pre>
 *   0                 8                 16         20
 *  +-----------------+-----------------+----------+
 *  | previous record |  data position  | frame len|
 *  +-----------------+-----------------+----------+
 * </pre>
 *
 * Records are never freed one by one: a removed window leaves its records behind, and the store
 * copies the live chains into a new instance when the dead ones outweigh them (and after a
 * compaction, which moves every frame, rebuilds them anyway). A record the budget refuses returns
 * {@link OffHeapArena#NO_SPACE}; the store then reads that window by an index scan.
 */
final class FrameChains implements AutoCloseable {
    static final long END = -1L;

    /** The head of a window whose chain lost a record: read it by an index scan. */
    static final long BROKEN = -2L;

    private static final int PREVIOUS = 0;
    private static final int POSITION = 8;
    private static final int LENGTH = 16;
    private static final int RECORD_BYTES = 20;
    private static final int CHUNK_BYTES = 4 * 1024;

    private final OffHeapArena arena;
    private long records;

    FrameChains(MemoryBudget budget) {
        this.arena = new OffHeapArena(budget, CHUNK_BYTES);
    }

    /**
     * Adds a frame after {@code previous} ({@link #END} for a window's first); returns the new
     * record, the window's new chain head, or {@link OffHeapArena#NO_SPACE}.
     */
    long append(long previous, long position, int length) {
        long r = arena.tryAllocate(RECORD_BYTES);
        if (r == OffHeapArena.NO_SPACE) {
            return r;
        }
        arena.putLong(r, PREVIOUS, previous);
        arena.putLong(r, POSITION, position);
        arena.putInt(r, LENGTH, length);
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
        return r == OffHeapArena.NO_SPACE ? BROKEN : r;
    }

    long previous(long record) {
        return arena.getLong(record, PREVIOUS);
    }

    long position(long record) {
        return arena.getLong(record, POSITION);
    }

    int length(long record) {
        return arena.getInt(record, LENGTH);
    }

    /** Records appended, live or not. */
    long records() {
        return records;
    }

    long memoryBytes() {
        return arena.reservedBytes();
    }

    @Override
    public void close() {
        arena.close();
    }
}
