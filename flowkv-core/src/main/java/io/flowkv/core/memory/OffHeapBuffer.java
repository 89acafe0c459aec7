package io.flowkv.core.memory;

import net.openhft.chronicle.core.UnsafeMemory;

import java.nio.ByteBuffer;

/**
 * A fixed-capacity block of native memory, reserved from a {@link MemoryBudget} for its whole life.
 * This is the only class that touches native memory (through chronicle-core's {@link
 * UnsafeMemory}), so the stores do not depend on its API. Absolute, little-endian accessors; no
 * allocation per call. Not thread-safe: one writer at a time.
 *
 * <p>The block is allocated zeroed and freed on the thread that closes it, at once. (It used to be
 * a chronicle-bytes {@code NativeBytesStore}, which hands every release to a background thread
 * through a locked queue and wakes that thread: on q7-session 2% of the task thread went to those
 * wake-ups alone, for prefetched window copies and write buffer chunks that come and go all the
 * time.)
 *
 * <p>Bounds are checked on every access (the store code above is young); the checks name {@code
 * index}, {@code length} and {@code capacity}.
 */
public final class OffHeapBuffer implements AutoCloseable {
    private static final UnsafeMemory MEMORY = UnsafeMemory.MEMORY;

    static {
        // Records are copied between memory and files byte for byte: the on-disk format is
        // little-endian because memory is.
        if (!UnsafeMemory.IS_LITTLE_ENDIAN) {
            throw new ExceptionInInitializerError("FlowKV needs a little-endian platform");
        }
    }

