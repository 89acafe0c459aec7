package io.flowkv.core.aar;

import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapLongArray;

/**
 * An in-memory index of one partition's buffered chain by key hash, built when a window whose data
 * is all still buffered starts firing: every key of the window is then read and cleared once, and
 * without it each of those calls would scan the whole chain. The alternative, writing the chain to
 * the partition's log to index it there, wrote and re-read data that is deleted right after.
 *
 * <p>It covers the chain up to {@link #tail}; records appended later are scanned. Records of keys
 * whose 64-bit hashes collide share a list, so readers still compare keys. The lists and the hash
 * index are in native memory charged to the budget; {@link #close} returns them.
 *
 * <pre>
 *   cursor c: [record position 8 B][cursor of the next record with the same hash, or -1 8 B]
 * </pre>
 */
final class ChainIndex implements AutoCloseable {
    private static final int NO_NEXT = -1;
    private static final LongHashIndex.KeyMatcher SAME_HASH = v -> true;

    private final LongHashIndex heads;
    private final OffHeapLongArray lists;

    /** The last record covered. */
    final long tail;

    /** Chain records (of any type) covered, to tell when the uncovered rest has grown long. */
    final int covered;

    private ChainIndex(LongHashIndex heads, OffHeapLongArray lists, long tail, int covered) {
        this.heads = heads;
        this.lists = lists;
        this.tail = tail;
        this.covered = covered;
    }

    /** Reads one record's key hash and tells whether it is an APPEND. */
    interface Records {
        long next(long record);

        boolean isAppend(long record);

        long keyHash(long record);
    }

    /**
     * Indexes the APPEND records of the chain from {@code head} to {@code tail}; null if the budget
     * cannot hold the index.
     */
    static ChainIndex build(
            MemoryBudget budget, Records chain, long head, long tail, int appends, int records) {
        OffHeapLongArray lists;
        LongHashIndex heads;
        try {
            lists = OffHeapLongArray.allocate(budget, 2L * Math.max(1, appends), "AAR chain index");
        } catch (MemoryBudgetExceededException e) {
            return null;
        }
        try {
            heads = new LongHashIndex(budget, (int) Math.min(1 << 30, appends * 2L));
        } catch (MemoryBudgetExceededException e) {
            lists.close();
            return null;
        }
        int n = 0;
        try {
            for (long r = head; ; r = chain.next(r)) {
                if (chain.isAppend(r)) {
                    lists.set(2L * n, r);
                    lists.set(2L * n + 1, NO_NEXT);
                    long hash = chain.keyHash(r);
                    long firstLast = heads.get(hash, SAME_HASH);
                    if (firstLast == LongHashIndex.NONE) {
                        heads.put(hash, pack(n, n), SAME_HASH);
                    } else {
                        lists.set(2L * lastOf(firstLast) + 1, n);
                        heads.put(hash, pack(firstOf(firstLast), n), SAME_HASH);
                    }
                    n++;
                }
                if (r == tail) {
                    break;
                }
            }
        } catch (MemoryBudgetExceededException e) {
            heads.release();
            lists.close();
            return null;
        }
        return new ChainIndex(heads, lists, tail, records);
    }

    /** The first covered record with this key hash, as a cursor for {@link #record}; -1 if none. */
    int first(long keyHash) {
        long firstLast = heads.get(keyHash, SAME_HASH);
        return firstLast == LongHashIndex.NONE ? NO_NEXT : firstOf(firstLast);
    }

    /** The cursor after {@code cursor}, or -1. */
    int next(int cursor) {
        return (int) lists.get(2L * cursor + 1);
    }

    long record(int cursor) {
        return lists.get(2L * cursor);
    }

    long memoryBytes() {
        return lists.memoryBytes() + heads.memoryBytes();
    }

    @Override
    public void close() {
        heads.release();
        lists.close();
    }

    private static long pack(int first, int last) {
        return ((long) first << 32) | (last & 0xFFFFFFFFL);
    }

    private static int firstOf(long firstLast) {
        return (int) (firstLast >>> 32);
    }

    private static int lastOf(long firstLast) {
        return (int) firstLast;
    }
}
