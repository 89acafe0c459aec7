package io.flowkv.core.aur;

import io.flowkv.core.index.Hashing;
import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapBuffer;
import io.flowkv.core.memory.OffHeapSlab;

import java.util.Arrays;

/**
 * The stat table of the AUR store: one slot per live (key, state window), found through a {@link
 * LongHashIndex} keyed by the pair's hash. Slots, the index and the copied key and window bytes all
 * live in native memory charged to the budget; the Java heap holds one chunk reference per {@value
 * #SLOTS_PER_CHUNK} slots and the list of prefetched windows, whose length the prefetch buffer
 * bounds. A slot id stays fixed for the window's life; ids of removed windows are reused.
 *
 * <p>Slot layout, little-endian:
 *
 * <pre>
 *   0 ett            8 max timestamp   16 first sequence   24 data-log bytes
 *  32 write head    40 write tail      48 mark             56 scanned bytes
 *  64 frame head    72 rebuilt head    80 key block        88 flags
 *  92 dirty slot    96 value count    100 work            104 key length
 * 108 window length 112 prefetch slot 116 (unused)        120
 * </pre>
 *
 * The estimated trigger time and whether the engine set it, the largest timestamp, the first flush
 * sequence number of this incarnation (older index entries are dead), the data-log bytes of its
 * flushed frames and the head of their {@link FrameChains chain}, the head and tail of its
 * write-buffer chain, scratch fields of reads and compactions, and where its key and window bytes
 * are (one slab block: key then window). A free slot has key block {@link #FREE}; its write-head
 * field links the free list.
 */
final class WindowStatTable {
    static final int NO_ID = -1;
    static final long NONE = -1L;

    static final int EXPLICIT_ETT = 1;

    /** Read by a get since its last append: the engine fired it, prediction skips it. */
    static final int SERVED = 2;

    static final int SLOT_BYTES = 120;
    static final int SLOTS_PER_CHUNK = 512;

    private static final long FREE = -2L;

    private static final int ETT = 0;
    private static final int MAX_TIMESTAMP = 8;
    private static final int FIRST_SEQ = 16;
    private static final int DISK_BYTES = 24;
    private static final int WRITE_HEAD = 32;
    private static final int WRITE_TAIL = 40;
    private static final int MARK = 48;
    private static final int SCANNED = 56;
    private static final int FRAME_HEAD = 64;
    private static final int REBUILT_HEAD = 72;
    private static final int KEY_BLOCK = 80;
    private static final int FLAGS = 88;
    private static final int DIRTY_SLOT = 92;
    private static final int VALUE_COUNT = 96;
    private static final int WORK = 100;
    private static final int KEY_LENGTH = 104;
    private static final int WINDOW_LENGTH = 108;
    private static final int PREFETCH_SLOT = 112;

    private static final int KEY_CHUNK_BYTES = 64 * 1024;

    private final MemoryBudget budget;
    private final LongHashIndex index;
    private final LongHashIndex.KeyMatcher matcher = this::matchesProbe;
    private final OffHeapSlab keys;

    private OffHeapBuffer[] chunks = new OffHeapBuffer[4];
    private int chunkCount;
    private int freeHead = NO_ID;
    private int highWater;
    private int size;
    private int knownEtts;

    /** The windows with a prefetched copy: id, copy and load stamp per entry, dense. */
    private int[] prefetchIds = new int[16];

    private OffHeapBuffer[] prefetchCopies = new OffHeapBuffer[16];
    private long[] prefetchStamps = new long[16];
    private int prefetchCount;

    private byte[] probeKey;
    private int probeKeyOffset;
    private int probeKeyLength;
    private byte[] probeWindow;
    private int probeWindowOffset;
    private int probeWindowLength;

    WindowStatTable(MemoryBudget budget, int initialCapacity) {
        this.budget = budget;
        this.index = new LongHashIndex(budget, initialCapacity);
        this.keys = new OffHeapSlab(budget, KEY_CHUNK_BYTES);
    }

    int size() {
        return size;
    }

    /** Slot ids are in {@code [0, highWater())}; see {@link #inUse}. */
    int highWater() {
        return highWater;
    }

