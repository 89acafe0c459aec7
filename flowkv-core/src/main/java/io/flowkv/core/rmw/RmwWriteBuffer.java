package io.flowkv.core.rmw;

import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.index.LongHashIndex.KeyMatcher;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapArena;
import io.flowkv.core.memory.OffHeapBuffer;
import io.flowkv.core.memory.OffHeapLongArray;

import static io.flowkv.core.rmw.RmwRecordDescriptor.HEADER;
import static io.flowkv.core.rmw.RmwRecordDescriptor.KEY_LENGTH;
import static io.flowkv.core.rmw.RmwRecordDescriptor.KIND;
import static io.flowkv.core.rmw.RmwRecordDescriptor.NAMESPACE_LENGTH;
import static io.flowkv.core.rmw.RmwRecordDescriptor.VALUE_LENGTH;

/**
 * The hash write buffer: records in an {@link OffHeapArena}, found through a {@link LongHashIndex}
 * from the (key, namespace) hash to the record's arena position, plus the arena positions in
 * insertion order so that a flush writes them without walking the hash table. A record is
 * overwritten in place while its value fits the room it was allocated with; otherwise a new record
 * replaces it and the old one is marked superseded (its bytes stay until the next reset).
 *
 * <pre>
 *   0          8          16         24         28         32
 *  +----------+----------+----------+----------+----------+--------------------------------+
 *  |   hash   | prev pos | new pos  | prev len | capacity | payload (RmwRecordDescriptor)  |
 *  +----------+----------+----------+----------+----------+--------------------------------+
 * </pre>
 *
 * prev pos / prev len: a value-log frame known (without a read) to hold an older version of this
 * key, or {@link Positions#NONE}; only a hint for the flush. new pos: where the flush wrote the
 * record. capacity: room for the value. Kind {@link #SUPERSEDED} exists only here, never on disk.
 */
final class RmwWriteBuffer implements AutoCloseable {
    static final int HASH = 0;
    static final int PREV_POS = 8;
    static final int NEW_POS = 16;
    static final int PREV_FRAME_LENGTH = 24;
    static final int VALUE_CAPACITY = 28;
    static final int PAYLOAD = 32;

    static final byte SUPERSEDED = 2;
    static final long NONE = LongHashIndex.NONE;

    private final OffHeapArena arena;
    private final LongHashIndex index;
    private final OffHeapLongArray records;
    private int count;

    RmwWriteBuffer(MemoryBudget budget, int chunkSize) {
        this.arena = new OffHeapArena(budget, chunkSize);
        LongHashIndex idx = new LongHashIndex(budget, 256);
        try {
            this.records = OffHeapLongArray.allocate(budget, 256, "RMW write buffer record list");
        } catch (RuntimeException e) {
            idx.release();
            arena.close();
            throw e;
        }
        this.index = idx;
    }

    static int recordSize(int keyLen, int nsLen, int valueCapacity) {
        return PAYLOAD + HEADER + keyLen + nsLen + valueCapacity;
    }

    long find(long hash, KeyMatcher matcher) {
        return index.get(hash, matcher);
    }

    /**
     * Allocates a put record for (key, namespace) with room for {@code valueCapacity} value bytes
     * (value length 0); returns its position, or {@link OffHeapArena#NO_SPACE} when the budget
     * refuses. The record is invisible until {@link #publish}.
     */
    long tryAllocate(long hash, byte[] key, byte[] namespace, int valueCapacity) {
        if (!records.tryGrow(count + 1L, count)) {
            return OffHeapArena.NO_SPACE;
        }
        long pos = arena.tryAllocate(recordSize(key.length, namespace.length, valueCapacity));
        if (pos == OffHeapArena.NO_SPACE) {
            return pos;
        }
        arena.putLong(pos, HASH, hash);
        arena.putLong(pos, PREV_POS, NONE);
        arena.putLong(pos, NEW_POS, NONE);
        arena.putInt(pos, PREV_FRAME_LENGTH, 0);
        arena.putInt(pos, VALUE_CAPACITY, valueCapacity);
        arena.putByte(pos, PAYLOAD + KIND, RmwRecordDescriptor.PUT);
        arena.putInt(pos, PAYLOAD + KEY_LENGTH, key.length);
        arena.putInt(pos, PAYLOAD + NAMESPACE_LENGTH, namespace.length);
        arena.putInt(pos, PAYLOAD + VALUE_LENGTH, 0);
        arena.putBytes(pos, PAYLOAD + HEADER, key, 0, key.length);
        arena.putBytes(pos, PAYLOAD + HEADER + key.length, namespace, 0, namespace.length);
        return pos;
    }

    /**
     * Makes an allocated record the key's current one; a record it replaces is superseded. May
     * throw {@link io.flowkv.core.memory.MemoryBudgetExceededException} when the hash table cannot
     * grow, leaving the buffer as it was.
     */
    void publish(long pos, KeyMatcher matcher) {
        long old = index.put(arena.getLong(pos, HASH), pos, matcher);
        if (old != NONE) {
            arena.putByte(old, PAYLOAD + KIND, SUPERSEDED);
        }
        records.set(count++, pos);
    }

    /** Forgets the key's record (a remove of a key that has no version on disk). */
    void drop(long pos, KeyMatcher matcher) {
        index.remove(arena.getLong(pos, HASH), matcher);
        arena.putByte(pos, PAYLOAD + KIND, SUPERSEDED);
    }

    void setValue(long pos, byte[] value) {
        arena.putBytes(
                pos,
                PAYLOAD + HEADER + keyLength(pos) + namespaceLength(pos),
                value,
                0,
                value.length);
        arena.putInt(pos, PAYLOAD + VALUE_LENGTH, value.length);
        arena.putByte(pos, PAYLOAD + KIND, RmwRecordDescriptor.PUT);
    }

