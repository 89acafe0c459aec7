package io.flowkv.core.rmw;

import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;

/**
 * The working memory of one compaction step: the put frames met while scanning old segments, in log
 * order, and the same entries ordered by where the index keeps them, so that the index is consulted
 * page after page in file order instead of at random.
 *
 * <pre>
 *   entries, in log order (24 B each)        order (4 B each)         buckets (4 B each)
 *   +----------+-----------+----------+      +-----+-----+-----+      +-----+-----+-----+
 *   | hash     | position  | moved    | ...  |  i  |  j  | ... |      | n0  | n1  | ... |
 *   +----------+-----------+----------+      +-----+-----+-----+      +-----+-----+-----+
 *     position NONE: dead (the index does    entry numbers sorted      a counting sort's
 *     not point at it)                       by index placement        counts by placement
 * </pre>
 *
 * The order is a counting sort on the top bits of {@link PagedHashIndex#placementOrder}: linear in
 * the batch, and exact to within a bucket, which spans a few neighbouring index pages at most (the
 * buckets grow with the batch). Native memory, taken from the budget for one compaction and given
 * back after it; a refused budget shrinks the batch, down to {@link #MIN_ENTRIES}.
 */
final class CompactionBatch implements AutoCloseable {
    static final int MIN_ENTRIES = 256;

    /** Entries per batch at most: the order is a list of ints. */
    static final int MAX_ENTRIES = 1 << 26;

    private static final int ENTRY_BYTES = 24;
    private static final int HASH = 0;
    private static final int POSITION = 8;
    private static final int MOVED = 16;
    private static final int MAX_BUCKET_BITS = 16;

    private final OffHeapBuffer memory;
    private final int capacity;
    private final int bucketBits;
    private final long orderBase;
    private final long bucketBase;
    private int size;

    private CompactionBatch(OffHeapBuffer memory, int capacity, int bucketBits) {
        this.memory = memory;
        this.capacity = capacity;
        this.bucketBits = bucketBits;
        this.orderBase = (long) capacity * ENTRY_BYTES;
        this.bucketBase = orderBase + (long) capacity * Integer.BYTES;
    }

    /**
     * A batch of at most {@code wantedBytes} (and at least the bytes of {@link #MIN_ENTRIES}
     * entries), halved while the budget refuses; throws {@link
     * io.flowkv.core.memory.MemoryBudgetExceededException} if it refuses even the least.
     */
    static CompactionBatch allocate(MemoryBudget budget, long wantedBytes) {
        long entries = Math.min(MAX_ENTRIES, Math.max(MIN_ENTRIES, wantedBytes / bytesPerEntry()));
        while (true) {
            int capacity = (int) entries;
            int bucketBits = bucketBits(capacity);
            long bytes = bytes(capacity, bucketBits);
            OffHeapBuffer memory =
                    capacity == MIN_ENTRIES
                            ? OffHeapBuffer.allocate(budget, bytes, "RMW compaction batch")
                            : OffHeapBuffer.tryAllocate(budget, bytes);
            if (memory != null) {
                return new CompactionBatch(memory, capacity, bucketBits);
            }
            entries = Math.max(MIN_ENTRIES, entries / 2);
        }
    }

    private static int bytesPerEntry() {
        return ENTRY_BYTES + Integer.BYTES + 1;
    }

    /** About a quarter as many buckets as entries: a bucket holds a few entries on average. */
    static int bucketBits(int capacity) {
        int bits = 31 - Integer.numberOfLeadingZeros(Math.max(1, capacity / 4));
        return Math.min(MAX_BUCKET_BITS, Math.max(1, bits));
    }

    private static long bytes(int capacity, int bucketBits) {
        return (long) capacity * (ENTRY_BYTES + Integer.BYTES) + (Integer.BYTES << bucketBits);
    }

    int capacity() {
        return capacity;
    }

    int size() {
        return size;
    }

    boolean isFull() {
        return size == capacity;
    }

    void clear() {
        size = 0;
    }

    /** Adds a put frame; entries must come in log order. */
    void add(long hash, long position) {
        long at = (long) size++ * ENTRY_BYTES;
        memory.putLong(at + HASH, hash);
        memory.putLong(at + POSITION, position);
        memory.putLong(at + MOVED, Positions.NONE);
    }

    long hash(int i) {
        return memory.getLong((long) i * ENTRY_BYTES + HASH);
    }

    /** The frame's position, or {@link Positions#NONE} once marked dead. */
    long position(int i) {
        return memory.getLong((long) i * ENTRY_BYTES + POSITION);
    }

    void markDead(int i) {
        memory.putLong((long) i * ENTRY_BYTES + POSITION, Positions.NONE);
    }

    long moved(int i) {
        return memory.getLong((long) i * ENTRY_BYTES + MOVED);
    }

    void setMoved(int i, long position) {
        memory.putLong((long) i * ENTRY_BYTES + MOVED, position);
    }

    /** Orders the entries by index placement; {@link #inPlacementOrder} then lists them. */
    void sortByPlacement() {
        int shift = 64 - bucketBits;
        int buckets = 1 << bucketBits;
        for (int b = 0; b < buckets; b++) {
            memory.putInt(bucketBase + (long) b * Integer.BYTES, 0);
        }
        for (int i = 0; i < size; i++) {
            long counter = bucketBase + (PagedHashIndex.placementOrder(hash(i)) >>> shift) * 4;
            memory.putInt(counter, memory.getInt(counter) + 1);
        }
        int start = 0;
        for (int b = 0; b < buckets; b++) {
            long counter = bucketBase + (long) b * Integer.BYTES;
            int count = memory.getInt(counter);
            memory.putInt(counter, start);
            start += count;
        }
        for (int i = 0; i < size; i++) {
            long counter = bucketBase + (PagedHashIndex.placementOrder(hash(i)) >>> shift) * 4;
            int slot = memory.getInt(counter);
            memory.putInt(counter, slot + 1);
            memory.putInt(orderBase + (long) slot * Integer.BYTES, i);
        }
    }

    /** The entry at rank {@code k} of the placement order. */
    int inPlacementOrder(int k) {
        return memory.getInt(orderBase + (long) k * Integer.BYTES);
    }

    long memoryBytes() {
        return memory.capacity();
    }

    @Override
    public void close() {
        memory.close();
    }
}
