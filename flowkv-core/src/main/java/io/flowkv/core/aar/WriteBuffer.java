package io.flowkv.core.aar;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapArena;

import java.io.IOException;

import static io.flowkv.core.aar.AarRecordDescriptor.APPEND;
import static io.flowkv.core.aar.AarRecordDescriptor.DEAD;
import static io.flowkv.core.aar.AarRecordDescriptor.KEY_HASH_OFFSET;
import static io.flowkv.core.aar.AarRecordDescriptor.KEY_LENGTH_OFFSET;
import static io.flowkv.core.aar.AarRecordDescriptor.LOG_HEADER_LENGTH;
import static io.flowkv.core.aar.AarRecordDescriptor.LOG_RECORD_OFFSET;
import static io.flowkv.core.aar.AarRecordDescriptor.NEXT_OFFSET;
import static io.flowkv.core.aar.AarRecordDescriptor.NO_RECORD;
import static io.flowkv.core.aar.AarRecordDescriptor.REMOVE;
import static io.flowkv.core.aar.AarRecordDescriptor.TYPE_OFFSET;
import static io.flowkv.core.aar.AarRecordDescriptor.VALUE_LENGTH_OFFSET;

/**
 * Buffered records in an off-heap arena, chained per (window, partition) in append order (layout in
 * {@link AarRecordDescriptor}). The arena is a bump allocator: a killed record or a detached chain
 * stays in it as garbage until the next full flush resets it, which is cheap because AAR removes
 * are rare between flushes (a window is cleared after it fired, usually on disk by then).
 *
 * <p>There are two arenas. Appends go to the current one; a flush in the background ({@link
 * #detachGeneration}) takes the current one's chains with it and writes them from that arena while
 * appends fill the other, the spare, reusing the chunks its last generation left. Every method but
 * {@link #writeFlushingChain} works on the current arena.
 */
final class WriteBuffer implements AutoCloseable {
    private static final int T = LOG_RECORD_OFFSET + TYPE_OFFSET;
    private static final int KL = LOG_RECORD_OFFSET + KEY_LENGTH_OFFSET;
    private static final int VL = LOG_RECORD_OFFSET + VALUE_LENGTH_OFFSET;
    private static final int KEY = LOG_RECORD_OFFSET + LOG_HEADER_LENGTH;

    private final MemoryBudget budget;

    /** Where appends go. */
    private OffHeapArena arena;

    /** The chains a flush in the background writes, or (between flushes) the spare arena. */
    private OffHeapArena flushing;

    private boolean generationInFlight;
    private final ChainIndex.Records records =
            new ChainIndex.Records() {
                @Override
                public long next(long record) {
                    return arena.getLong(record, NEXT_OFFSET);
                }

                @Override
                public boolean isAppend(long record) {
                    return arena.getByte(record, T) == APPEND;
                }

                @Override
                public long keyHash(long record) {
                    return arena.getLong(record, KEY_HASH_OFFSET);
                }
            };
    private byte[] scratch = new byte[256];
    private long chainIndexBytes;

    WriteBuffer(MemoryBudget budget, int chunkSize) {
        this.budget = budget;
        this.arena = new OffHeapArena(budget, chunkSize);
        this.flushing = new OffHeapArena(budget, chunkSize);
    }

    /**
     * Makes sure the partition's chain is indexed by key, all but at most {@code unindexed} of its
     * records; false if the budget cannot hold the index.
     */
    boolean indexChain(AarPartition p, int unindexed) {
        if (p.chainIndex != null && p.chainRecords - p.chainIndex.covered <= unindexed) {
            return true;
        }
        dropIndex(p);
        if (p.chainHead == NO_RECORD) {
            return true;
        }
        ChainIndex index = buildIndex(p);
        if (index == null && releaseSpare()) {
            // The spare arena goes before the chain: without an index it is flushed and read back.
            index = buildIndex(p);
        }
        if (index == null) {
            return false;
        }
        p.chainIndex = index;
        chainIndexBytes += index.memoryBytes();
        return true;
    }

