package io.flowkv.core.memory;

import io.flowkv.core.Checks;

import java.util.ArrayList;
import java.util.List;

/**
 * An append-only bump allocator over {@link OffHeapBuffer} chunks: the backing of every write
 * buffer. Allocation never moves earlier records, so a record's position stays valid until {@link
 * #reset()}. Chunks are reserved from the budget one at a time, all but the first leaving the
 * budget's headroom ({@link MemoryBudget#tryReserveForCache}); when the budget refuses, {@link
 * #tryAllocate} returns {@link #NO_SPACE} and the caller flushes.
 *
 * <pre>
 *  position (long):  63            32 31             0
 *                   +----------------+----------------+
 *                   |  chunk index   | offset in chunk|
 *                   +----------------+----------------+
 * </pre>
 *
 * A record larger than the chunk size gets a chunk of its own, of exactly its size.
 */
public final class OffHeapArena implements AutoCloseable {
    public static final long NO_SPACE = -1L;

    private final MemoryBudget budget;
    private final int chunkSize;
    private final List<OffHeapBuffer> chunks = new ArrayList<>();
    private int current = -1;
    private int currentOffset;
    private long usedBytes;

    public OffHeapArena(MemoryBudget budget, int chunkSize) {
        this.budget = Checks.checkNotNull("budget", budget);
        this.chunkSize = Checks.checkRange("arena chunk size", chunkSize, 64, 1 << 30);
    }

    /** Allocates {@code length} bytes; returns their position, or {@link #NO_SPACE}. */
    public long tryAllocate(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, was " + length);
        }
        if (current >= 0 && currentOffset + (long) length <= chunks.get(current).capacity()) {
            long pos = pack(current, currentOffset);
            currentOffset += length;
            usedBytes += length;
            return pos;
        }
        // Reuse a chunk kept by reset() before asking the budget for a new one.
        if (current + 1 < chunks.size() && length <= chunks.get(current + 1).capacity()) {
            current++;
        } else {
            // Past its first chunk a write buffer is memory that can give way (a flush empties
            // it), and the flush its refusal starts may need memory that cannot: an index's
            // page table, a record list. So it leaves the budget's headroom to those.
            long size = Math.max(chunkSize, length);
            OffHeapBuffer chunk =
                    chunks.isEmpty()
                            ? OffHeapBuffer.tryAllocate(budget, size)
                            : OffHeapBuffer.tryAllocateForCache(budget, size);
            if (chunk == null) {
                return NO_SPACE;
            }
            if (current + 1 < chunks.size()) {
                // The kept chunk is too small for this record: give it back.
                chunks.remove(current + 1).close();
            }
            chunks.add(current + 1, chunk);
            current++;
        }
        currentOffset = length;
        usedBytes += length;
        return pack(current, 0);
    }

    public static long pack(int chunk, int offset) {
        return ((long) chunk << 32) | (offset & 0xFFFFFFFFL);
    }

    public OffHeapBuffer chunk(long position) {
        return chunks.get((int) (position >>> 32));
    }

    public static int offset(long position) {
        return (int) position;
    }

    public void putLong(long position, int delta, long value) {
        chunk(position).putLong(offset(position) + (long) delta, value);
    }

    public long getLong(long position, int delta) {
        return chunk(position).getLong(offset(position) + (long) delta);
    }

    public void putInt(long position, int delta, int value) {
        chunk(position).putInt(offset(position) + (long) delta, value);
    }

    public int getInt(long position, int delta) {
        return chunk(position).getInt(offset(position) + (long) delta);
    }

    public void putByte(long position, int delta, byte value) {
        chunk(position).putByte(offset(position) + (long) delta, value);
    }

    public byte getByte(long position, int delta) {
        return chunk(position).getByte(offset(position) + (long) delta);
    }

    public void putBytes(long position, int delta, byte[] src, int srcOffset, int length) {
        chunk(position).putBytes(offset(position) + (long) delta, src, srcOffset, length);
    }

    public void getBytes(long position, int delta, byte[] dst, int dstOffset, int length) {
        chunk(position).getBytes(offset(position) + (long) delta, dst, dstOffset, length);
    }

    public boolean equalsBytes(long position, int delta, byte[] other, int offset, int length) {
        return chunk(position).equalsBytes(offset(position) + (long) delta, other, offset, length);
    }

    /** Bytes handed out since the last reset. */
    public long usedBytes() {
        return usedBytes;
    }

    /** Bytes reserved from the budget (whole chunks). */
    public long reservedBytes() {
        long sum = 0;
        for (OffHeapBuffer chunk : chunks) {
            sum += chunk.capacity();
        }
        return sum;
    }

    /**
     * Forgets every record. Keeps the first chunk (the common case refills it at once) and returns
     * the rest to the budget, so an idle store holds at most one chunk.
     */
    public void reset() {
        recycle();
        releaseSpares();
    }

    /**
     * Forgets every record but keeps every chunk for the records that follow. A write buffer that
     * fills again right after its flush then neither frees its chunks nor allocates and zeroes new
     * ones each time (on the task thread, in memory the kernel must first map: measured at 3.5% of
     * a session query's window thread). The chunks stay charged to the budget; {@link
     * #releaseSpares} gives back those the records since have not taken.
     */
    public void recycle() {
        current = -1;
        currentOffset = 0;
        usedBytes = 0;
    }

    /**
     * Gives back to the budget every chunk after the one in use, or all but the first if none is:
     * what {@link #recycle} kept that the arena does not hold records in.
     */
    public void releaseSpares() {
        int keep = Math.max(current + 1, 1);
        while (chunks.size() > keep) {
            chunks.remove(chunks.size() - 1).close();
        }
    }

    /** Forgets every record and gives every chunk back to the budget; the arena stays usable. */
    public void releaseAll() {
        for (OffHeapBuffer chunk : chunks) {
            chunk.close();
        }
        chunks.clear();
        current = -1;
        currentOffset = 0;
        usedBytes = 0;
    }

    @Override
    public void close() {
        releaseAll();
    }
}