    boolean inUse(int id) {
        return getLong(id, KEY_BLOCK) != FREE;
    }

    /** Windows whose ETT is known: none means no read has anything to bet on. */
    int knownTriggerTimes() {
        return knownEtts;
    }

    byte[] key(int id) {
        byte[] key = new byte[getInt(id, KEY_LENGTH)];
        keys.getBytes(getLong(id, KEY_BLOCK), 0, key, 0, key.length);
        return key;
    }

    byte[] window(int id) {
        int keyLength = getInt(id, KEY_LENGTH);
        byte[] window = new byte[getInt(id, WINDOW_LENGTH)];
        keys.getBytes(getLong(id, KEY_BLOCK), keyLength, window, 0, window.length);
        return window;
    }

    long memoryBytes() {
        return (long) chunkCount * SLOTS_PER_CHUNK * SLOT_BYTES
                + keys.reservedBytes()
                + index.memoryBytes();
    }

    int find(byte[] key, byte[] window) {
        return find(key, 0, key.length, window, 0, window.length);
    }

    int find(byte[] kb, int ko, int kl, byte[] wb, int wo, int wl) {
        setProbe(kb, ko, kl, wb, wo, wl);
        long v = index.get(hash(kb, ko, kl, wb, wo, wl), matcher);
        return v == LongHashIndex.NONE ? NO_ID : (int) v;
    }

    /** Adds a slot for a window not in the table; copies key and window. */
    int insert(byte[] key, byte[] window, long firstSequence) {
        int id = freeHead != NO_ID ? freeHead : highWater;
        if (id == highWater && highWater == chunkCount * SLOTS_PER_CHUNK) {
            addChunk();
        }
        int length = key.length + window.length;
        long block = keys.tryAllocate(length);
        if (block == OffHeapSlab.NO_SPACE) {
            throw refused("AUR stat table key", OffHeapSlab.blockBytes(length));
        }
        keys.putBytes(block, 0, key, 0, key.length);
        keys.putBytes(block, key.length, window, 0, window.length);
        setProbe(key, 0, key.length, window, 0, window.length);
        try {
            index.put(hash(key, 0, key.length, window, 0, window.length), id, matcher);
        } catch (RuntimeException e) {
            keys.free(block, length);
            throw e;
        }
        if (id == highWater) {
            highWater++;
        } else {
            freeHead = (int) getLong(id, WRITE_HEAD);
        }
        OffHeapBuffer c = chunk(id);
        long at = slot(id);
        c.putLong(at + ETT, TriggerTimePredictor.UNKNOWN);
        c.putLong(at + MAX_TIMESTAMP, Long.MIN_VALUE);
        c.putLong(at + FIRST_SEQ, firstSequence);
        c.putLong(at + DISK_BYTES, 0);
        c.putLong(at + WRITE_HEAD, NONE);
        c.putLong(at + WRITE_TAIL, NONE);
        c.putLong(at + MARK, 0);
        c.putLong(at + SCANNED, 0);
        c.putLong(at + FRAME_HEAD, FrameChains.END);
        c.putLong(at + REBUILT_HEAD, FrameChains.END);
        c.putLong(at + KEY_BLOCK, block);
        c.putInt(at + FLAGS, 0);
        c.putInt(at + DIRTY_SLOT, -1);
        c.putInt(at + VALUE_COUNT, 0);
        c.putInt(at + WORK, 0);
        c.putInt(at + KEY_LENGTH, key.length);
        c.putInt(at + WINDOW_LENGTH, window.length);
        c.putInt(at + PREFETCH_SLOT, -1);
        size++;
        return id;
    }

    /** Frees the slot. The caller has already dropped its prefetched values and buffer chain. */
    void remove(int id) {
        if (getInt(id, PREFETCH_SLOT) >= 0) {
            throw new IllegalStateException("AUR window removed with its prefetched copy held");
        }
        setEtt(id, TriggerTimePredictor.UNKNOWN);
        byte[] key = key(id);
        byte[] window = window(id);
        setProbe(key, 0, key.length, window, 0, window.length);
        index.remove(hash(key, 0, key.length, window, 0, window.length), matcher);
        keys.free(getLong(id, KEY_BLOCK), key.length + window.length);
        putLong(id, KEY_BLOCK, FREE);
        putLong(id, WRITE_HEAD, freeHead);
        freeHead = id;
        size--;
    }