    private ChainIndex buildIndex(AarPartition p) {
        return ChainIndex.build(
                budget, records, p.chainHead, p.chainTail, p.bufferedAppends, p.chainRecords);
    }

    /** Frees the partition's chain index, if any; before its chain is detached. */
    void dropIndex(AarPartition p) {
        if (p.chainIndex != null) {
            chainIndexBytes -= p.chainIndex.memoryBytes();
            p.chainIndex.close();
            p.chainIndex = null;
        }
    }

    long chainIndexBytes() {
        return chainIndexBytes;
    }

    /** The first record of the chain not covered by its index (all of it without one). */
    private long unindexedStart(AarPartition p) {
        return p.chainIndex == null ? p.chainHead : arena.getLong(p.chainIndex.tail, NEXT_OFFSET);
    }

    /** Links a new record at the end of the partition's chain, or returns {@code NO_SPACE}. */
    long tryAppend(AarPartition p, byte type, long keyHash, byte[] key, byte[] value) {
        int valueLength = value == null ? 0 : value.length;
        long pos =
                arena.tryAllocate(
                        AarRecordDescriptor.bufferedRecordLength(key.length, valueLength));
        if (pos == OffHeapArena.NO_SPACE) {
            return pos;
        }
        arena.putLong(pos, NEXT_OFFSET, NO_RECORD);
        arena.putLong(pos, KEY_HASH_OFFSET, keyHash);
        arena.putByte(pos, T, type);
        arena.putInt(pos, KL, key.length);
        arena.putInt(pos, VL, valueLength);
        arena.putBytes(pos, KEY, key, 0, key.length);
        if (valueLength > 0) {
            arena.putBytes(pos, KEY + key.length, value, 0, valueLength);
        }
        if (p.chainTail == NO_RECORD) {
            p.chainHead = pos;
        } else {
            arena.putLong(p.chainTail, NEXT_OFFSET, pos);
        }
        p.chainTail = pos;
        p.chainRecords++;
        int logLength = AarRecordDescriptor.logRecordLength(key.length, valueLength);
        if (type == APPEND) {
            p.bufferedAppends++;
            p.bufferedAppendBytes += logLength;
        } else {
            p.bufferedRemoveBytes += logLength;
        }
        return pos;
    }

    /** Passes the key's live buffered values to {@code consumer} in append order. */
    boolean emit(AarPartition p, long keyHash, byte[] key, ValueConsumer consumer) {
        if (p.bufferedAppends == 0) {
            // Only REMOVE records (or nothing) buffered: a firing window's reads and clears leave
            // one per key, and scanning them on every read was quadratic in the keys.
            return false;
        }
        boolean found = false;
        if (p.chainIndex != null) {
            for (int c = p.chainIndex.first(keyHash); c >= 0; c = p.chainIndex.next(c)) {
                found |= emitIfKey(p.chainIndex.record(c), keyHash, key, consumer);
            }
        }
        for (long r = unindexedStart(p); r != NO_RECORD; r = arena.getLong(r, NEXT_OFFSET)) {
            found |= emitIfKey(r, keyHash, key, consumer);
        }
        return found;
    }

    private boolean emitIfKey(long r, long keyHash, byte[] key, ValueConsumer consumer) {
        if (arena.getByte(r, T) != APPEND || !isKey(r, keyHash, key)) {
            return false;
        }
        int length = arena.getInt(r, VL);
        byte[] buf = scratch(length);
        arena.getBytes(r, KEY + key.length, buf, 0, length);
        consumer.accept(buf, 0, length);
        return true;
    }

