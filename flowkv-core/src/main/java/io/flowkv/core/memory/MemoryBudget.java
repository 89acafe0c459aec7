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
    private final long capacity;
    private final AtomicLong used = new AtomicLong();

    public MemoryBudget(long capacityBytes) {
        this.capacity = Checks.checkPositive("memory budget (bytes)", capacityBytes);
    }

    /** Reserves {@code bytes} if they fit; returns false (and reserves nothing) otherwise. */
    public boolean tryReserve(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes to reserve must be >= 0, was " + bytes);
        }
        while (true) {
            long current = used.get();
            long next = current + bytes;
            if (next > capacity || next < 0) {
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
