package io.flowkv.core.aur;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;
import io.flowkv.core.memory.OffHeapLongArray;

import static io.flowkv.core.aur.WindowStatTable.NO_ID;
import static io.flowkv.core.aur.WindowStatTable.SERVED;

/**
 * The AUR store's prefetch buffer and the ranking that fills it (FlowKV §4.2): when a read misses,
 * the {@code readBatchRatio x live windows} windows nearest to their trigger time are bet on and
 * loaded with it, as many as the buffer has room for.
 *
 * <p>Each prefetched window's values are a copy in native memory, held by the {@link
 * WindowStatTable} entry of the window; this class accounts for them against the buffer's limit and
 * decides which go. A copy goes once its window has been served, when room is needed (oldest
 * first), or when the budget is short. The bets of the read now running are a max-heap of [rank,
 * window id] pairs while they are chosen, nearest first after ({@link PairHeap}).
 *
 * <p>A {@link ReadAhead} may be filling some copies on another thread: before this evicts or grows
 * one of them, or evicts them all, it waits for that read to finish ({@link #guardedBy}).
 */
final class PrefetchBuffer implements AutoCloseable {
    /** Which long of a bet pair is its rank. */
    private static final int BET_RANK = 0;

    /**
     * A pass ranks the windows for this many reads ahead of {@code readBatchRatio x live windows}
     * each: while nothing changes, the next seven reads ahead take theirs from it.
     */
    static final int READS_PER_RANKING = 8;

    private final WindowStatTable table;
    private final MemoryBudget budget;
    private final long limit;
    private final double readBatchRatio;

    /** Bytes of the copies held. */
    private long used;

    /** Load order of the copies, to evict the oldest first. */
    private long loadStamp;

    /**
     * Null until the first bet. Holds the ranking of the last pass over every window, nearest
     * first, in {@code [0, ranked)}; the bets of the read now running are {@code [betStart,
     * betStart + betCount)} of it.
     */
    private OffHeapLongArray bets;

    private int betStart;
    private int betCount;

    /** Windows the last pass ranked; those from {@link #rankCursor} on are not yet bet on. */
    private int ranked;

    private int rankCursor;

    /** {@link WindowStatTable#rankChanges()} when the last pass ran. */
    private long rankedAt;

    /** Passes over every window so far (for tests). */
    private long passes;

    /** The read ahead whose windows' copies this must not touch while it runs; null: none. */
    private ReadAhead ahead;

    PrefetchBuffer(WindowStatTable table, MemoryBudget budget, long limit, double readBatchRatio) {
        this.table = table;
        this.budget = budget;
        this.limit = limit;
        this.readBatchRatio = readBatchRatio;
    }

    /** Settles {@code ahead}'s read before touching a copy it fills. */
    void guardedBy(ReadAhead ahead) {
        this.ahead = ahead;
    }

    /**
     * Plans the batch of a miss on {@code requested}: drops the copies already served, makes room
     * for the requested window's values by evicting the oldest copies, and bets on the predicted
     * windows that fit the room left. Marks the requested window and the bets with {@code stamp}.
     * Returns whether the requested window's values should be kept in the buffer too.
     *
     * @param now the read clock: the latest trigger time read so far
     */
    boolean plan(int requested, long stamp, long now) {
        evictServed();
        long need = table.diskBytes(requested);
        while (need > limit - used && evictOldest()) {
            // Older bets make room for the window asked for now.
        }
        boolean cacheRequested = need <= limit - used;
        long room = limit - used - (cacheRequested ? need : 0);
        table.setBatchStamp(requested, stamp);
        rank(requested, now);
        keepBets(room, stamp, requested);
        return cacheRequested;
    }

    /**
     * Plans a read ahead of any miss: drops the copies already served and bets on the predicted
     * windows that fit the room left, marking them with {@code stamp}. Returns the bets; none while
     * less than a quarter of the buffer is free.
     *
     * <p>The windows are ranked by a pass over all of them, for several reads ahead ({@value
     * #READS_PER_RANKING}): the next read ahead goes on from where this one stopped, as long as no
     * window's trigger time or eligibility changed since ({@link WindowStatTable#rankChanges()}).
     * When windows fire back to back, at the end of the input or on a watermark's jump, nothing
     * changes between reads ahead, and the store passes over every window once per eight reads
     * ahead instead of at each.
     */
    int planAhead(long stamp, long now) {
        evictServed();
        long room = limit - used;
        betStart = 0;
        betCount = 0;
        if (room < limit / 4) {
            return 0;
        }
        boolean reused = rankingCurrent();
        if (!reused) {
            rank(NO_ID, now);
        }
        if (!keepBets(room, stamp, NO_ID) && reused) {
            // The ranking ran out of windows before the room did: a pass may find more.
            dropBets();
            rank(NO_ID, now);
            keepBets(room, stamp, NO_ID);
        }
        return betCount;
    }

