package io.flowkv.core.aar;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.index.Hashing;
import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapArena;

import java.io.IOException;
import java.nio.file.Path;

import static io.flowkv.core.aar.KeyListDescriptor.COUNT_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.HEAD_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.KEY_LENGTH_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.KEY_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.LIVE_BYTES_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.NEXT_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.NO_NODE;
import static io.flowkv.core.aar.KeyListDescriptor.TAIL_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.VALUE_LENGTH_OFFSET;
import static io.flowkv.core.aar.KeyListDescriptor.VALUE_OFFSET;

/**
 * A window partition's segments replayed into memory, organised by key (layout in {@link
 * KeyListDescriptor}), so that the per-key reads of a firing window are served without I/O. It
 * covers a prefix of the segments, up to ({@link #segment}, {@link #offset}); the loader replays
 * what was flushed since before each read. Buffered records are never in here.
 */
final class LoadedPartition implements AutoCloseable {
    /** Frees memory elsewhere (flush, evict other partitions); false if nothing could be freed. */
    @FunctionalInterface
    interface MemoryRelief {
        boolean relieve() throws IOException;
    }

    private final MemoryBudget budget;
    private final OffHeapArena arena;
    private final LongHashIndex index;
    private final MemoryRelief relief;
    private final LongHashIndex.KeyMatcher matcher = this::matchesProbe;
    private byte[] probe;
    private int probeOffset;
    private int probeLength;
    private byte[] scratch = new byte[256];
    private int liveKeys;

    /** Replayed up to this segment index and file offset within it. */
    int segment;

    long offset = LogFileHeader.LENGTH;

    LoadedPartition(MemoryBudget budget, int chunkSize, MemoryRelief relief) {
        this.budget = budget;
        this.arena = new OffHeapArena(budget, chunkSize);
        this.index = new LongHashIndex(budget, 64);
        this.relief = relief;
    }

    /** Replays the records of one frame payload in order. */
    void apply(byte[] b, int off, int len, Path file, long payloadFileOffset) throws IOException {
        int end = off + len;
        for (int at = off; at < end; ) {
            int length = AarRecordDescriptor.checkRecord(b, at, end, file, payloadFileOffset, off);
            int keyLength =
                    FrameDescriptor.readIntLE(b, at + AarRecordDescriptor.KEY_LENGTH_OFFSET);
            int keyAt = at + AarRecordDescriptor.LOG_HEADER_LENGTH;
            long hash = Hashing.hash64(b, keyAt, keyLength);
            if (b[at] == AarRecordDescriptor.APPEND) {
                addValue(hash, b, keyAt, keyLength, length);
            } else {
                setProbe(b, keyAt, keyLength);
                long entry = index.get(hash, matcher);
                if (entry != LongHashIndex.NONE) {
                    clearEntry(entry);
                }
            }
            at += length;
        }
    }

    private void addValue(long hash, byte[] b, int keyAt, int keyLength, int recordLength)
            throws IOException {
        long entry = entryFor(hash, b, keyAt, keyLength);
        int valueLength = recordLength - AarRecordDescriptor.LOG_HEADER_LENGTH - keyLength;
        long node = allocate(VALUE_OFFSET + valueLength);
        arena.putLong(node, NEXT_OFFSET, NO_NODE);
        arena.putInt(node, VALUE_LENGTH_OFFSET, valueLength);
        arena.putBytes(node, VALUE_OFFSET, b, keyAt + keyLength, valueLength);
        long tail = arena.getLong(entry, TAIL_OFFSET);
        if (tail == NO_NODE) {
            arena.putLong(entry, HEAD_OFFSET, node);
        } else {
            arena.putLong(tail, NEXT_OFFSET, node);
        }
        arena.putLong(entry, TAIL_OFFSET, node);
        int count = arena.getInt(entry, COUNT_OFFSET) + 1;
        arena.putInt(entry, COUNT_OFFSET, count);
        arena.putLong(
                entry, LIVE_BYTES_OFFSET, arena.getLong(entry, LIVE_BYTES_OFFSET) + recordLength);
        if (count == 1) {
            liveKeys++;
        }
    }

