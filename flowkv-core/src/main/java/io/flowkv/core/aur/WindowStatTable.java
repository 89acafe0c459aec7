package io.flowkv.core.aur;

import io.flowkv.core.index.Hashing;
import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;

import java.util.Arrays;

/**
 * The stat table of the AUR store: one slot per live (key, state window), found through a {@link
 * LongHashIndex} keyed by the pair's hash, with its fields in parallel primitive arrays indexed by
 * a slot id that stays fixed for the window's life. Ids of removed windows are reused.
 *
 * <p>Per slot: the estimated trigger time and whether the engine set it, the largest timestamp, the
 * first flush sequence number of this incarnation (older index entries are dead), the data-log
 * bytes of its flushed frames and the head of their {@link FrameChains chain}, the head and tail of
 * its write-buffer chain, and its prefetched values (in native memory, owned by the store). Every
 * array and every copied key/window is charged to the budget.
 */
final class WindowStatTable {
    static final int NO_ID = -1;
    static final long NONE = -1L;

    static final int EXPLICIT_ETT = 1;

    /** Read by a get since its last append: the engine fired it, prediction skips it. */
    static final int SERVED = 2;

    /** Bytes of the parallel arrays per slot (11 longs, 4 ints, 3 references at 8 bytes). */
    private static final long SLOT_BYTES = 11 * 8 + 4 * 4 + 3 * 8;

    /** Estimated heap overhead of a copied array: header and alignment. */
    static final long ARRAY_OVERHEAD = 24;

    private final MemoryBudget budget;
    private final LongHashIndex index;
    private final LongHashIndex.KeyMatcher matcher = this::matchesProbe;

    private byte[][] keys;
    private byte[][] windows;
    long[] ett;
    long[] maxTimestamp;
    long[] firstSeq;
    long[] diskBytes;
    long[] writeHead;
    long[] writeTail;
    long[] prefetchStamp;
    long[] mark;
    long[] scanned;
    long[] frameHead;
    long[] rebuiltHead;
    int[] flags;
    int[] dirtySlot;
    int[] valueCount;
    int[] work;
    OffHeapBuffer[] prefetched;

    private int[] freeIds;
    private int freeCount;
    private int highWater;
    private int size;
    private long reservedArrays;
    private long reservedKeys;

    private byte[] probeKey;
    private int probeKeyOffset;
    private int probeKeyLength;
    private byte[] probeWindow;
    private int probeWindowOffset;
    private int probeWindowLength;

    WindowStatTable(MemoryBudget budget, int initialCapacity) {
        this.budget = budget;
        this.index = new LongHashIndex(budget, initialCapacity);
        try {
            resize(Math.max(16, initialCapacity));
        } catch (RuntimeException e) {
            index.release();
            throw e;
        }
    }

    int size() {
        return size;
    }

    /** Slot ids are in {@code [0, highWater())}; unused slots have a null key. */
    int highWater() {
        return highWater;
    }

    boolean inUse(int id) {
        return keys[id] != null;
    }

    byte[] key(int id) {
        return keys[id];
    }

    byte[] window(int id) {
        return windows[id];
    }

    long memoryBytes() {
        return reservedArrays + reservedKeys + index.memoryBytes();
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
        long keyBytes = key.length + window.length + 2 * ARRAY_OVERHEAD;
        budget.reserve(keyBytes, "AUR stat table key");
        int id;
        try {
            if (freeCount == 0 && highWater == keys.length) {
                resize(keys.length * 2);
            }
            id = freeCount > 0 ? freeIds[--freeCount] : highWater++;
            setProbe(key, 0, key.length, window, 0, window.length);
            index.put(hash(key, 0, key.length, window, 0, window.length), id, matcher);
        } catch (RuntimeException e) {
            budget.release(keyBytes);
            throw e;
        }
        reservedKeys += keyBytes;
        keys[id] = key.clone();
        windows[id] = window.clone();
        ett[id] = TriggerTimePredictor.UNKNOWN;
        maxTimestamp[id] = Long.MIN_VALUE;
        firstSeq[id] = firstSequence;
        diskBytes[id] = 0;
        writeHead[id] = NONE;
        writeTail[id] = NONE;
        prefetchStamp[id] = 0;
        mark[id] = 0;
        scanned[id] = 0;
        frameHead[id] = FrameChains.END;
        rebuiltHead[id] = FrameChains.END;
        flags[id] = 0;
        dirtySlot[id] = -1;
        valueCount[id] = 0;
        work[id] = 0;
        prefetched[id] = null;
        size++;
        return id;
    }

    /** Frees the slot. The caller has already dropped its prefetched values and buffer chain. */
    void remove(int id) {
        byte[] key = keys[id];
        byte[] window = windows[id];
        setProbe(key, 0, key.length, window, 0, window.length);
        index.remove(hash(key, 0, key.length, window, 0, window.length), matcher);
        long keyBytes = key.length + window.length + 2 * ARRAY_OVERHEAD;
        budget.release(keyBytes);
        reservedKeys -= keyBytes;
        keys[id] = null;
        windows[id] = null;
        prefetched[id] = null;
        freeIds[freeCount++] = id;
        size--;
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
        byte[] k = keys[id];
        byte[] w = windows[id];
        return Arrays.equals(
                        k, 0, k.length, probeKey, probeKeyOffset, probeKeyOffset + probeKeyLength)
                && Arrays.equals(
                        w,
                        0,
                        w.length,
                        probeWindow,
                        probeWindowOffset,
                        probeWindowOffset + probeWindowLength);
    }

    private void resize(int capacity) {
        long need = capacity * (SLOT_BYTES + 4);
        budget.reserve(
                need,
                "AUR stat table of "
                        + capacity
                        + " windows (the AUR store keeps every live session, count or global"
                        + " window of each key in memory, about 190 bytes each)");
        budget.release(reservedArrays);
        reservedArrays = need;
        keys = keys == null ? new byte[capacity][] : Arrays.copyOf(keys, capacity);
        windows = windows == null ? new byte[capacity][] : Arrays.copyOf(windows, capacity);
        prefetched =
                prefetched == null
                        ? new OffHeapBuffer[capacity]
                        : Arrays.copyOf(prefetched, capacity);
        ett = grow(ett, capacity);
        maxTimestamp = grow(maxTimestamp, capacity);
        firstSeq = grow(firstSeq, capacity);
        diskBytes = grow(diskBytes, capacity);
        writeHead = grow(writeHead, capacity);
        writeTail = grow(writeTail, capacity);
        prefetchStamp = grow(prefetchStamp, capacity);
        mark = grow(mark, capacity);
        scanned = grow(scanned, capacity);
        frameHead = grow(frameHead, capacity);
        rebuiltHead = grow(rebuiltHead, capacity);
        dirtySlot = grow(dirtySlot, capacity);
        flags = grow(flags, capacity);
        valueCount = grow(valueCount, capacity);
        work = grow(work, capacity);
        freeIds = grow(freeIds, capacity);
    }

    private static long[] grow(long[] a, int capacity) {
        return a == null ? new long[capacity] : Arrays.copyOf(a, capacity);
    }

    private static int[] grow(int[] a, int capacity) {
        return a == null ? new int[capacity] : Arrays.copyOf(a, capacity);
    }

    /** Returns all memory to the budget; the table is unusable afterwards. */
    void release() {
        index.release();
        budget.release(reservedArrays + reservedKeys);
        reservedArrays = 0;
        reservedKeys = 0;
        keys = null;
        windows = null;
        prefetched = null;
    }
}
