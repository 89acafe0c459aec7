package io.flowkv.core.memory;

import java.util.Arrays;

/**
 * Variable-length blocks in native memory that can be freed one by one: an {@link OffHeapArena}
 * with a free list per size class. Blocks are rounded up to a multiple of 8 bytes up to 256, and to
 * a power of two above; a freed block is reused by the next block of its class, so a table whose
 * entries come and go (windows opened and fired) holds about what its live entries need, not what
 * ever passed through it. A free block's first 8 bytes link it to the next free one of its class.
 *
 * <p>Chunks are reserved from the budget as the arena grows and are only given back by {@link
 * #close}: the slab keeps the high-water mark of its live bytes.
 */
public final class OffHeapSlab implements AutoCloseable {
    public static final long NO_SPACE = OffHeapArena.NO_SPACE;

    private static final int SMALL_LIMIT = 256;
    private static final int SMALL_CLASSES = SMALL_LIMIT / 8;
    private static final int CLASSES = SMALL_CLASSES + 31 - 8;

    private final OffHeapArena arena;
    private final long[] freeHeads = new long[CLASSES];
    private long liveBytes;

    public OffHeapSlab(MemoryBudget budget, int chunkSize) {
        this.arena = new OffHeapArena(budget, chunkSize);
        Arrays.fill(freeHeads, NO_SPACE);
    }

    /** The bytes a block of {@code length} takes. */
    public static int blockBytes(int length) {
        if (length < 0 || length > 1 << 30) {
            throw new IllegalArgumentException("block length must be in [0, 2^30], was " + length);
        }
        if (length <= SMALL_LIMIT) {
            return Math.max(8, (length + 7) & ~7);
        }
        return Integer.highestOneBit(length - 1) << 1;
    }

    private static int classOf(int blockBytes) {
        if (blockBytes <= SMALL_LIMIT) {
            return blockBytes / 8 - 1;
        }
        return SMALL_CLASSES + Integer.numberOfTrailingZeros(blockBytes) - 9;
    }

    /** A block of at least {@code length} bytes, or {@link #NO_SPACE} if the budget refuses. */
    public long tryAllocate(int length) {
        int bytes = blockBytes(length);
        int c = classOf(bytes);
        long block = freeHeads[c];
        if (block != NO_SPACE) {
            freeHeads[c] = arena.getLong(block, 0);
        } else {
            block = arena.tryAllocate(bytes);
            if (block == NO_SPACE) {
                return NO_SPACE;
            }
        }
        liveBytes += bytes;
        return block;
    }

    /** Gives back a block that was allocated for {@code length} bytes. */
    public void free(long block, int length) {
        int bytes = blockBytes(length);
        int c = classOf(bytes);
        arena.putLong(block, 0, freeHeads[c]);
        freeHeads[c] = block;
        liveBytes -= bytes;
    }

    public void putBytes(long block, int delta, byte[] src, int offset, int length) {
        arena.putBytes(block, delta, src, offset, length);
    }

    public void getBytes(long block, int delta, byte[] dst, int offset, int length) {
        arena.getBytes(block, delta, dst, offset, length);
    }

    public boolean equalsBytes(long block, int delta, byte[] other, int offset, int length) {
        return arena.equalsBytes(block, delta, other, offset, length);
    }

    /** Bytes of the blocks in use (rounded to their classes). */
    public long liveBytes() {
        return liveBytes;
    }

    /** Bytes reserved from the budget. */
    public long reservedBytes() {
        return arena.reservedBytes();
    }

    @Override
    public void close() {
        arena.close();
    }
}
