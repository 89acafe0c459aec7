package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapLongArray;

import java.util.function.IntPredicate;

/**
 * The data frames one batch read of the AUR store collected, from an index scan or from frame
 * chains, before it reads them: frame {@code i} is the pair [window id << 32 | frame length: long]
 * [data position: long] in an off-heap array charged to the budget (null until first needed). When
 * the budget refuses room, the prefetched copies go first.
 */
final class FrameBatch implements AutoCloseable {
    /** Which long of a frame pair is its data position. */
    private static final int POSITION = 1;

    private final MemoryBudget budget;
    private final PrefetchBuffer prefetch;
    private OffHeapLongArray frames;
    private int size;

    FrameBatch(MemoryBudget budget, PrefetchBuffer prefetch) {
        this.budget = budget;
        this.prefetch = prefetch;
    }

    int size() {
        return size;
    }

    void clear() {
        size = 0;
    }

    int id(int i) {
        return (int) (frames.get(2L * i) >>> 32);
    }

    int length(int i) {
        return (int) frames.get(2L * i);
    }

    long position(int i) {
        return frames.get(2L * i + POSITION);
    }

    private void set(int i, int id, long position, int length) {
        frames.set(2L * i, (long) id << 32 | (length & 0xFFFFFFFFL));
        frames.set(2L * i + POSITION, position);
    }

    /**
     * Gives frame {@code i} the window {@code id} (a read ahead numbers its windows its own way).
     */
    void relabel(int i, int id) {
        set(i, id, position(i), length(i));
    }

    /**
     * The end (exclusive) of the frames from {@code i} that one read takes: frame {@code i} and
     * those after it that {@code take} accepts, adjacent in the same data log, together at most
     * {@code maxBytes} (frame {@code i} alone may be larger).
     */
    int runEnd(int i, int maxBytes, IntPredicate take) {
        long first = position(i);
        long start = Positions.offset(first);
        long end = start + length(i);
        int j = i + 1;
        while (j < size
                && take.test(j)
                && Positions.segment(position(j)) == Positions.segment(first)
                && Positions.offset(position(j)) == end
                && end + length(j) - start <= maxBytes) {
            end += length(j);
            j++;
        }
        return j;
    }

    /** Bytes from the start of frame {@code i} to the end of frame {@code j - 1}: one read's. */
    int span(int i, int j) {
        return (int)
                (Positions.offset(position(j - 1)) + length(j - 1) - Positions.offset(position(i)));
    }

    /** Adds a frame; false, adding nothing, if the budget refuses room for it. */
    boolean tryAdd(int id, long position, int length) {
        if (size == PairHeap.capacity(frames) && !reserve(size + 1, false)) {
            return false;
        }
        set(size++, id, position, length);
        return true;
    }

    /** Adds a frame; a budget that refuses room for it throws. */
    void add(int id, long position, int length) {
        reserve(size + 1, true);
        set(size++, id, position, length);
    }

    /**
     * Adds the window's frames from its chain at {@code head}, oldest first, as an index scan would
     * have found them. Returns false, adding nothing, if the budget refused the room for them (and
     * {@code required} is false).
     */
    boolean addChain(int id, FrameChains chains, long head, long frameCount, boolean required) {
        int end = size + (int) frameCount;
        if (!reserve(end, required)) {
            return false;
        }
        int k = end;
        for (long r = head; r >= 0; r = chains.previous(r)) {
            set(--k, id, chains.position(r), chains.length(r));
        }
        size = end;
        return true;
    }

    /** Drops every frame but those of window {@code id}. */
    void keepOnly(int id) {
        int kept = 0;
        for (int i = 0; i < size; i++) {
            if (id(i) == id) {
                set(kept++, id, position(i), length(i));
            }
        }
        size = kept;
    }

    /**
     * Puts the frames in file order, as a scan would have found them, so that adjacent frames of
     * different windows are read together: in log order, then by offset, so each window's frames
     * come oldest first ({@link DataLogs}).
     */
    void sortInFileOrder(DataLogs logs) throws CorruptLogException {
        if (logs.idsFollowOrder()) {
            PairHeap.sort(frames, POSITION, size);
            return;
        }
        for (int i = 0; i < size; i++) {
            set(i, id(i), logs.toRankPosition(position(i)), length(i));
        }
        PairHeap.sort(frames, POSITION, size);
        for (int i = 0; i < size; i++) {
            set(i, id(i), logs.fromRankPosition(position(i)), length(i));
        }
    }

    /**
     * Grows the array to {@code needed} frames; a refusing budget first loses the prefetched
     * copies. Returns false if it still refuses, unless {@code required}: then the refusal is
     * thrown.
     */
    private boolean reserve(int needed, boolean required) {
        frames = PairHeap.withRoom(budget, frames, needed, size);
        if (PairHeap.capacity(frames) >= needed) {
            return true;
        }
        prefetch.evictAll();
        frames = PairHeap.withRoom(budget, frames, needed, size);
        if (PairHeap.capacity(frames) >= needed) {
            return true;
        }
        if (!required) {
            return false;
        }
        throw new MemoryBudgetExceededException(
                "AUR entries of the window read",
                16L * needed,
                budget.available(),
                budget.capacity());
    }

    long memoryBytes() {
        return frames == null ? 0 : frames.memoryBytes();
    }

    @Override
    public void close() {
        if (frames != null) {
            frames.close();
            frames = null;
        }
        size = 0;
    }
}