    /** Where {@code byte[]} elements start, for copies between arrays and native memory. */
    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);

    private final long address;
    private final MemoryBudget budget;
    private final long capacity;
    private boolean closed;

    private OffHeapBuffer(long address, MemoryBudget budget, long capacity) {
        this.address = address;
        this.budget = budget;
        this.capacity = capacity;
    }

    /**
     * The class that allocates, reads and frees the memory (the shaded jar relocates it under
     * {@code io.flowkv.shaded}): for the log line that tells operators which copy a TaskManager
     * runs.
     */
    public static Class<?> nativeMemoryClass() {
        return MEMORY.getClass();
    }

    /** Allocates {@code capacity} bytes, or returns null if the budget cannot give them. */
    public static OffHeapBuffer tryAllocate(MemoryBudget budget, long capacity) {
        checkCapacity(capacity);
        return budget.tryReserve(capacity) ? reserved(budget, capacity) : null;
    }

    /**
     * A buffer of memory its holder can do without (cache pages, prefetched copies), or null when
     * the budget would keep less than its headroom free ({@link MemoryBudget#tryReserveForCache}).
     */
    public static OffHeapBuffer tryAllocateForCache(MemoryBudget budget, long capacity) {
        checkCapacity(capacity);
        return budget.tryReserveForCache(capacity) ? reserved(budget, capacity) : null;
    }

    private static void checkCapacity(long capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, was " + capacity);
        }
    }

    /** Native memory for {@code capacity} bytes already reserved from {@code budget}. */
    private static OffHeapBuffer reserved(MemoryBudget budget, long capacity) {
        try {
            // The task thread writes; a snapshot thread may read sealed data. Access is handed
            // over, never concurrent.
            long address = MEMORY.allocate(capacity);
            MEMORY.setMemory(address, capacity, (byte) 0);
            return new OffHeapBuffer(address, budget, capacity);
        } catch (RuntimeException | Error e) {
            budget.release(capacity);
            throw e;
        }
    }

    /** Allocates {@code capacity} bytes or throws {@link MemoryBudgetExceededException}. */
    public static OffHeapBuffer allocate(MemoryBudget budget, long capacity, String purpose) {
        OffHeapBuffer buffer = tryAllocate(budget, capacity);
        if (buffer == null) {
            throw new MemoryBudgetExceededException(
                    purpose, capacity, budget.available(), budget.capacity());
        }
        return buffer;
    }

    public long capacity() {
        return capacity;
    }

    public void putLong(long index, long value) {
        check(index, 8);
        MEMORY.writeLong(address + index, value);
    }

    public long getLong(long index) {
        check(index, 8);
        return MEMORY.readLong(address + index);
    }

    public void putInt(long index, int value) {
        check(index, 4);
        MEMORY.writeInt(address + index, value);
    }

    public int getInt(long index) {
        check(index, 4);
        return MEMORY.readInt(address + index);
    }

    public void putByte(long index, byte value) {
        check(index, 1);
        MEMORY.writeByte(address + index, value);
    }

    public byte getByte(long index) {
        check(index, 1);
        return MEMORY.readByte(address + index);
    }

    public void putBytes(long index, byte[] src, int offset, int length) {
        checkArray(src, offset, length);
        check(index, length);
        UnsafeMemory.UNSAFE.copyMemory(
                src, BYTE_ARRAY_BASE + offset, null, address + index, length);
    }

    public void getBytes(long index, byte[] dst, int offset, int length) {
        checkArray(dst, offset, length);
        check(index, length);
        UnsafeMemory.UNSAFE.copyMemory(
                null, address + index, dst, BYTE_ARRAY_BASE + offset, length);
    }

    /** Copies {@code length} bytes at {@code index} into a staging buffer at its position. */
    public void copyTo(long index, IoBuffer dst, int length) {
        ByteBuffer view = dst.buffer();
        int pos = view.position();
        if (view.remaining() < length) {
            throw new IllegalArgumentException(
                    "index=" + index + " length=" + length + ": remaining=" + view.remaining());
        }
        copyTo(index, dst.memory(), pos, length);
        view.position(pos + length);
    }

    /** Copies {@code length} bytes from a staging buffer at its position to {@code index}. */
    public void copyFrom(IoBuffer src, long index, int length) {
        ByteBuffer view = src.buffer();
        int pos = view.position();
        if (view.remaining() < length) {
            throw new IllegalArgumentException(
                    "index=" + index + " length=" + length + ": remaining=" + view.remaining());
        }
        src.memory().copyTo(pos, this, index, length);
        view.position(pos + length);
    }

    /** The native address of byte {@code index}, for a view of this memory. */
    long address(long index) {
        check(index, 0);
        return address + index;
    }

    /** Copies {@code length} bytes between two buffers (the ranges may be in the same buffer). */
    public void copyTo(long index, OffHeapBuffer dst, long dstIndex, long length) {
        check(index, length);
        dst.check(dstIndex, length);
        MEMORY.copyMemory(address + index, dst.address + dstIndex, length);
    }

    /** Compares {@code length} bytes at {@code index} with {@code other[offset..]}. */
    public boolean equalsBytes(long index, byte[] other, int offset, int length) {
        check(index, length);
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            if (MEMORY.readLong(address + index + i) != littleEndianLong(other, offset + i)) {
                return false;
            }
        }
        for (; i < length; i++) {
            if (MEMORY.readByte(address + index + i) != other[offset + i]) {
                return false;
            }
        }
        return true;
    }

    private static long littleEndianLong(byte[] b, int o) {
        return (b[o] & 0xFFL)
                | (b[o + 1] & 0xFFL) << 8
                | (b[o + 2] & 0xFFL) << 16
                | (b[o + 3] & 0xFFL) << 24
                | (b[o + 4] & 0xFFL) << 32
                | (b[o + 5] & 0xFFL) << 40
                | (b[o + 6] & 0xFFL) << 48
                | (b[o + 7] & 0xFFL) << 56;
    }

    /**
     * An array range out of bounds would be a copy into or out of memory the array does not own.
     */
    private static void checkArray(byte[] array, int offset, int length) {
        if (offset < 0 || length < 0 || offset > array.length - length) {
            throw new IndexOutOfBoundsException(
                    "offset=" + offset + " length=" + length + " array length=" + array.length);
        }
    }

    private void check(long index, long length) {
        if (closed) {
            throw new IllegalStateException("OffHeapBuffer is closed");
        }
        if (index < 0 || length < 0 || index + length > capacity) {
            throw new IndexOutOfBoundsException(
                    "index=" + index + " length=" + length + " capacity=" + capacity);
        }
    }

    /** Frees the native memory and returns it to the budget. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            MEMORY.freeMemory(address, capacity);
            budget.release(capacity);
        }
    }

    public boolean isClosed() {
        return closed;
    }
}