    void makeTombstone(long pos) {
        arena.putInt(pos, PAYLOAD + VALUE_LENGTH, 0);
        arena.putByte(pos, PAYLOAD + KIND, RmwRecordDescriptor.TOMBSTONE);
    }

    void setPrevious(long pos, long framePos, int frameLength) {
        arena.putLong(pos, PREV_POS, framePos);
        arena.putInt(pos, PREV_FRAME_LENGTH, frameLength);
    }

    long previousPosition(long pos) {
        return arena.getLong(pos, PREV_POS);
    }

    int previousFrameLength(long pos) {
        return arena.getInt(pos, PREV_FRAME_LENGTH);
    }

    void setNewPosition(long pos, long framePos) {
        arena.putLong(pos, NEW_POS, framePos);
    }

    long newPosition(long pos) {
        return arena.getLong(pos, NEW_POS);
    }

    long hash(long pos) {
        return arena.getLong(pos, HASH);
    }

    byte kind(long pos) {
        return arena.getByte(pos, PAYLOAD + KIND);
    }

    int keyLength(long pos) {
        return arena.getInt(pos, PAYLOAD + KEY_LENGTH);
    }

    int namespaceLength(long pos) {
        return arena.getInt(pos, PAYLOAD + NAMESPACE_LENGTH);
    }

    int valueLength(long pos) {
        return arena.getInt(pos, PAYLOAD + VALUE_LENGTH);
    }

    int valueCapacity(long pos) {
        return arena.getInt(pos, VALUE_CAPACITY);
    }

    int payloadLength(long pos) {
        return RmwRecordDescriptor.payloadLength(
                keyLength(pos), namespaceLength(pos), valueLength(pos));
    }

    /** The chunk and index of the record's payload, for copying it into a log frame. */
    OffHeapBuffer chunk(long pos) {
        return arena.chunk(pos);
    }

    long payloadIndex(long pos) {
        return OffHeapArena.offset(pos) + (long) PAYLOAD;
    }

    void copyValue(long pos, byte[] dst, int dstOffset) {
        arena.getBytes(
                pos,
                PAYLOAD + HEADER + keyLength(pos) + namespaceLength(pos),
                dst,
                dstOffset,
                valueLength(pos));
    }

    byte[] copyKey(long pos) {
        byte[] key = new byte[keyLength(pos)];
        arena.getBytes(pos, PAYLOAD + HEADER, key, 0, key.length);
        return key;
    }

    byte[] copyNamespace(long pos) {
        byte[] ns = new byte[namespaceLength(pos)];
        arena.getBytes(pos, PAYLOAD + HEADER + keyLength(pos), ns, 0, ns.length);
        return ns;
    }

    boolean keyEquals(long pos, byte[] key, byte[] namespace) {
        return keyLength(pos) == key.length
                && namespaceLength(pos) == namespace.length
                && arena.equalsBytes(pos, PAYLOAD + HEADER, key, 0, key.length)
                && arena.equalsBytes(
                        pos, PAYLOAD + HEADER + key.length, namespace, 0, namespace.length);
    }

    /** Compares with a record payload in a heap array (a frame read from the log). */
    boolean keyEquals(long pos, byte[] payload, int payloadOffset) {
        int keyLen = RmwRecordDescriptor.keyLength(payload, payloadOffset);
        int nsLen = RmwRecordDescriptor.namespaceLength(payload, payloadOffset);
        return keyLength(pos) == keyLen
                && namespaceLength(pos) == nsLen
                && arena.equalsBytes(
                        pos, PAYLOAD + HEADER, payload, payloadOffset + HEADER, keyLen + nsLen);
    }

    /**
     * Orders the record list by {@link PagedHashIndex#placementOrder} of the records' hashes, so
     * that applying a flush to a spilling index walks its pages once each, in order. In place (a
     * heap sort: no memory to ask the budget for, no recursion); the records themselves do not
     * move, and at most one record per key is not superseded, so no outcome depends on the order.
     */
    void sortByIndexPlacement() {
        for (int i = count / 2 - 1; i >= 0; i--) {
            siftDown(i, count);
        }
        for (int end = count - 1; end > 0; end--) {
            long top = records.get(0);
            records.set(0, records.get(end));
            records.set(end, top);
            siftDown(0, end);
        }
    }

    private void siftDown(int i, int n) {
        long rec = records.get(i);
        long key = placement(rec);
        while (true) {
            int child = 2 * i + 1;
            if (child >= n) {
                break;
            }
            long childRec = records.get(child);
            long childKey = placement(childRec);
            if (child + 1 < n) {
                long rightRec = records.get(child + 1);
                long rightKey = placement(rightRec);
                if (Long.compareUnsigned(rightKey, childKey) > 0) {
                    child++;
                    childRec = rightRec;
                    childKey = rightKey;
                }
            }
            if (Long.compareUnsigned(key, childKey) >= 0) {
                break;
            }
            records.set(i, childRec);
            i = child;
        }
        records.set(i, rec);
    }

    private long placement(long rec) {
        return PagedHashIndex.placementOrder(arena.getLong(rec, HASH));
    }

    /** Records in insertion order (or index placement order after a sort), superseded included. */
    int recordCount() {
        return count;
    }

    long record(int i) {
        return records.get(i);
    }

    /** Keys with a current record (put or tombstone). */
    int liveCount() {
        return index.size();
    }

    long usedBytes() {
        return arena.usedBytes();
    }

    long memoryBytes() {
        return arena.reservedBytes() + index.memoryBytes() + records.memoryBytes();
    }

    void reset() {
        arena.reset();
        index.clear();
        count = 0;
    }

    @Override
    public void close() {
        arena.close();
        index.release();
        records.close();
    }
}
