package io.flowkv.core.index;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import java.util.function.LongConsumer;
import java.util.function.LongUnaryOperator;

/**
 * An open-addressing hash table from byte keys (given by their 64-bit hash) to {@code long} values
 * (packed positions), in two primitive arrays: no boxing, no object per entry. Keys themselves are
 * not stored: on a hash match the caller's {@link KeyMatcher} checks the key behind the value, so
 * 64-bit collisions are handled exactly. Linear probing with backward-shift deletion (no
 * tombstones). A slot's hash and value sit side by side in one array, so that a probe touches one
 * cache line, not two. Its array is charged to a {@link MemoryBudget}.
 *
 * <p>{@link #NONE} (-1) is the empty-slot sentinel and may not be stored as a value.
 */
public final class LongHashIndex {
    public static final long NONE = -1L;
    private static final double LOAD_FACTOR = 0.6;
    private static final int SLOT_BYTES = 16;

    /** Tells whether the key stored behind {@code value} is the key being looked up. */
    @FunctionalInterface
    public interface KeyMatcher {
        boolean matches(long value);
    }

    private final MemoryBudget budget;

    /** Slot {@code i} is {@code table[2i]} (hash) and {@code table[2i + 1]} (value). */
    private long[] table;

    private int mask;
    private int size;
    private int resizeAt;

    public LongHashIndex(MemoryBudget budget, int initialCapacity) {
        this.budget = budget;
        int capacity = Integer.highestOneBit(Math.max(16, initialCapacity - 1) << 1);
        allocate(capacity);
    }

    private void allocate(int capacity) {
        budget.reserve((long) capacity * SLOT_BYTES, "hash index of " + capacity + " slots");
        table = new long[capacity << 1];
        for (int i = 1; i < table.length; i += 2) {
            table[i] = NONE;
        }
        mask = capacity - 1;
        resizeAt = (int) (capacity * LOAD_FACTOR);
    }

    public int size() {
        return size;
    }

    public long memoryBytes() {
        return (long) table.length * Long.BYTES;
    }

    /** The value of the key, or {@link #NONE}. */
    public long get(long hash, KeyMatcher matcher) {
        long[] t = table;
        for (int i = slot(hash); ; i = (i + 1) & mask) {
            long v = t[2 * i + 1];
            if (v == NONE) {
                return NONE;
            }
            if (t[2 * i] == hash && matcher.matches(v)) {
                return v;
            }
        }
    }

    /** Sets the key's value; returns the previous one or {@link #NONE}. */
    public long put(long hash, long value, KeyMatcher matcher) {
        if (value == NONE) {
            throw new IllegalArgumentException("NONE (-1) cannot be stored");
        }
        for (int i = slot(hash); ; i = (i + 1) & mask) {
            long v = table[2 * i + 1];
            if (v == NONE) {
                if (size + 1 > resizeAt) {
                    grow();
                    return put(hash, value, matcher);
                }
                table[2 * i] = hash;
                table[2 * i + 1] = value;
                size++;
                return NONE;
            }
            if (table[2 * i] == hash && matcher.matches(v)) {
                table[2 * i + 1] = value;
                return v;
            }
        }
    }

    /** Removes the key; returns its value or {@link #NONE}. */
    public long remove(long hash, KeyMatcher matcher) {
        for (int i = slot(hash); ; i = (i + 1) & mask) {
            long v = table[2 * i + 1];
            if (v == NONE) {
                return NONE;
            }
            if (table[2 * i] == hash && matcher.matches(v)) {
                deleteSlot(i);
                return v;
            }
        }
    }

    private void deleteSlot(int hole) {
        size--;
        int i = hole;
        while (true) {
            i = (i + 1) & mask;
            if (table[2 * i + 1] == NONE) {
                break;
            }
            int home = slot(table[2 * i]);
            // Move entry i into the hole if the hole lies cyclically in [home, i).
            boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
            if (movable) {
                table[2 * hole] = table[2 * i];
                table[2 * hole + 1] = table[2 * i + 1];
                hole = i;
            }
        }
        table[2 * hole + 1] = NONE;
        table[2 * hole] = 0;
    }

    private void grow() {
        long[] old = table;
        int oldCapacity = old.length >>> 1;
        int newCapacity = oldCapacity << 1;
        if (newCapacity <= 0 || newCapacity > (Integer.MAX_VALUE >>> 2)) {
            throw new MemoryBudgetExceededException("hash index growth", Long.MAX_VALUE, 0, 0);
        }
        allocate(newCapacity);
        budget.release((long) oldCapacity * SLOT_BYTES);
        for (int j = 0; j < oldCapacity; j++) {
            long v = old[2 * j + 1];
            if (v != NONE) {
                long h = old[2 * j];
                int i = slot(h);
                while (table[2 * i + 1] != NONE) {
                    i = (i + 1) & mask;
                }
                table[2 * i] = h;
                table[2 * i + 1] = v;
            }
        }
    }

    /** Replaces every value by {@code f(value)}; used when compaction moves records. */
    public void replaceValues(LongUnaryOperator f) {
        for (int i = 1; i < table.length; i += 2) {
            if (table[i] != NONE) {
                long n = f.applyAsLong(table[i]);
                if (n == NONE) {
                    throw new IllegalStateException("cannot map a value to NONE");
                }
                table[i] = n;
            }
        }
    }

    public void forEachValue(LongConsumer consumer) {
        for (int i = 1; i < table.length; i += 2) {
            long v = table[i];
            if (v != NONE) {
                consumer.accept(v);
            }
        }
    }

    public void clear() {
        for (int i = 0; i < table.length; i += 2) {
            table[i] = 0;
            table[i + 1] = NONE;
        }
        size = 0;
    }

    /** Returns the array's memory to the budget. The index is unusable afterwards. */
    public void release() {
        if (table != null) {
            budget.release(memoryBytes());
            table = null;
        }
    }

    private int slot(long hash) {
        return (int) Hashing.fmix(hash) & mask;
    }
}
