package io.flowkv.core.index;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import java.util.Arrays;
import java.util.function.LongConsumer;
import java.util.function.LongUnaryOperator;

/**
 * An open-addressing hash table from byte keys (given by their 64-bit hash) to {@code long} values
 * (packed positions), in two primitive arrays: no boxing, no object per entry. Keys themselves are
 * not stored: on a hash match the caller's {@link KeyMatcher} checks the key behind the value, so
 * 64-bit collisions are handled exactly. Linear probing with backward-shift deletion (no
 * tombstones). Its arrays are charged to a {@link MemoryBudget}.
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
    private long[] hashes;
    private long[] values;
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
        hashes = new long[capacity];
        values = new long[capacity];
        Arrays.fill(values, NONE);
        mask = capacity - 1;
        resizeAt = (int) (capacity * LOAD_FACTOR);
    }

    public int size() {
        return size;
    }

    public long memoryBytes() {
        return (long) values.length * SLOT_BYTES;
    }

    /** The value of the key, or {@link #NONE}. */
    public long get(long hash, KeyMatcher matcher) {
        for (int i = slot(hash); ; i = (i + 1) & mask) {
            long v = values[i];
            if (v == NONE) {
                return NONE;
            }
            if (hashes[i] == hash && matcher.matches(v)) {
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
            long v = values[i];
            if (v == NONE) {
                if (size + 1 > resizeAt) {
                    grow();
                    return put(hash, value, matcher);
                }
                hashes[i] = hash;
                values[i] = value;
                size++;
                return NONE;
            }
            if (hashes[i] == hash && matcher.matches(v)) {
                values[i] = value;
                return v;
            }
        }
    }

    /** Removes the key; returns its value or {@link #NONE}. */
    public long remove(long hash, KeyMatcher matcher) {
        for (int i = slot(hash); ; i = (i + 1) & mask) {
            long v = values[i];
            if (v == NONE) {
                return NONE;
            }
            if (hashes[i] == hash && matcher.matches(v)) {
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
            if (values[i] == NONE) {
                break;
            }
            int home = slot(hashes[i]);
            // Move entry i into the hole if the hole lies cyclically in [home, i).
            boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
            if (movable) {
                hashes[hole] = hashes[i];
                values[hole] = values[i];
                hole = i;
            }
        }
        values[hole] = NONE;
        hashes[hole] = 0;
    }

    private void grow() {
        long[] oldHashes = hashes;
        long[] oldValues = values;
        int newCapacity = oldValues.length << 1;
        if (newCapacity <= 0) {
            throw new MemoryBudgetExceededException("hash index growth", Long.MAX_VALUE, 0, 0);
        }
        allocate(newCapacity);
        budget.release((long) oldValues.length * SLOT_BYTES);
        for (int j = 0; j < oldValues.length; j++) {
            long v = oldValues[j];
            if (v != NONE) {
                int i = slot(oldHashes[j]);
                while (values[i] != NONE) {
                    i = (i + 1) & mask;
                }
                hashes[i] = oldHashes[j];
                values[i] = v;
            }
        }
    }

    /** Replaces every value by {@code f(value)}; used when compaction moves records. */
    public void replaceValues(LongUnaryOperator f) {
        for (int i = 0; i < values.length; i++) {
            if (values[i] != NONE) {
                long n = f.applyAsLong(values[i]);
                if (n == NONE) {
                    throw new IllegalStateException("cannot map a value to NONE");
                }
                values[i] = n;
            }
        }
    }

    public void forEachValue(LongConsumer consumer) {
        for (long v : values) {
            if (v != NONE) {
                consumer.accept(v);
            }
        }
    }

    public void clear() {
        Arrays.fill(values, NONE);
        Arrays.fill(hashes, 0);
        size = 0;
    }

    /** Returns the arrays' memory to the budget. The index is unusable afterwards. */
    public void release() {
        if (values != null) {
            budget.release(memoryBytes());
            values = null;
            hashes = null;
        }
    }

    private int slot(long hash) {
        return (int) Hashing.fmix(hash) & mask;
    }
}
