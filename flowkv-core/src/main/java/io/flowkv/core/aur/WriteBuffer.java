package io.flowkv.core.aur;

import io.flowkv.core.ValueConsumer;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapArena;
import io.flowkv.core.memory.OffHeapBuffer;

import java.io.IOException;

import static io.flowkv.core.aur.WindowStatTable.NONE;

/**
 * The values appended since the last flush, and the windows they belong to. Both live off-heap and
 * are charged to the budget.
 *
 * <p>Values are records in one arena, chained per window in append order from the window's write
 * head to its write tail (kept in the {@link WindowStatTable}):
 *
 * <pre>
 *   record:        [next record: long][value length: int][value bytes]
 *   dirty window:  [table id: int][flushed frame length: long][flushed frame position: long]
 *                  [first record: long]
 * </pre>
 *
 * The dirty list names every window with a record, in the order of its first one since the last
 * flush; a flush lays out one data frame per listed window ({@link #setFlushed}), lets the windows
 * go ({@link #detach}: the table forgets them, the records and the layout stay), writes the frames
 * ({@link #writeFrames}, on any one thread: it reads only the arena and the dirty list) and then
 * {@link #recycle}s the buffer. Removing a window unlinks its chain; its records stay in the arena
 * as garbage until the next flush resets it.
 */
final class WriteBuffer implements AutoCloseable {
    private static final int NEXT_OFFSET = 0;
    private static final int LENGTH_OFFSET = 8;
    private static final int RECORD_HEADER = 12;
    private static final int DIRTY_ENTRY = Integer.BYTES + 3 * Long.BYTES;
    private static final int FRAME_LENGTH_OFFSET = Integer.BYTES;
    private static final int FRAME_POSITION_OFFSET = Integer.BYTES + Long.BYTES;
    private static final int FIRST_RECORD_OFFSET = Integer.BYTES + 2 * Long.BYTES;

    private final WindowStatTable table;
    private final MemoryBudget budget;
    private final OffHeapArena arena;
    private final long limit;

    private OffHeapBuffer dirty;
    private int capacity;
    private int count;

    /** Values leave through this array: consumers read heap bytes. Grows to the largest value. */
    private byte[] scratch = new byte[64];

    /** {@code limit}: the bytes of records after which an append asks for a flush first. */
    WriteBuffer(WindowStatTable table, MemoryBudget budget, long limit) {
        this.table = table;
        this.budget = budget;
        this.limit = limit;
        int chunk = (int) Math.min(64 * 1024, Math.max(1024, limit / 4));
        this.arena = new OffHeapArena(budget, chunk);
    }

    /** Windows with buffered values. */
    int windows() {
        return count;
    }

    /** The table id of dirty window {@code i}, {@code 0 <= i < windows()}. */
    int window(int i) {
        return dirty.getInt((long) i * DIRTY_ENTRY);
    }

    /** Whether appending a value of {@code length} bytes would pass the limit (flush first). */
    boolean full(int length) {
        return count > 0 && arena.usedBytes() + RECORD_HEADER + length > limit;
    }

    /**
     * Makes room in the dirty list for one more window; false if the budget refused the larger list
     * (nothing changed).
     */
    boolean tryReserveWindow() {
        return count < capacity
                || growDirty(OffHeapBuffer.tryAllocate(budget, grownCapacity() * DIRTY_ENTRY));
    }

    /** Like {@link #tryReserveWindow}, but a refusal throws. */
    void reserveWindow() {
        if (count == capacity) {
            growDirty(
                    OffHeapBuffer.allocate(
                            budget, grownCapacity() * DIRTY_ENTRY, "AUR dirty-window list"));
        }
    }

    private long grownCapacity() {
        return Math.max(16, capacity * 2L);
    }

    private boolean growDirty(OffHeapBuffer grown) {
        if (grown == null) {
            return false;
        }
        if (dirty != null) {
            dirty.copyTo(0, grown, 0, (long) count * DIRTY_ENTRY);
            dirty.close();
        }
        dirty = grown;
        capacity = (int) grownCapacity();
        return true;
    }

    /**
     * Appends {@code value} to window {@code id}'s chain, listing the window if it is its first;
     * false if the arena has no room and the budget refused a new chunk (nothing changed). The
     * caller made room in the dirty list first ({@link #tryReserveWindow}).
     */
    boolean tryAppend(int id, byte[] value) {
        int length = value.length;
        long record = arena.tryAllocate(RECORD_HEADER + length);
        if (record == OffHeapArena.NO_SPACE) {
            return false;
        }
        arena.putLong(record, NEXT_OFFSET, NONE);
        arena.putInt(record, LENGTH_OFFSET, length);
        arena.putBytes(record, RECORD_HEADER, value, 0, length);
        if (table.writeHead(id) == NONE) {
            table.setWriteHead(id, record);
            table.setDirtySlot(id, count);
            dirty.putInt((long) count * DIRTY_ENTRY, id);
            count++;
        } else {
            arena.putLong(table.writeTail(id), NEXT_OFFSET, record);
        }
        table.setWriteTail(id, record);
        table.setValueCount(id, table.valueCount(id) + 1);
        return true;
    }

    /** Like {@link #tryAppend}, but a refusal throws. */
    void append(int id, byte[] value) {
        if (!tryAppend(id, value)) {
            throw new MemoryBudgetExceededException(
                    "AUR write buffer",
                    RECORD_HEADER + value.length,
                    budget.available(),
                    budget.capacity());
        }
    }

