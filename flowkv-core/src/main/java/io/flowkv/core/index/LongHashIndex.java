package io.flowkv.core.index;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapBuffer;

import java.util.function.LongConsumer;
import java.util.function.LongUnaryOperator;

/**
 * An open-addressing hash table from byte keys (given by their 64-bit hash) to {@code long} values
 * (packed positions): no boxing, no object per entry. Keys themselves are not stored: on a hash
 * match the caller's {@link KeyMatcher} checks the key behind the value, so 64-bit collisions are
 * handled exactly. Linear probing with backward-shift deletion (no tombstones).
 *
 * <p>The table lives in native memory (an {@link OffHeapBuffer}) reserved from a {@link
 * MemoryBudget}: in Flink that budget is the subtask's share of managed memory, which the task
 * manager sizes as off-heap, so a table on the Java heap would be charged to one pool and use
 * another. The reservation always equals the native bytes held. The garbage collector does not free
 * them: the owner must call {@link #release}.
 *
 * <p>Slot {@code i} is 16 bytes, hash and value side by side so that a probe touches one cache
 * line:
 *
 * <pre>
 *   16*i       16*i+8     16*i+16
 *  +----------+----------+
 *  |   hash   |  value   |   little-endian; an empty slot is (0, NONE)
 *  +----------+----------+
 * </pre>
 *
 * <p>{@link #NONE} (-1) is the empty-slot sentinel and may not be stored as a value. Native memory
 * is not zeroed, so every slot of a new table is written empty before use.
 */
public final class LongHashIndex {
    public static final long NONE = -1L;
    private static final double LOAD_FACTOR = 0.6;
    private static final int SLOT_BYTES = 16;
    private static final int SLOT_SHIFT = 4;
    private static final int VALUE = 8;

    /** Tells whether the key stored behind {@code value} is the key being looked up. */
    @FunctionalInterface
    public interface KeyMatcher {
        boolean matches(long value);
    }

    private final MemoryBudget budget;

    /** Slot {@code i}: hash at byte {@code 16i}, value at {@code 16i + 8}; null once released. */
    private OffHeapBuffer table;

    private int mask;
    private int size;
    private int resizeAt;

    public LongHashIndex(MemoryBudget budget, int initialCapacity) {
        this.budget = budget;
        int capacity = Integer.highestOneBit(Math.max(16, initialCapacity - 1) << 1);
        install(newTable(capacity), capacity);
    }

    /** Allocates a table of {@code capacity} empty slots, or throws if the budget refuses. */
    private OffHeapBuffer newTable(int capacity) {
        OffHeapBuffer t =
                OffHeapBuffer.allocate(
                        budget,
                        (long) capacity * SLOT_BYTES,
                        "hash index of " + capacity + " slots");
        long end = t.capacity();
        for (long off = 0; off < end; off += SLOT_BYTES) {
            t.putLong(off, 0);
            t.putLong(off + VALUE, NONE);
        }
        return t;
    }

    private void install(OffHeapBuffer t, int capacity) {
        table = t;
        mask = capacity - 1;
        resizeAt = (int) (capacity * LOAD_FACTOR);
    }

    public int size() {
        return size;
    }

    public long memoryBytes() {
        return table.capacity();
    }

    /** The value of the key, or {@link #NONE}. */
    public long get(long hash, KeyMatcher matcher) {
        OffHeapBuffer t = table;
        int m = mask;
        for (int i = slot(hash, m); ; i = (i + 1) & m) {
            long off = (long) i << SLOT_SHIFT;
            long v = t.getLong(off + VALUE);
            if (v == NONE) {
                return NONE;
            }
            if (t.getLong(off) == hash && matcher.matches(v)) {
                return v;
            }
        }
    }

    /** Sets the key's value; returns the previous one or {@link #NONE}. */
    public long put(long hash, long value, KeyMatcher matcher) {
        if (value == NONE) {
            throw new IllegalArgumentException("NONE (-1) cannot be stored");
        }
        OffHeapBuffer t = table;
        int m = mask;
        for (int i = slot(hash, m); ; i = (i + 1) & m) {
            long off = (long) i << SLOT_SHIFT;
            long v = t.getLong(off + VALUE);
            if (v == NONE) {
                if (size + 1 > resizeAt) {
                    grow();
                    return put(hash, value, matcher);
                }
                t.putLong(off, hash);
                t.putLong(off + VALUE, value);
                size++;
                return NONE;
            }
            if (t.getLong(off) == hash && matcher.matches(v)) {
                t.putLong(off + VALUE, value);
                return v;
            }
        }
    }

