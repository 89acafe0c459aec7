package io.flowkv.core.memory;

/**
 * A growable array of {@code long}s in native memory reserved from a {@link MemoryBudget}: the
 * stores' work lists (record positions of a write buffer, frames of a read batch), kept off the
 * Java heap so that they count against the budget. Growth doubles and copies; a growth the budget
 * refuses leaves the array as it was. Not thread-safe.
 */
public final class OffHeapLongArray implements AutoCloseable {
    private final MemoryBudget budget;
    private OffHeapBuffer memory;
    private long capacity;

    private OffHeapLongArray(MemoryBudget budget, OffHeapBuffer memory, long capacity) {
        this.budget = budget;
        this.memory = memory;
        this.capacity = capacity;
    }

    /** An array of {@code capacity} longs (contents undefined), or throws naming the purpose. */
    public static OffHeapLongArray allocate(MemoryBudget budget, long capacity, String purpose) {
        if (capacity <= 0) {
            throw new IllegalArgumentException(purpose + ": capacity must be > 0, was " + capacity);
        }
        return new OffHeapLongArray(
                budget, OffHeapBuffer.allocate(budget, capacity * Long.BYTES, purpose), capacity);
    }

    /** An array of {@code capacity} longs, or null (nothing reserved) if the budget refuses. */
    public static OffHeapLongArray tryAllocate(MemoryBudget budget, long capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, was " + capacity);
        }
        OffHeapBuffer memory = OffHeapBuffer.tryAllocate(budget, capacity * Long.BYTES);
        return memory == null ? null : new OffHeapLongArray(budget, memory, capacity);
    }

    public long get(long i) {
        return memory.getLong(i * Long.BYTES);
    }

    public void set(long i, long value) {
        memory.putLong(i * Long.BYTES, value);
    }

    public long capacity() {
        return capacity;
    }

    /**
     * Makes room for at least {@code needed} longs, keeping the first {@code keep}; false (and
     * nothing changed) when the budget refuses.
     */
    public boolean tryGrow(long needed, long keep) {
        if (needed <= capacity) {
            return true;
        }
        long bigger = Math.max(needed, capacity * 2);
        OffHeapBuffer grown = OffHeapBuffer.tryAllocate(budget, bigger * Long.BYTES);
        if (grown == null) {
            return false;
        }
        if (keep > 0) {
            memory.copyTo(0, grown, 0, Math.min(keep, capacity) * Long.BYTES);
        }
        memory.close();
        memory = grown;
        capacity = bigger;
        return true;
    }

    /** Native bytes held from the budget. */
    public long memoryBytes() {
        return memory.isClosed() ? 0 : capacity * Long.BYTES;
    }

    /** Frees the memory and returns it to the budget. Idempotent. */
    @Override
    public void close() {
        memory.close();
    }
}