    /** Marks the key's buffered appends dead; returns their log bytes. */
    long killAppends(AarPartition p, long keyHash, byte[] key) {
        if (p.bufferedAppends == 0) {
            return 0;
        }
        long bytes = 0;
        if (p.chainIndex != null) {
            for (int c = p.chainIndex.first(keyHash); c >= 0; c = p.chainIndex.next(c)) {
                bytes += killIfKey(p, p.chainIndex.record(c), keyHash, key);
            }
        }
        for (long r = unindexedStart(p); r != NO_RECORD; r = arena.getLong(r, NEXT_OFFSET)) {
            bytes += killIfKey(p, r, keyHash, key);
        }
        return bytes;
    }

    private long killIfKey(AarPartition p, long r, long keyHash, byte[] key) {
        if (arena.getByte(r, T) != APPEND || !isKey(r, keyHash, key)) {
            return 0;
        }
        arena.putByte(r, T, DEAD);
        int length = logLength(arena, r);
        p.bufferedAppends--;
        p.bufferedAppendBytes -= length;
        return length;
    }

    /** Marks every buffered REMOVE dead: its partition's segments were deleted. */
    void killRemoves(AarPartition p) {
        for (long r = p.chainHead; r != NO_RECORD; r = arena.getLong(r, NEXT_OFFSET)) {
            if (arena.getByte(r, T) == REMOVE) {
                arena.putByte(r, T, DEAD);
            }
        }
        p.bufferedRemoveBytes = 0;
    }

    /** Sees the key of a buffered REMOVE record; {@code b} is valid during the call only. */
    @FunctionalInterface
    interface RemoveVisitor {
        void visit(long keyHash, byte[] b, int off, int len) throws IOException;
    }

    /**
     * Applies the partition's buffered REMOVE records to a view just replayed from its segments:
     * they clear values that precede them in the log but are not flushed yet.
     */
    void applyRemoves(AarPartition p, LoadedPartition view) throws IOException {
        forEachRemove(p, view::clear);
    }

    /** Passes the key of every buffered REMOVE of the partition to {@code visitor}, in order. */
    void forEachRemove(AarPartition p, RemoveVisitor visitor) throws IOException {
        for (long r = p.chainHead; r != NO_RECORD; r = arena.getLong(r, NEXT_OFFSET)) {
            if (arena.getByte(r, T) == REMOVE) {
                int keyLength = arena.getInt(r, KL);
                byte[] key = scratch(keyLength);
                arena.getBytes(r, KEY, key, 0, keyLength);
                visitor.visit(arena.getLong(r, KEY_HASH_OFFSET), key, 0, keyLength);
            }
        }
    }