    private void addChunk() {
        if (chunkCount == chunks.length) {
            chunks = Arrays.copyOf(chunks, chunks.length * 2);
        }
        long bytes = (long) SLOTS_PER_CHUNK * SLOT_BYTES;
        OffHeapBuffer c = OffHeapBuffer.tryAllocate(budget, bytes);
        if (c == null) {
            throw refused(
                    "AUR stat table slots for "
                            + (chunkCount + 1) * SLOTS_PER_CHUNK
                            + " windows (the AUR store keeps every live session, count or global"
                            + " window of each key in native memory, about "
                            + (SLOT_BYTES + 32)
                            + " bytes each plus its key)",
                    bytes);
        }
        chunks[chunkCount++] = c;
    }

    private MemoryBudgetExceededException refused(String purpose, long bytes) {
        return new MemoryBudgetExceededException(
                purpose, bytes, budget.available(), budget.capacity());
    }

    // ---------------------------------------------------------------- fields

    long ett(int id) {
        return getLong(id, ETT);
    }

    void setEtt(int id, long ett) {
        long old = getLong(id, ETT);
        knownEtts +=
                (ett != TriggerTimePredictor.UNKNOWN ? 1 : 0)
                        - (old != TriggerTimePredictor.UNKNOWN ? 1 : 0);
        putLong(id, ETT, ett);
    }

    long maxTimestamp(int id) {
        return getLong(id, MAX_TIMESTAMP);
    }

    void setMaxTimestamp(int id, long timestamp) {
        putLong(id, MAX_TIMESTAMP, timestamp);
    }

    long firstSeq(int id) {
        return getLong(id, FIRST_SEQ);
    }

    long diskBytes(int id) {
        return getLong(id, DISK_BYTES);
    }

    void setDiskBytes(int id, long bytes) {
        putLong(id, DISK_BYTES, bytes);
    }

    long writeHead(int id) {
        return getLong(id, WRITE_HEAD);
    }

    void setWriteHead(int id, long record) {
        putLong(id, WRITE_HEAD, record);
    }

    long writeTail(int id) {
        return getLong(id, WRITE_TAIL);
    }

    void setWriteTail(int id, long record) {
        putLong(id, WRITE_TAIL, record);
    }

    long mark(int id) {
        return getLong(id, MARK);
    }

    void setMark(int id, long stamp) {
        putLong(id, MARK, stamp);
    }

    long scanned(int id) {
        return getLong(id, SCANNED);
    }

    void setScanned(int id, long bytes) {
        putLong(id, SCANNED, bytes);
    }

    long frameHead(int id) {
        return getLong(id, FRAME_HEAD);
    }

    void setFrameHead(int id, long record) {
        putLong(id, FRAME_HEAD, record);
    }

    long rebuiltHead(int id) {
        return getLong(id, REBUILT_HEAD);
    }

    void setRebuiltHead(int id, long record) {
        putLong(id, REBUILT_HEAD, record);
    }

    int flags(int id) {
        return getInt(id, FLAGS);
    }

    void setFlags(int id, int flags) {
        putInt(id, FLAGS, flags);
    }

    int dirtySlot(int id) {
        return getInt(id, DIRTY_SLOT);
    }

    void setDirtySlot(int id, int slot) {
        putInt(id, DIRTY_SLOT, slot);
    }

    int valueCount(int id) {
        return getInt(id, VALUE_COUNT);
    }

    void setValueCount(int id, int count) {
        putInt(id, VALUE_COUNT, count);
    }

    int work(int id) {
        return getInt(id, WORK);
    }

    void setWork(int id, int work) {
        putInt(id, WORK, work);
    }

    // ---------------------------------------------------------------- prefetched copies