    private long entryFor(long hash, byte[] b, int keyAt, int keyLength) throws IOException {
        setProbe(b, keyAt, keyLength);
        long entry = index.get(hash, matcher);
        if (entry != LongHashIndex.NONE) {
            return entry;
        }
        entry = allocate(KEY_OFFSET + keyLength);
        arena.putLong(entry, HEAD_OFFSET, NO_NODE);
        arena.putLong(entry, TAIL_OFFSET, NO_NODE);
        arena.putLong(entry, LIVE_BYTES_OFFSET, 0);
        arena.putInt(entry, COUNT_OFFSET, 0);
        arena.putInt(entry, KEY_LENGTH_OFFSET, keyLength);
        arena.putBytes(entry, KEY_OFFSET, b, keyAt, keyLength);
        while (true) {
            try {
                setProbe(b, keyAt, keyLength);
                index.put(hash, entry, matcher);
                return entry;
            } catch (MemoryBudgetExceededException e) {
                if (!relief.relieve()) {
                    throw e;
                }
            }
        }
    }

    private long allocate(int length) throws IOException {
        while (true) {
            long pos = arena.tryAllocate(length);
            if (pos != OffHeapArena.NO_SPACE) {
                return pos;
            }
            if (!relief.relieve()) {
                throw new MemoryBudgetExceededException(
                        "loading an AAR window partition",
                        length,
                        budget.available(),
                        budget.capacity());
            }
        }
    }

    boolean emit(long hash, byte[] key, ValueConsumer consumer) {
        long entry = find(hash, key);
        if (entry == LongHashIndex.NONE) {
            return false;
        }
        long node = arena.getLong(entry, HEAD_OFFSET);
        if (node == NO_NODE) {
            return false;
        }
        for (; node != NO_NODE; node = arena.getLong(node, NEXT_OFFSET)) {
            int length = arena.getInt(node, VALUE_LENGTH_OFFSET);
            byte[] buf = scratch(length);
            arena.getBytes(node, VALUE_OFFSET, buf, 0, length);
            consumer.accept(buf, 0, length);
        }
        return true;
    }

    boolean hasValues(long hash, byte[] key) {
        long entry = find(hash, key);
        return entry != LongHashIndex.NONE && arena.getInt(entry, COUNT_OFFSET) > 0;
    }

    /** Clears the key's list; returns the log bytes of the values it held (0 if none). */
    long clear(long hash, byte[] key) {
        return clear(hash, key, 0, key.length);
    }

    long clear(long hash, byte[] b, int off, int len) {
        setProbe(b, off, len);
        long entry = index.get(hash, matcher);
        return entry == LongHashIndex.NONE ? 0 : clearEntry(entry);
    }

    private long clearEntry(long entry) {
        long bytes = arena.getLong(entry, LIVE_BYTES_OFFSET);
        if (arena.getInt(entry, COUNT_OFFSET) > 0) {
            liveKeys--;
        }
        arena.putLong(entry, HEAD_OFFSET, NO_NODE);
        arena.putLong(entry, TAIL_OFFSET, NO_NODE);
        arena.putLong(entry, LIVE_BYTES_OFFSET, 0);
        arena.putInt(entry, COUNT_OFFSET, 0);
        return bytes;
    }

    /** Keys with at least one live value in the replayed segments. */
    int liveKeys() {
        return liveKeys;
    }

    /** Visits every live value (a snapshot path: allocates one array per key). */
    void forEach(byte[] window, EntryVisitor visitor) {
        index.forEachValue(
                entry -> {
                    long node = arena.getLong(entry, HEAD_OFFSET);
                    if (node == NO_NODE) {
                        return;
                    }
                    byte[] key = new byte[arena.getInt(entry, KEY_LENGTH_OFFSET)];
                    arena.getBytes(entry, KEY_OFFSET, key, 0, key.length);
                    for (; node != NO_NODE; node = arena.getLong(node, NEXT_OFFSET)) {
                        int length = arena.getInt(node, VALUE_LENGTH_OFFSET);
                        byte[] buf = scratch(length);
                        arena.getBytes(node, VALUE_OFFSET, buf, 0, length);
                        visitor.visit(key, window, buf, 0, length);
                    }
                });
    }

    long memoryBytes() {
        return arena.reservedBytes() + index.memoryBytes();
    }

    @Override
    public void close() {
        arena.close();
        index.release();
    }

    private long find(long hash, byte[] key) {
        setProbe(key, 0, key.length);
        return index.get(hash, matcher);
    }

    private void setProbe(byte[] b, int off, int len) {
        probe = b;
        probeOffset = off;
        probeLength = len;
    }

    private boolean matchesProbe(long entry) {
        return arena.getInt(entry, KEY_LENGTH_OFFSET) == probeLength
                && arena.equalsBytes(entry, KEY_OFFSET, probe, probeOffset, probeLength);
    }

    private byte[] scratch(int length) {
        if (scratch.length < length) {
            scratch = new byte[Math.max(length, scratch.length * 2)];
        }
        return scratch;
    }
}