    /**
     * Whether a REMOVE of the key is buffered: then none of the key's values in the segments is
     * live, since they all precede it.
     */
    boolean hasRemove(AarPartition p, long keyHash, byte[] key) {
        for (long r = p.chainHead; r != NO_RECORD; r = arena.getLong(r, NEXT_OFFSET)) {
            if (arena.getByte(r, T) == REMOVE && isKey(r, keyHash, key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes the partition's live records as frames of at most {@code frameTarget} payload bytes (a
     * larger record gets a frame of its own). Returns the bytes written, frame headers included.
     */
    long writeChain(AarPartition p, LogWriter writer, int frameTarget) throws IOException {
        return writeChain(arena, p.chainHead, writer, frameTarget);
    }

    /**
     * {@link #writeChain} for a chain of the generation a flush took with it ({@link
     * #detachGeneration}); safe on another thread while appends go on in the current arena.
     */
    long writeFlushingChain(long head, LogWriter writer, int frameTarget) throws IOException {
        if (!generationInFlight) {
            throw new IllegalStateException("no generation is being flushed");
        }
        return writeChain(flushing, head, writer, frameTarget);
    }

    private static long writeChain(OffHeapArena from, long head, LogWriter writer, int frameTarget)
            throws IOException {
        long start = writer.size();
        int inFrame = -1;
        for (long r = head; r != NO_RECORD; r = from.getLong(r, NEXT_OFFSET)) {
            if (from.getByte(r, T) == DEAD) {
                continue;
            }
            int length = logLength(from, r);
            if (inFrame >= 0 && inFrame + length > frameTarget) {
                writer.endFrame();
                inFrame = -1;
            }
            if (inFrame < 0) {
                writer.beginFrame();
                inFrame = 0;
            }
            writer.putBytes(
                    from.chunk(r), (long) OffHeapArena.offset(r) + LOG_RECORD_OFFSET, length);
            inFrame += length;
        }
        if (inFrame >= 0) {
            writer.endFrame();
        }
        return writer.size() - start;
    }

    /**
     * Hands every record appended so far to a flush: they stay readable by {@link
     * #writeFlushingChain} until {@link #releaseGeneration}, and appends start a new arena. The
     * caller detached every chain first.
     */
    void detachGeneration() {
        if (generationInFlight) {
            throw new IllegalStateException("a generation is already being flushed");
        }
        OffHeapArena taken = arena;
        arena = flushing;
        flushing = taken;
        generationInFlight = true;
    }

    /**
     * The detached generation is written: its records are forgotten, but its arena keeps its chunks
     * as the spare that the next generation fills. A full buffer thus neither frees its chunks nor
     * allocates, zeroes and page-faults new ones at every flush (9% of a Q8 join thread). The spare
     * stays charged to the budget until {@link #releaseSpare}, which the store calls whenever the
     * budget refuses it memory and before it loads a partition from disk.
     */
    void releaseGeneration() {
        if (generationInFlight) {
            flushing.recycle();
            generationInFlight = false;
        }
    }

    /**
     * Gives back every chunk of the spare arena, if no flush is using it; returns whether that
     * freed any budget.
     */
    boolean releaseSpare() {
        if (spareBytes() == 0) {
            return false;
        }
        flushing.releaseAll();
        return true;
    }

    /** Budget bytes the spare arena keeps for the next generation (0 while a flush uses it). */
    long spareBytes() {
        return generationInFlight ? 0 : flushing.reservedBytes();
    }

    /** Visits the partition's live buffered values (a snapshot path: allocates keys). */
    void forEachLive(AarPartition p, byte[] window, EntryVisitor visitor) {
        for (long r = p.chainHead; r != NO_RECORD; r = arena.getLong(r, NEXT_OFFSET)) {
            if (arena.getByte(r, T) == APPEND) {
                byte[] key = new byte[arena.getInt(r, KL)];
                arena.getBytes(r, KEY, key, 0, key.length);
                int length = arena.getInt(r, VL);
                byte[] buf = scratch(length);
                arena.getBytes(r, KEY + key.length, buf, 0, length);
                visitor.visit(key, window, buf, 0, length);
            }
        }
    }

    /** Bytes appended to the current arena since it was last reset. */
    long usedBytes() {
        return arena.usedBytes();
    }

    /** Budget bytes both arenas hold. */
    long reservedBytes() {
        return arena.reservedBytes() + flushing.reservedBytes();
    }

    /** Budget bytes the current arena holds. */
    long currentReservedBytes() {
        return arena.reservedBytes();
    }

    /** Forgets every record; the caller detached (or dropped) every chain first. */
    void reset() {
        arena.reset();
    }

    @Override
    public void close() {
        arena.close();
        flushing.close();
    }

    private boolean isKey(long r, long keyHash, byte[] key) {
        return arena.getLong(r, KEY_HASH_OFFSET) == keyHash
                && arena.getInt(r, KL) == key.length
                && arena.equalsBytes(r, KEY, key, 0, key.length);
    }

    private static int logLength(OffHeapArena in, long r) {
        return LOG_HEADER_LENGTH + in.getInt(r, KL) + in.getInt(r, VL);
    }

    private byte[] scratch(int length) {
        if (scratch.length < length) {
            scratch = new byte[Math.max(length, scratch.length * 2)];
        }
        return scratch;
    }
}
