package io.flowkv.core.memory;

import io.flowkv.core.Checks;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A byte budget shared by the stores of one operator subtask (in Flink: its share of managed
 * memory). Stores reserve before they hold bytes and release when they drop them; a refused
 * reservation means "flush or shrink", never "allocate anyway". Thread-safe, because a snapshot
 * thread may release while the task thread reserves.
 */
public final class MemoryBudget {
    /** Caches leave this fraction (1/16) of the capacity to what cannot give way. */
    public static final int CACHE_HEADROOM_DIVISOR = 16;

    private final long capacity;
    private final AtomicLong used = new AtomicLong();

    public MemoryBudget(long capacityBytes) {
        this.capacity = Checks.checkPositive("memory budget (bytes)", capacityBytes);
    }

    /** Reserves {@code bytes} if they fit; returns false (and reserves nothing) otherwise. */
    public boolean tryReserve(long bytes) {
        return tryReserveUpTo(bytes, capacity);
    }

    /**
     * Reserves {@code bytes} for memory its holder can do without (a cache page, a prefetched copy,
     * a larger batch) only if a {@link #CACHE_HEADROOM_DIVISOR}th of the capacity stays free after
     * it. The stores of a slot share one budget and their caches grow until it refuses; without the
     * headroom they would take its last bytes, and a structure that must grow with the state (a
     * hash index's page table, a list of dirty windows) would fail the job though every cache could
     * have given way.
     */
    public boolean tryReserveForCache(long bytes) {
        return tryReserveUpTo(bytes, capacity - capacity / CACHE_HEADROOM_DIVISOR);
    }

    private boolean tryReserveUpTo(long bytes, long limit) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes to reserve must be >= 0, was " + bytes);
        }
        while (true) {
            long current = used.get();
            long next = current + bytes;
            if (next > limit || next < 0) {
                return false;
            }
            if (used.compareAndSet(current, next)) {
                return true;
            }
        }
    }

    /** Reserves {@code bytes} or throws a {@link MemoryBudgetExceededException} naming the need. */
    public void reserve(long bytes, String purpose) {
        if (!tryReserve(bytes)) {
            throw new MemoryBudgetExceededException(purpose, bytes, available(), capacity);
        }
    }

    public void release(long bytes) {
        long after = used.addAndGet(-bytes);
        if (after < 0) {
            used.addAndGet(bytes);
            throw new IllegalStateException(
                    "released " + bytes + " bytes but only " + (after + bytes) + " were reserved");
        }
    }

    public long capacity() {
        return capacity;
    }

    public long used() {
        return used.get();
    }

    public long available() {
        return capacity - used.get();
    }

    @Override
    public String toString() {
        return "MemoryBudget{used=" + used.get() + ", capacity=" + capacity + "}";
    }
}