    /** Removes the key; returns its value or {@link #NONE}. */
    public long remove(long hash, KeyMatcher matcher) {
        OffHeapBuffer t = table;
        int m = mask;
        for (int i = slot(hash, m); ; i = (i + 1) & m) {
            long off = (long) i << SLOT_SHIFT;
            long v = t.getLong(off + VALUE);
            if (v == NONE) {
                return NONE;
            }
            if (t.getLong(off) == hash && matcher.matches(v)) {
                deleteSlot(i);
                return v;
            }
        }
    }

    private void deleteSlot(int hole) {
        size--;
        OffHeapBuffer t = table;
        int m = mask;
        int i = hole;
        while (true) {
            i = (i + 1) & m;
            long off = (long) i << SLOT_SHIFT;
            long v = t.getLong(off + VALUE);
            if (v == NONE) {
                break;
            }
            long h = t.getLong(off);
            int home = slot(h, m);
            // Move entry i into the hole if the hole lies cyclically in [home, i).
            boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
            if (movable) {
                long holeOff = (long) hole << SLOT_SHIFT;
                t.putLong(holeOff, h);
                t.putLong(holeOff + VALUE, v);
                hole = i;
            }
        }
        long holeOff = (long) hole << SLOT_SHIFT;
        t.putLong(holeOff + VALUE, NONE);
        t.putLong(holeOff, 0);
    }

    /**
     * Doubles the table. The new table is allocated before the old one is touched, so a refused
     * reservation leaves the index as it was; both are held while rehashing.
     */
    private void grow() {
        OffHeapBuffer old = table;
        int oldCapacity = mask + 1;
        int newCapacity = oldCapacity << 1;
        if (newCapacity <= 0 || newCapacity > (Integer.MAX_VALUE >>> 2)) {
            throw new MemoryBudgetExceededException("hash index growth", Long.MAX_VALUE, 0, 0);
        }
        OffHeapBuffer grown = newTable(newCapacity);
        try {
            int m = newCapacity - 1;
            long end = old.capacity();
            for (long off = 0; off < end; off += SLOT_BYTES) {
                long v = old.getLong(off + VALUE);
                if (v != NONE) {
                    long h = old.getLong(off);
                    int i = slot(h, m);
                    while (grown.getLong(((long) i << SLOT_SHIFT) + VALUE) != NONE) {
                        i = (i + 1) & m;
                    }
                    long to = (long) i << SLOT_SHIFT;
                    grown.putLong(to, h);
                    grown.putLong(to + VALUE, v);
                }
            }
        } catch (RuntimeException | Error e) {
            grown.close();
            throw e;
        }
        install(grown, newCapacity);
        old.close();
    }

    /** Replaces every value by {@code f(value)}; used when compaction moves records. */
    public void replaceValues(LongUnaryOperator f) {
        OffHeapBuffer t = table;
        long end = t.capacity();
        for (long off = VALUE; off < end; off += SLOT_BYTES) {
            long v = t.getLong(off);
            if (v != NONE) {
                long n = f.applyAsLong(v);
                if (n == NONE) {
                    throw new IllegalStateException("cannot map a value to NONE");
                }
                t.putLong(off, n);
            }
        }
    }

    public void forEachValue(LongConsumer consumer) {
        OffHeapBuffer t = table;
        long end = t.capacity();
        for (long off = VALUE; off < end; off += SLOT_BYTES) {
            long v = t.getLong(off);
            if (v != NONE) {
                consumer.accept(v);
            }
        }
    }

    public void clear() {
        OffHeapBuffer t = table;
        long end = t.capacity();
        for (long off = 0; off < end; off += SLOT_BYTES) {
            t.putLong(off, 0);
            t.putLong(off + VALUE, NONE);
        }
        size = 0;
    }

    /**
     * Frees the table's native memory and returns it to the budget. Idempotent. The index is
     * unusable afterwards.
     */
    public void release() {
        if (table != null) {
            table.close();
            table = null;
        }
    }

    private static int slot(long hash, int mask) {
        return (int) Hashing.fmix(hash) & mask;
    }
}