    /** Forgets window {@code id}'s buffered values. */
    void drop(int id) {
        int slot = table.dirtySlot(id);
        if (slot >= 0) {
            int last = window(--count);
            dirty.putInt((long) slot * DIRTY_ENTRY, last);
            table.setDirtySlot(last, slot);
        }
        forget(id);
    }

    private void forget(int id) {
        table.setWriteHead(id, NONE);
        table.setWriteTail(id, NONE);
        table.setValueCount(id, 0);
        table.setDirtySlot(id, -1);
    }

    /** Passes window {@code id}'s buffered values to {@code consumer}; false if it has none. */
    boolean forEachValue(int id, ValueConsumer consumer) {
        boolean any = false;
        for (long r = table.writeHead(id); r != NONE; r = arena.getLong(r, NEXT_OFFSET)) {
            int length = arena.getInt(r, LENGTH_OFFSET);
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, 2 * scratch.length)];
            }
            arena.getBytes(r, RECORD_HEADER, scratch, 0, length);
            consumer.accept(scratch, 0, length);
            any = true;
        }
        return any;
    }

    /** Bytes of window {@code id}'s values as a frame payload: [length: int][bytes] each. */
    long payloadBytes(int id) {
        long bytes = 0;
        for (long r = table.writeHead(id); r != NONE; r = arena.getLong(r, NEXT_OFFSET)) {
            bytes += Integer.BYTES + arena.getInt(r, LENGTH_OFFSET);
        }
        return bytes;
    }

    /** Copies window {@code id}'s values as a frame payload into {@code target} at {@code at}. */
    void copyPayload(int id, OffHeapBuffer target, long at) {
        for (long r = table.writeHead(id); r != NONE; r = arena.getLong(r, NEXT_OFFSET)) {
            int length = arena.getInt(r, LENGTH_OFFSET);
            target.putInt(at, length);
            arena.chunk(r)
                    .copyTo(OffHeapArena.offset(r) + (long) RECORD_HEADER, target, at + 4, length);
            at += Integer.BYTES + length;
        }
    }

    /**
     * Records where a flush puts dirty window {@code i}'s frame, and where its records begin (the
     * table forgets that at {@link #detach}).
     */
    void setFlushed(int i, long position, long frameLength) {
        long entry = (long) i * DIRTY_ENTRY;
        dirty.putLong(entry + FRAME_LENGTH_OFFSET, frameLength);
        dirty.putLong(entry + FRAME_POSITION_OFFSET, position);
        dirty.putLong(entry + FIRST_RECORD_OFFSET, table.writeHead(window(i)));
    }

    /**
     * Writes the frames laid out by {@link #setFlushed} to {@code out}, whose next frame must start
     * at the first one's offset: per dirty window a frame of its values, [length: int][bytes] each.
     * Touches neither the table nor the budget, so another thread may run it while the table goes
     * on with a second buffer.
     */
    void writeFrames(LogWriter out) throws IOException {
        for (int i = 0; i < count; i++) {
            long entry = (long) i * DIRTY_ENTRY;
            long expected = Positions.offset(dirty.getLong(entry + FRAME_POSITION_OFFSET));
            long at = out.beginFrame();
            if (at != expected) {
                throw new IllegalStateException(
                        "AUR frame of dirty window "
                                + i
                                + " laid out at "
                                + expected
                                + ", written at "
                                + at);
            }
            for (long r = dirty.getLong(entry + FIRST_RECORD_OFFSET);
                    r != NONE;
                    r = arena.getLong(r, NEXT_OFFSET)) {
                int length = arena.getInt(r, LENGTH_OFFSET);
                out.putInt(length);
                out.putBytes(arena.chunk(r), OffHeapArena.offset(r) + (long) RECORD_HEADER, length);
            }
            out.endFrame();
        }
    }

    long flushedLength(int i) {
        return dirty.getLong((long) i * DIRTY_ENTRY + FRAME_LENGTH_OFFSET);
    }

    long flushedPosition(int i) {
        return dirty.getLong((long) i * DIRTY_ENTRY + FRAME_POSITION_OFFSET);
    }

    /**
     * Lets every dirty window go after {@link #setFlushed} laid out its frame: the table forgets
     * their records (appends to the window start a new chain, in whichever buffer takes them), the
     * buffer keeps them and the layout for {@link #writeFrames}.
     */
    void detach() {
        for (int i = 0; i < count; i++) {
            forget(window(i));
        }
    }

    /**
     * Empties a detached buffer after its frames were written. Its chunks stay for the appends that
     * follow ({@link OffHeapArena#recycle}) until {@link #releaseSpares}.
     */
    void recycle() {
        count = 0;
        arena.recycle();
    }

    /**
     * Gives back the chunks kept since the last flush that no value has taken yet: before a read
     * asks the budget for prefetched copies, which appends do not need while windows fire.
     */
    void releaseSpares() {
        arena.releaseSpares();
    }

    /** Budget bytes held: the arena's chunks and the dirty list. */
    long memoryBytes() {
        return arena.reservedBytes() + (dirty == null ? 0 : dirty.capacity());
    }

    @Override
    public void close() {
        arena.close();
        if (dirty != null) {
            dirty.close();
            dirty = null;
        }
        capacity = 0;
        count = 0;
        scratch = new byte[0];
    }
}