    /** The window's prefetched copy, or null. */
    OffHeapBuffer prefetched(int id) {
        int p = getInt(id, PREFETCH_SLOT);
        return p < 0 ? null : prefetchCopies[p];
    }

    long prefetchStamp(int id) {
        return prefetchStamps[getInt(id, PREFETCH_SLOT)];
    }

    /** Sets the window's copy (the store owns it); keeps the stamp of a copy it replaces. */
    void setPrefetched(int id, OffHeapBuffer copy, long stamp) {
        int p = getInt(id, PREFETCH_SLOT);
        if (p < 0) {
            if (prefetchCount == prefetchIds.length) {
                int capacity = prefetchCount * 2;
                prefetchIds = Arrays.copyOf(prefetchIds, capacity);
                prefetchCopies = Arrays.copyOf(prefetchCopies, capacity);
                prefetchStamps = Arrays.copyOf(prefetchStamps, capacity);
            }
            p = prefetchCount++;
            prefetchIds[p] = id;
            prefetchStamps[p] = stamp;
            putInt(id, PREFETCH_SLOT, p);
        }
        prefetchCopies[p] = copy;
    }

    /** Forgets the window's copy (the caller closes it). */
    void clearPrefetched(int id) {
        int p = getInt(id, PREFETCH_SLOT);
        if (p < 0) {
            return;
        }
        int last = --prefetchCount;
        if (p != last) {
            prefetchIds[p] = prefetchIds[last];
            prefetchCopies[p] = prefetchCopies[last];
            prefetchStamps[p] = prefetchStamps[last];
            putInt(prefetchIds[p], PREFETCH_SLOT, p);
        }
        prefetchCopies[last] = null;
        putInt(id, PREFETCH_SLOT, -1);
    }

    /** Windows with a prefetched copy; {@link #prefetchedId} lists them (clearing reorders). */
    int prefetchedCount() {
        return prefetchCount;
    }

    int prefetchedId(int i) {
        return prefetchIds[i];
    }

    // ---------------------------------------------------------------- slots

    private OffHeapBuffer chunk(int id) {
        return chunks[id / SLOTS_PER_CHUNK];
    }

    private static long slot(int id) {
        return (long) (id % SLOTS_PER_CHUNK) * SLOT_BYTES;
    }

    private long getLong(int id, int field) {
        return chunk(id).getLong(slot(id) + field);
    }

    private void putLong(int id, int field, long value) {
        chunk(id).putLong(slot(id) + field, value);
    }

    private int getInt(int id, int field) {
        return chunk(id).getInt(slot(id) + field);
    }

    private void putInt(int id, int field, int value) {
        chunk(id).putInt(slot(id) + field, value);
    }

    private static long hash(byte[] kb, int ko, int kl, byte[] wb, int wo, int wl) {
        // Same value as Hashing.hash64(key, window), computed on ranges of a scan buffer.
        return Hashing.hash64(wb, wo, wl, Hashing.hash64(kb, ko, kl) ^ ((long) kl << 1));
    }

    private void setProbe(byte[] kb, int ko, int kl, byte[] wb, int wo, int wl) {
        probeKey = kb;
        probeKeyOffset = ko;
        probeKeyLength = kl;
        probeWindow = wb;
        probeWindowOffset = wo;
        probeWindowLength = wl;
    }

    private boolean matchesProbe(long value) {
        int id = (int) value;
        if (getInt(id, KEY_LENGTH) != probeKeyLength
                || getInt(id, WINDOW_LENGTH) != probeWindowLength) {
            return false;
        }
        long block = getLong(id, KEY_BLOCK);
        return keys.equalsBytes(block, 0, probeKey, probeKeyOffset, probeKeyLength)
                && keys.equalsBytes(
                        block, probeKeyLength, probeWindow, probeWindowOffset, probeWindowLength);
    }

    /** Returns all memory to the budget; the table is unusable afterwards. */
    void release() {
        index.release();
        keys.close();
        for (int i = 0; i < chunkCount; i++) {
            chunks[i].close();
            chunks[i] = null;
        }
        chunkCount = 0;
        highWater = 0;
        size = 0;
        prefetchCount = 0;
    }
}