    /** Passes over every window that ranked them so far (for tests). */
    long passes() {
        return passes;
    }

    /** Whether the windows not yet bet on from the last pass are still ranked right. */
    private boolean rankingCurrent() {
        return rankCursor < ranked && rankedAt == table.rankChanges();
    }

    /** Ranks the windows now (a pass over all of them): see {@link #selectPredicted}. */
    private void rank(int requested, long now) {
        passes++;
        ranked = selectPredicted(requested, now);
        rankCursor = 0;
        rankedAt = table.rankChanges();
    }

    /**
     * Keeps, from the ranking's cursor on, the nearest windows still to bet on whose bytes fit
     * {@code room}, at most {@code readBatchRatio x live windows} of them, and moves the cursor
     * past them. Windows that stopped being candidates since the ranking (fired, read, prefetched)
     * are passed over. Returns false if the ranking ran out first (neither the room nor the batch
     * ratio stopped it).
     */
    private boolean keepBets(long room, long stamp, int requested) {
        int perRead = predictionLimit();
        int kept = rankCursor;
        int at = rankCursor;
        int candidates = 0;
        while (at < ranked && candidates < perRead) {
            int id = (int) bets.get(2L * at + 1);
            if (id == requested || !candidate(id)) {
                at++;
                continue;
            }
            candidates++;
            long bytes = table.diskBytes(id);
            if (bytes > room) {
                // The prefetch buffer bounds N: load fewer windows rather than exceed it.
                break;
            }
            room -= bytes;
            table.setBatchStamp(id, stamp);
            if (kept != at) {
                setBet(kept, betRank(at), id);
            }
            kept++;
            at++;
        }
        betStart = rankCursor;
        betCount = kept - rankCursor;
        rankCursor = at;
        return at < ranked || candidates == perRead;
    }

    /**
     * Whether a window may be bet on: it has flushed data and a known ETT, and is neither
     * prefetched nor read since its last append.
     */
    private boolean candidate(int id) {
        return table.packedEtt(id) != TriggerTimePredictor.UNKNOWN
                && table.inUse(id)
                && table.diskBytes(id) != 0
                && table.prefetched(id) == null
                && (table.flags(id) & SERVED) == 0;
    }

    /** {@code readBatchRatio x live windows}, the most windows one read bets on. */
    private int predictionLimit() {
        return (int)
                Math.min(Integer.MAX_VALUE - 8, (long) Math.ceil(readBatchRatio * table.size()));
    }

    /**
     * Puts into the ranking the ids of the {@value #READS_PER_RANKING} {@code x readBatchRatio x
     * live windows} windows nearest to their trigger, nearest first, and returns how many.
     * Candidates have flushed data, are not prefetched, were not read since their last append, and
     * have a known ETT. Time to ETT is {@code max(0, ett - now)}, ranked as {@code max(ett, now)}
     * which orders the same without overflow.
     */
    private int selectPredicted(int requested, long now) {
        if (readBatchRatio == 0.0
                || table.knownTriggerTimes()
                        <= (requested != NO_ID
                                        && table.ett(requested) != TriggerTimePredictor.UNKNOWN
                                ? 1
                                : 0)) {
            // No other window has a trigger time to bet on: skip the pass over every window.
            return 0;
        }
        int perRead = predictionLimit();
        int n = (int) Math.min(Integer.MAX_VALUE - 8, (long) READS_PER_RANKING * perRead);
        bets = PairHeap.withRoom(budget, bets, n, 0);
        if (PairHeap.capacity(bets) < perRead) {
            bets = PairHeap.withRoom(budget, bets, perRead, 0);
        }
        // A full budget shrinks the ranking, then the bet, as a full prefetch buffer does: predict
        // fewer.
        n = Math.min(n, PairHeap.capacity(bets));
        if (n == 0) {
            return 0;
        }
        int size = 0;
        for (int id = 0, end = table.highWater(); id < end; id++) {
            // The packed trigger times first: a window that could not enter the bets (no ETT,
            // or ranked after every bet once there are n) costs no read of its record.
            long ett = table.packedEtt(id);
            if (ett == TriggerTimePredictor.UNKNOWN || id == requested) {
                continue;
            }
            long rank = Math.max(ett, now);
            if (size == n && rank >= betRank(0)) {
                continue;
            }
            if (!candidate(id)) {
                continue;
            }
            if (size < n) {
                setBet(size, rank, id);
                PairHeap.siftUp(bets, BET_RANK, size++);
            } else {
                setBet(0, rank, id);
                PairHeap.siftDown(bets, BET_RANK, 0, size);
            }
        }
        PairHeap.sortHeap(bets, BET_RANK, size);
        return size;
    }

