package io.flowkv.core.aur;

import io.flowkv.core.index.CacheShare;
import io.flowkv.core.index.Hashing;
import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.index.PagedRecords;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapBuffer;
import io.flowkv.core.memory.OffHeapSlab;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * The stat table of the AUR store: one record per live (key, state window), found through a {@link
 * PagedHashIndex} keyed by the pair's hash. Records are {@link PagedRecords}: a bounded cache of
 * pages in native memory charged to the budget, the rest in a scratch page file, so a store holds
 * any number of live windows (count windows of millions of keys) in a fixed budget; cold windows
 * cost a page read when next touched. Key and window bytes are kept in the record when together
 * they fit {@value #INLINE_BYTES} bytes, else in a native {@link OffHeapSlab} block. The Java heap
 * holds the list of prefetched windows, whose length the prefetch buffer bounds. A record id stays
 * fixed for the window's life; ids of removed windows are reused.
 *
 * <p>Record layout, little-endian:
 *
 * <pre>
 *   0 ett            8 max timestamp   16 first sequence   24 data-log bytes
 *  32 write head    40 write tail      48 batch stamp      56 collected bytes
 *  64 frame head    72 rebuilt head    80 key block        88 flags
 *  92 dirty slot    96 value count    100 collected frames 104 key length
 * 108 window length 112 prefetch slot 116 (unused)        120 key and window bytes (inline)
 * 168
 * </pre>
 *
 * The estimated trigger time and whether the engine set it, the largest timestamp, the first flush
 * sequence number of this incarnation (older index entries are dead), the data-log bytes of its
 * flushed frames and the head of their {@link FrameChains chain}, the head and tail of its
 * write-buffer chain, what the read now running collected for it (see {@link BatchLoader}), and
 * where its key and window bytes are ({@link #INLINE} or a slab block: key then window). A free
 * record has key block {@link #FREE}; its write-head field links the free list.
 */
final class WindowStatTable {
    static final int NO_ID = -1;
    static final long NONE = -1L;

    static final int EXPLICIT_ETT = 1;

    /** Read by a get since its last append: the engine fired it, prediction skips it. */
    static final int SERVED = 2;

    static final int RECORD_BYTES = 168;
    static final int INLINE_BYTES = 48;

    private static final long FREE = -2L;
    private static final long INLINE = -3L;

    private static final int ETT = 0;
    private static final int MAX_TIMESTAMP = 8;
    private static final int FIRST_SEQ = 16;
    private static final int DISK_BYTES = 24;
    private static final int WRITE_HEAD = 32;
    private static final int WRITE_TAIL = 40;
    private static final int BATCH_STAMP = 48;
    private static final int COLLECTED_BYTES = 56;
    private static final int FRAME_HEAD = 64;
    private static final int REBUILT_HEAD = 72;
    private static final int KEY_BLOCK = 80;
    private static final int FLAGS = 88;
    private static final int DIRTY_SLOT = 92;
    private static final int VALUE_COUNT = 96;
    private static final int COLLECTED_FRAMES = 100;
    private static final int KEY_LENGTH = 104;
    private static final int WINDOW_LENGTH = 108;
    private static final int PREFETCH_SLOT = 112;
    private static final int KEY_BYTES = 120;

    private static final int KEY_CHUNK_BYTES = 64 * 1024;

    private final MemoryBudget budget;
    private final PagedRecords records;

    /** Every window's ETT again, 8 bytes per id: see {@link #packedEtt}. */
    private final PagedRecords triggerTimes;

    private final PagedHashIndex index;
    private final LongHashIndex.KeyMatcher matcher = this::matchesProbe;
    private final OffHeapSlab keys;

    private int freeHead = NO_ID;
    private int highWater;
    private int size;
    private int knownEtts;

    /** See {@link #rankChanges()}. */
    private long rankChanges;

    /** The windows with a prefetched copy: id, copy and load stamp per entry, dense. */
    private int[] prefetchIds = new int[16];

    private OffHeapBuffer[] prefetchCopies = new OffHeapBuffer[16];
    private long[] prefetchStamps = new long[16];
    private int prefetchCount;

    /** The last window found or inserted: its id and its key and window bytes. */
    private int lastFoundId = NO_ID;

    private byte[] lastFound = new byte[64];
    private int lastFoundKeyLength;
    private int lastFoundWindowLength;

    private byte[] probeKey;
    private int probeKeyOffset;
    private int probeKeyLength;
    private byte[] probeWindow;
    private int probeWindowOffset;
    private int probeWindowLength;

    /**
     * An empty table whose page caches take about {@code cacheBytes} (a quarter for the hash index,
     * a sixteenth for the copy of the trigger times, the rest for records), and then more from
     * {@code share}, and whose scratch files are in {@code directory}.
     */
    WindowStatTable(
            MemoryBudget budget, FileIo io, Path directory, long cacheBytes, CacheShare share) {
        this.budget = budget;
        long triggerTimesCache = Math.max(PagedRecords.MIN_CACHE_BYTES, cacheBytes / 16);
        this.records =
                new PagedRecords(
                        budget,
                        io,
                        directory.resolve(SCRATCH_PREFIX + "stat.records"),
                        "AUR stat table",
                        RECORD_BYTES,
                        Math.max(
                                PagedRecords.MIN_CACHE_BYTES,
                                cacheBytes - indexCacheBytes(cacheBytes) - triggerTimesCache),
                        share);
        this.triggerTimes =
                new PagedRecords(
                        budget,
                        io,
                        directory.resolve(SCRATCH_PREFIX + "trigger-times.records"),
                        "AUR trigger times",
                        Long.BYTES,
                        triggerTimesCache,
                        share);
        PagedHashIndex idx = null;
        try {
            idx =
                    new PagedHashIndex(
                            budget,
                            io,
                            directory,
                            SCRATCH_PREFIX + "stat-index-",
                            indexCacheBytes(cacheBytes),
                            1024,
                            share);
            this.keys = new OffHeapSlab(budget, KEY_CHUNK_BYTES);
        } catch (RuntimeException e) {
            if (idx != null) {
                idx.close();
            }
            records.close();
            triggerTimes.close();
            throw e;
        }
        this.index = idx;
    }

    private static long indexCacheBytes(long cacheBytes) {
        return Math.max(PagedHashIndex.MIN_CACHE_BYTES, cacheBytes / 4);
    }

    /** File names of the scratch files of a running store (deleted by {@link #release}). */
    static final String SCRATCH_PREFIX = "scratch-";

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

    /**
     * Counts the changes that can move a window up the prefetch's ranking or make it a candidate
     * again: a new known ETT, a window's first flushed bytes, an append after a read, a prefetched
     * copy dropped unread. A ranking taken while this stays the same is still right for the windows
     * that are still candidates (see {@link PrefetchBuffer#planAhead}).
     */
    long rankChanges() {
        return rankChanges;
    }

    byte[] key(int id) {
        byte[] key = new byte[getInt(id, KEY_LENGTH)];
        readKeyBytes(id, 0, key);
        return key;
    }

    byte[] window(int id) {
        byte[] window = new byte[getInt(id, WINDOW_LENGTH)];
        readKeyBytes(id, getInt(id, KEY_LENGTH), window);
        return window;
    }

    /** Bytes of the key and window together: what {@link #readKeyAndWindow} copies. */
    int keyAndWindowLength(int id) {
        return getInt(id, KEY_LENGTH) + getInt(id, WINDOW_LENGTH);
    }

    int keyLength(int id) {
        return getInt(id, KEY_LENGTH);
    }

    /** Copies the key, then the window, to the start of {@code dst}. */
    void readKeyAndWindow(int id, byte[] dst) {
        long block = getLong(id, KEY_BLOCK);
        int length = keyAndWindowLength(id);
        if (block == INLINE) {
            records.getBytes(id, KEY_BYTES, dst, 0, length);
        } else {
            keys.getBytes(block, 0, dst, 0, length);
        }
    }

    private void readKeyBytes(int id, int from, byte[] dst) {
        long block = getLong(id, KEY_BLOCK);
        if (block == INLINE) {
            records.getBytes(id, KEY_BYTES + from, dst, 0, dst.length);
        } else {
            keys.getBytes(block, from, dst, 0, dst.length);
        }
    }

    /** Why the records became unusable (a scratch page was lost), or null. */
    String failure() {
        return records.failure();
    }

    long memoryBytes() {
        return records.memoryBytes()
                + triggerTimes.memoryBytes()
                + keys.reservedBytes()
                + index.memoryBytes();
    }

    /** Pages of the table read back from and written to its scratch files. */
    long pageReads() {
        return records.pageReads() + triggerTimes.pageReads() + index.pageReads();
    }

    long pageWrites() {
        return records.pageWrites() + triggerTimes.pageWrites() + index.pageWrites();
    }

    /**
     * The record of ({@code key}, {@code window}), or {@link #NO_ID}. An element's append, the
     * timer its window registers and the one it deletes look up the same window in a row: the last
     * window found is remembered (its bytes copied), so the repeats cost a byte comparison.
     */
    int find(byte[] key, byte[] window) {
        if (lastFoundId != NO_ID
                && key.length == lastFoundKeyLength
                && window.length == lastFoundWindowLength
                && Arrays.equals(key, 0, key.length, lastFound, 0, key.length)
                && Arrays.equals(
                        window,
                        0,
                        window.length,
                        lastFound,
                        key.length,
                        key.length + window.length)) {
            return lastFoundId;
        }
        int id = find(key, 0, key.length, window, 0, window.length);
        if (id != NO_ID) {
            remember(id, key, window);
        }
        return id;
    }

    private void remember(int id, byte[] key, byte[] window) {
        int length = key.length + window.length;
        if (lastFound.length < length) {
            lastFound = new byte[Math.max(length, 2 * lastFound.length)];
        }
        System.arraycopy(key, 0, lastFound, 0, key.length);
        System.arraycopy(window, 0, lastFound, key.length, window.length);
        lastFoundKeyLength = key.length;
        lastFoundWindowLength = window.length;
        lastFoundId = id;
    }

    int find(byte[] kb, int ko, int kl, byte[] wb, int wo, int wl) {
        setProbe(kb, ko, kl, wb, wo, wl);
        long v = index.get(hash(kb, ko, kl, wb, wo, wl), matcher);
        return v == PagedHashIndex.NONE ? NO_ID : (int) v;
    }

    /** Adds a record for a window not in the table; copies key and window. */
    int insert(byte[] key, byte[] window, long firstSequence) {
        int id = freeHead != NO_ID ? freeHead : highWater;
        if (id == highWater) {
            if (highWater == Integer.MAX_VALUE - 1) {
                throw new IllegalStateException("AUR stat table full: 2^31 live windows");
            }
            records.ensureCapacity((long) highWater + 1);
            triggerTimes.ensureCapacity((long) highWater + 1);
        }
        int length = key.length + window.length;
        long block = INLINE;
        if (length > INLINE_BYTES) {
            block = keys.tryAllocate(length);
            if (block == OffHeapSlab.NO_SPACE) {
                throw new MemoryBudgetExceededException(
                        "AUR stat table key of " + length + " bytes",
                        OffHeapSlab.blockBytes(length),
                        budget.available(),
                        budget.capacity());
            }
            keys.putBytes(block, 0, key, 0, key.length);
            keys.putBytes(block, key.length, window, 0, window.length);
        }
        setProbe(key, 0, key.length, window, 0, window.length);
        try {
            index.put(hash(key, 0, key.length, window, 0, window.length), id, matcher);
        } catch (RuntimeException e) {
            if (block != INLINE) {
                keys.free(block, length);
            }
            throw e;
        }
        if (id == highWater) {
            highWater++;
        } else {
            freeHead = (int) getLong(id, WRITE_HEAD);
        }
        if (block == INLINE) {
            records.putBytes(id, KEY_BYTES, key, 0, key.length);
            records.putBytes(id, KEY_BYTES + key.length, window, 0, window.length);
        }
        putLong(id, ETT, TriggerTimePredictor.UNKNOWN);
        triggerTimes.putLong(id, 0, TriggerTimePredictor.UNKNOWN);
        putLong(id, MAX_TIMESTAMP, Long.MIN_VALUE);
        putLong(id, FIRST_SEQ, firstSequence);
        putLong(id, DISK_BYTES, 0);
        putLong(id, WRITE_HEAD, NONE);
        putLong(id, WRITE_TAIL, NONE);
        putLong(id, BATCH_STAMP, 0);
        putLong(id, COLLECTED_BYTES, 0);
        putLong(id, FRAME_HEAD, FrameChains.END);
        putLong(id, REBUILT_HEAD, FrameChains.END);
        putLong(id, KEY_BLOCK, block);
        putInt(id, FLAGS, 0);
        putInt(id, DIRTY_SLOT, -1);
        putInt(id, VALUE_COUNT, 0);
        putInt(id, COLLECTED_FRAMES, 0);
        putInt(id, KEY_LENGTH, key.length);
        putInt(id, WINDOW_LENGTH, window.length);
        putInt(id, PREFETCH_SLOT, -1);
        size++;
        remember(id, key, window);
        return id;
    }

    /**
     * Frees the record of ({@code key}, {@code window}), found as {@code id}. The caller has
     * already dropped its prefetched values and buffer chain.
     */
    void remove(int id, byte[] key, byte[] window) {
        if (getInt(id, PREFETCH_SLOT) >= 0) {
            throw new IllegalStateException("AUR window removed with its prefetched copy held");
        }
        if (id == lastFoundId) {
            lastFoundId = NO_ID;
        }
        setEtt(id, TriggerTimePredictor.UNKNOWN);
        setProbe(key, 0, key.length, window, 0, window.length);
        index.remove(hash(key, 0, key.length, window, 0, window.length), matcher);
        long block = getLong(id, KEY_BLOCK);
        if (block != INLINE) {
            keys.free(block, key.length + window.length);
        }
        putLong(id, KEY_BLOCK, FREE);
        putLong(id, WRITE_HEAD, freeHead);
        freeHead = id;
        size--;
    }

    // ---------------------------------------------------------------- fields

    long ett(int id) {
        return getLong(id, ETT);
    }

    /**
     * {@link #ett}, read from a copy of every window's trigger time packed 8 bytes apart: a pass
     * over every window that looks at trigger times first (the prefetch's bets) touches 8 bytes per
     * window instead of its whole record. {@link TriggerTimePredictor#UNKNOWN} for ids not in use.
     */
    long packedEtt(int id) {
        return triggerTimes.getLong(id, 0);
    }

    void setEtt(int id, long ett) {
        long old = getLong(id, ETT);
        knownEtts +=
                (ett != TriggerTimePredictor.UNKNOWN ? 1 : 0)
                        - (old != TriggerTimePredictor.UNKNOWN ? 1 : 0);
        if (ett != TriggerTimePredictor.UNKNOWN && ett != old) {
            rankChanges++;
        }
        putLong(id, ETT, ett);
        triggerTimes.putLong(id, 0, ett);
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
        if (bytes != 0 && getLong(id, DISK_BYTES) == 0) {
            rankChanges++;
        }
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

    /** The stamp of the read whose batch holds the window; 0 or an older stamp if none. */
    long batchStamp(int id) {
        return getLong(id, BATCH_STAMP);
    }

    void setBatchStamp(int id, long stamp) {
        putLong(id, BATCH_STAMP, stamp);
    }

    /**
     * Bytes a read or a restore tallied for the window: the bytes of its frames collected, then, in
     * a read, how much of its prefetched copy is filled.
     */
    long collectedBytes(int id) {
        return getLong(id, COLLECTED_BYTES);
    }

    void setCollectedBytes(int id, long bytes) {
        putLong(id, COLLECTED_BYTES, bytes);
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
        if ((flags & SERVED) == 0 && (getInt(id, FLAGS) & SERVED) != 0) {
            rankChanges++;
        }
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

    /** Frames a read collected for the window; -1 once the read checked them. */
    int collectedFrames(int id) {
        return getInt(id, COLLECTED_FRAMES);
    }

    void setCollectedFrames(int id, int frames) {
        putInt(id, COLLECTED_FRAMES, frames);
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
        if ((getInt(id, FLAGS) & SERVED) == 0) {
            // Dropped before it was read: the window may be bet on again.
            rankChanges++;
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

    /**
     * Closes every prefetched copy without touching the records (they may be unusable after a
     * scratch-file failure); returns the bytes freed.
     */
    long closePrefetched() {
        long freed = 0;
        for (int p = 0; p < prefetchCount; p++) {
            freed += prefetchCopies[p].capacity();
            prefetchCopies[p].close();
            prefetchCopies[p] = null;
        }
        prefetchCount = 0;
        return freed;
    }

    /** Windows with a prefetched copy; {@link #prefetchedId} lists them (clearing reorders). */
    int prefetchedCount() {
        return prefetchCount;
    }

    int prefetchedId(int i) {
        return prefetchIds[i];
    }

    // ---------------------------------------------------------------- records

    private long getLong(int id, int field) {
        return records.getLong(id, field);
    }

    private void putLong(int id, int field, long value) {
        records.putLong(id, field, value);
    }

    private int getInt(int id, int field) {
        return records.getInt(id, field);
    }

    private void putInt(int id, int field, int value) {
        records.putInt(id, field, value);
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
        if (block == INLINE) {
            return records.equalsBytes(id, KEY_BYTES, probeKey, probeKeyOffset, probeKeyLength)
                    && records.equalsBytes(
                            id,
                            KEY_BYTES + probeKeyLength,
                            probeWindow,
                            probeWindowOffset,
                            probeWindowLength);
        }
        return keys.equalsBytes(block, 0, probeKey, probeKeyOffset, probeKeyLength)
                && keys.equalsBytes(
                        block, probeKeyLength, probeWindow, probeWindowOffset, probeWindowLength);
    }

    /** Returns all memory to the budget and deletes the scratch files; unusable afterwards. */
    void release() {
        try {
            index.close();
        } finally {
            try {
                records.close();
            } finally {
                try {
                    triggerTimes.close();
                } finally {
                    keys.close();
                    lastFoundId = NO_ID;
                    highWater = 0;
                    size = 0;
                    prefetchCount = 0;
                }
            }
        }
    }
}