    /** The windows the read now running bets on. */
    int betCount() {
        return betCount;
    }

    /** The {@code i}-th window bet on, nearest to its trigger first. */
    int betId(int i) {
        return (int) bets.get(2L * (betStart + i) + 1);
    }

    /** Forgets the bets of the read now running and their marks, and the ranking they came from. */
    void dropBets() {
        for (int i = 0; i < betCount; i++) {
            table.setBatchStamp(betId(i), 0);
        }
        betCount = 0;
        ranked = 0;
        rankCursor = 0;
    }

    private long betRank(int i) {
        return bets.get(2L * i + BET_RANK);
    }

    private void setBet(int i, long rank, int id) {
        bets.set(2L * i, rank);
        bets.set(2L * i + 1, id);
    }

    /**
     * Takes {@code payload} bytes of window {@code id} into the buffer if they fit it and the
     * budget: the copy, empty yet, is then the window's {@link WindowStatTable#prefetched}.
     */
    boolean admit(int id, long payload) {
        OffHeapBuffer copy =
                payload > 0 && used + payload <= limit
                        ? OffHeapBuffer.tryAllocateForCache(budget, payload)
                        : null;
        if (copy == null) {
            return false;
        }
        table.setPrefetched(id, copy, ++loadStamp);
        used += payload;
        return true;
    }

    /**
     * Grows window {@code id}'s copy by {@code extra} bytes, the old bytes copied over, and returns
     * the grown copy for the caller to fill from offset {@code old size}. Evicts the copy instead,
     * and returns null, if the buffer or the budget has no room.
     */
    OffHeapBuffer grow(int id, long extra) {
        settleIfHeld(id);
        OffHeapBuffer old = table.prefetched(id);
        long size = old.capacity();
        OffHeapBuffer values =
                used + extra <= limit
                        ? OffHeapBuffer.tryAllocateForCache(budget, size + extra)
                        : null;
        if (values == null) {
            evict(id);
            return null;
        }
        old.copyTo(0, values, 0, size);
        old.close();
        table.setPrefetched(id, values, 0);
        used += extra;
        return values;
    }

    void evict(int id) {
        settleIfHeld(id);
        OffHeapBuffer values = table.prefetched(id);
        if (values != null) {
            table.clearPrefetched(id);
            used -= values.capacity();
            values.close();
        }
    }

    private void settleIfHeld(int id) {
        if (ahead != null && ahead.holds(id)) {
            ahead.settle();
        }
    }

    private void evictServed() {
        for (int i = table.prefetchedCount() - 1; i >= 0; i--) {
            int id = table.prefetchedId(i);
            if ((table.flags(id) & SERVED) != 0) {
                evict(id);
            }
        }
    }

    private boolean evictOldest() {
        int oldest = NO_ID;
        for (int i = 0, n = table.prefetchedCount(); i < n; i++) {
            int id = table.prefetchedId(i);
            if (oldest == NO_ID || table.prefetchStamp(id) < table.prefetchStamp(oldest)) {
                oldest = id;
            }
        }
        if (oldest == NO_ID) {
            return false;
        }
        evict(oldest);
        return true;
    }

    /** Drops every copy: the budget is needed elsewhere. */
    void evictAll() {
        if (ahead != null) {
            ahead.settle();
        }
        while (table.prefetchedCount() > 0) {
            evict(table.prefetchedId(table.prefetchedCount() - 1));
        }
    }

    /** Bytes of the copies held. */
    long used() {
        return used;
    }

    /** Budget held: the copies and the bets. */
    long memoryBytes() {
        return used + (bets == null ? 0 : bets.memoryBytes());
    }

    /** Releases the copies (through the table, which may be unusable by now) and the bets. */
    @Override
    public void close() {
        if (ahead != null) {
            ahead.settle();
        }
        used -= table.closePrefetched();
        if (bets != null) {
            bets.close();
            bets = null;
        }
        ranked = 0;
        rankCursor = 0;
        betCount = 0;
    }
}
