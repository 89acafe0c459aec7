package io.flowkv.core.index;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * A hash index from 64-bit key hashes to {@code long} values (packed positions) that holds any
 * number of entries in a bounded amount of memory: the open-addressing table of {@link
 * LongHashIndex}, cut into 4 KiB pages, of which at most {@code cacheBytes} worth stay in native
 * memory; the others live in a page file ({@link PageFileDescriptor}) and are read back on demand.
 * While the whole table fits, no page is ever written and a lookup costs what an in-memory table
 * costs plus one page-table read; beyond that, a lookup of a cold page costs one 4 KiB positional
 * read, and a lookup of a key that is absent costs the same (there is no filter: the probe ends at
 * an empty slot of the page it reads).
 *
 * <pre>
 *   hash --fmix--> top `bits` bits = home slot       (linear probing; a probe may cross pages)
 *   slot s lives in page s >>> 8, at byte (s & 255) * 16:  [hash:long][value:long]
 *
 *   page table (native, 8 B per page)      frame cache (native, chunks of 16 frames)
 *   +------------------+-----------+        +--------+--------+-----+------------------+
 *   | state:int        | crc32c:int|        | frame0 | frame1 | ... | meta: long/frame |
 *   +------------------+-----------+        +--------+--------+-----+------------------+
 *     state >= 0: cached in that frame        meta: page | table parity | ref | dirty | was-empty
 *     ON_DISK: in the page file, with its CRC
 *     EMPTY: never held an entry
 * </pre>
 *
 * <p>Home slots are taken from the <em>top</em> bits of the mixed hash, so that doubling the table
 * sends the entries of old page {@code p} to new pages {@code 2p} and {@code 2p + 1}: growth is one
 * pass over the old pages in order, writing the new ones in order, never a random walk over a table
 * on disk. Frames are evicted by a clock; a dirty page is written back with its CRC32C, which is
 * kept in the page table and checked when the page is read again. The page file is a scratch file,
 * never part of a checkpoint: a store rebuilds its index from its logs on restore.
 *
 * <p>Everything this index holds is native memory charged to the budget: the page table (which
 * grows with the table, 8 bytes per 4 KiB page) and the frames (at most {@code cacheBytes}, taken
 * with {@link MemoryBudget#tryReserveForCache}, which leaves the budget's headroom to what cannot
 * give way, and given up to eviction when the budget refuses). Only the first chunk of frames and
 * the page table are reserved with {@link MemoryBudget#reserve}: those are the minimum ({@link
 * #MIN_CACHE_BYTES} plus the page table), and fail if the budget cannot give them. On the Java heap
 * it keeps a constant: a 4 KiB transfer buffer and a list of chunks.
 *
 * <p>Keys are not stored: on a hash match the caller's {@link LongHashIndex.KeyMatcher} checks the
 * key behind the value. Matchers must not call back into the index. Single writer. An I/O failure
 * surfaces as {@link UncheckedIOException}; the index stays consistent (a failed growth is rolled
 * back, or, when pages it had already dropped make that impossible, the index refuses every later
 * call).
 */
public final class PagedHashIndex implements AutoCloseable {
    public static final long NONE = -1L;
    public static final int PAGE_BYTES = 4096;

    private static final int PAGE_SHIFT = 12;
    private static final int SLOTS_SHIFT = 8;
    private static final int SLOTS_PER_PAGE = 1 << SLOTS_SHIFT;
    private static final int FRAMES_PER_CHUNK = 16;
    private static final int FRAME_SHIFT = 4;
    private static final long META_OFFSET = (long) FRAMES_PER_CHUNK * PAGE_BYTES;
    private static final long CHUNK_BYTES = META_OFFSET + FRAMES_PER_CHUNK * 8L;

    /** The least cache an index works with: one chunk of frames. */
    public static final long MIN_CACHE_BYTES = CHUNK_BYTES;

    private static final int MIN_BITS = SLOTS_SHIFT;
    private static final int MAX_BITS = 38;
    private static final double LOAD_FACTOR = 0.7;

    private static final int EMPTY = -2;
    private static final int ON_DISK = -1;

    private static final long PAGE_MASK = 0xFFFF_FFFFL;
    private static final long PARITY = 1L << 32;
    private static final long REF = 1L << 33;
    private static final long DIRTY = 1L << 34;
    private static final long WAS_EMPTY = 1L << 35;
    private static final long PINNED = 1L << 36;
    private static final long FREE = 1L << 62;

    private final MemoryBudget budget;
    private final FileIo io;
    private final Path directory;
    private final String filePrefix;
    private final int maxChunks;

    /** What chunks beyond {@link #maxChunks} took from a shared cache (null: no share). */
    private final CacheShare.Account shared;

    /** {@link #newChunk}, made once: misses call it. */
    private final Supplier<OffHeapBuffer> allocateChunk = this::newChunk;

    private final List<OffHeapBuffer> chunks = new ArrayList<>();
    private final byte[] transfer = new byte[PAGE_BYTES];
    private final ByteBuffer transferView = ByteBuffer.wrap(transfer);
    private final CRC32C crc = new CRC32C();
    private final long[] rehashed = new long[2 * SLOTS_PER_PAGE];

    private Table table;

    /** The table being replaced while {@link #grow} runs, else null. */
    private Table previous;

    /** Pages of {@link #previous} below this are rehashed; their frames may be dropped. */
    private int consumed;

    /** Whether growth dropped a page of {@link #previous} that existed nowhere else. */
    private boolean droppedPrevious;

    /** Whether the cache has ever been full: from then on accesses set reference bits. */
    private boolean evicting;

    private int freeHead = -1;
    private int hand;
    private long size;
    private long resizeAt;
    private int generation;
    private String failure;

    /** Frames a deletion's shift must not lose (see {@link #deleteSlot}). */
    private int[] pins = new int[4];

    private int pinCount;

    private long pageReads;
    private long pageWrites;

    /**
     * An empty index for about {@code expectedEntries}. Its page file, created only when a page is
     * first evicted, is named {@code filePrefix + generation + ".pages"} in {@code directory}.
     */
    public PagedHashIndex(
            MemoryBudget budget,
            FileIo io,
            Path directory,
            String filePrefix,
            long cacheBytes,
            long expectedEntries) {
        this(budget, io, directory, filePrefix, cacheBytes, expectedEntries, null);
    }

    /**
     * As above; past {@code cacheBytes} the cache may grow further with bytes of {@code share}
     * (null: none), given back when it closes.
     */
    public PagedHashIndex(
            MemoryBudget budget,
            FileIo io,
            Path directory,
            String filePrefix,
            long cacheBytes,
            long expectedEntries,
            CacheShare share) {
        if (cacheBytes < MIN_CACHE_BYTES) {
            throw new IllegalArgumentException(
                    "index cache of " + cacheBytes + " bytes, must be >= " + MIN_CACHE_BYTES);
        }
        this.budget = budget;
        this.io = io;
        this.directory = directory;
        this.filePrefix = filePrefix;
        this.maxChunks =
                (int) Math.min(Integer.MAX_VALUE >>> FRAME_SHIFT, cacheBytes / CHUNK_BYTES);
        this.shared = share == null ? null : share.account();
        this.table = new Table(bitsFor(expectedEntries), generation);
        try {
            addChunk(OffHeapBuffer.allocate(budget, CHUNK_BYTES, "hash index page cache"));
        } catch (RuntimeException e) {
            table.release();
            throw e;
        }
        this.resizeAt = (long) (table.capacity * LOAD_FACTOR);
    }

    private static int bitsFor(long entries) {
        int bits = MIN_BITS;
        while (bits < MAX_BITS && (long) ((1L << bits) * LOAD_FACTOR) < entries) {
            bits++;
        }
        return bits;
    }

    public long size() {
        return size;
    }

    /** Native bytes held: page tables and frames. */
    public long memoryBytes() {
        long bytes = (long) chunks.size() * CHUNK_BYTES;
        if (table != null) {
            bytes += table.pageTable.capacity();
        }
        if (previous != null) {
            bytes += previous.pageTable.capacity();
        }
        return bytes;
    }

    /**
     * Where an entry lives: slots are laid out in unsigned order of this value at every table size
     * (the home slot is its top bits). A batch of writes applied in this order touches each page
     * once, in file order, instead of once per entry at random.
     */
    public static long placementOrder(long hash) {
        return Hashing.fmix(hash);
    }

    /** Whether the cache has ever been full, so that touching a cold page may cost a read. */
    public boolean spills() {
        return evicting;
    }

    /** Pages read back from the page file since the index was created. */
    public long pageReads() {
        return pageReads;
    }

    /** Pages written to the page file since the index was created. */
    public long pageWrites() {
        return pageWrites;
    }

    /** Bytes of the current page file (0 if no page was ever evicted). */
    public long fileBytes() throws IOException {
        return table.file == null ? 0 : table.file.size();
    }

    /** The value of the key, or {@link #NONE}. */
    public long get(long hash, LongHashIndex.KeyMatcher matcher) {
        checkUsable();
        if (size == 0) {
            // Nothing to probe: a store whose values all live in the object cache asks for every
            // new key, and an empty table's pages need not be touched for that.
            return NONE;
        }
        Table t = table;
        long slot = t.home(hash);
        while (true) {
            int frame = frameFor(t, page(slot));
            OffHeapBuffer c = chunk(frame);
            long base = frameBase(frame);
            for (int i = (int) (slot & (SLOTS_PER_PAGE - 1)); i < SLOTS_PER_PAGE; i++) {
                long at = base + ((long) i << 4);
                long v = c.getLong(at + 8);
                if (v == NONE) {
                    return NONE;
                }
                if (c.getLong(at) == hash && matcher.matches(v)) {
                    return v;
                }
            }
            slot = t.next(slot | (SLOTS_PER_PAGE - 1));
        }
    }

    /** Sets the key's value; returns the previous one or {@link #NONE}. */
    public long put(long hash, long value, LongHashIndex.KeyMatcher matcher) {
        checkUsable();
        if (value == NONE) {
            throw new IllegalArgumentException("NONE (-1) cannot be stored");
        }
        Table t = table;
        for (long slot = t.home(hash); ; slot = t.next(slot)) {
            int frame = frameFor(t, page(slot));
            OffHeapBuffer c = chunk(frame);
            long at = slotAddress(frame, slot);
            long v = c.getLong(at + 8);
            if (v == NONE) {
                if (size + 1 > resizeAt && t.bits < MAX_BITS) {
                    grow();
                    return put(hash, value, matcher);
                }
                c.putLong(at, hash);
                c.putLong(at + 8, value);
                markDirty(frame);
                size++;
                return NONE;
            }
            if (c.getLong(at) == hash && matcher.matches(v)) {
                c.putLong(at + 8, value);
                markDirty(frame);
                return v;
            }
        }
    }

    /** Removes the key; returns its value or {@link #NONE}. */
    public long remove(long hash, LongHashIndex.KeyMatcher matcher) {
        checkUsable();
        Table t = table;
        for (long slot = t.home(hash); ; slot = t.next(slot)) {
            int frame = frameFor(t, page(slot));
            OffHeapBuffer c = chunk(frame);
            long at = slotAddress(frame, slot);
            long v = c.getLong(at + 8);
            if (v == NONE) {
                return NONE;
            }
            if (c.getLong(at) == hash && matcher.matches(v)) {
                deleteSlot(t, slot);
                size--;
                return v;
            }
        }
    }

    /**
     * Backward-shift deletion: no tombstones, probes stay short. A shift rewrites several slots, so
     * it is done in two phases: first every page of the cluster is made resident and pinned (any
     * I/O happens here, before anything changes), then the slots are moved in memory. A cluster
     * longer than the cache can pin is shifted unpinned; a failure in its middle makes the index
     * unusable rather than leave an entry twice.
     */
    private void deleteSlot(Table t, long hole) {
        try {
            pinCluster(t, hole);
            try {
                shift(t, hole);
            } catch (RuntimeException e) {
                failure = "a deletion failed half way through its shift: " + e;
                throw e;
            }
        } finally {
            unpinAll();
        }
    }

    private void pinCluster(Table t, long hole) {
        int limit = frameCount() - 1;
        long i = hole;
        int lastPage = -1;
        while (true) {
            int p = page(i);
            int frame = frameFor(t, p);
            if (p != lastPage) {
                if (pinCount == limit) {
                    return;
                }
                pin(frame);
                lastPage = p;
            }
            if (i != hole && chunk(frame).getLong(slotAddress(frame, i) + 8) == NONE) {
                return;
            }
            i = t.next(i);
        }
    }

    private void shift(Table t, long hole) {
        long i = hole;
        while (true) {
            i = t.next(i);
            int frame = frameFor(t, page(i));
            long at = slotAddress(frame, i);
            long v = chunk(frame).getLong(at + 8);
            if (v == NONE) {
                break;
            }
            long h = chunk(frame).getLong(at);
            long home = t.home(h);
            // Move entry i into the hole if the hole lies cyclically in [home, i).
            boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
            if (movable) {
                writeSlot(t, hole, h, v);
                hole = i;
            }
        }
        writeSlot(t, hole, 0, NONE);
    }

    private void pin(int frame) {
        long m = meta(frame);
        if ((m & PINNED) != 0) {
            return;
        }
        setMeta(frame, m | PINNED);
        if (pinCount == pins.length) {
            pins = Arrays.copyOf(pins, pinCount * 2);
        }
        pins[pinCount++] = frame;
    }

    private void unpinAll() {
        for (int k = 0; k < pinCount; k++) {
            int f = pins[k];
            setMeta(f, meta(f) & ~PINNED);
        }
        pinCount = 0;
    }

    private void writeSlot(Table t, long slot, long hash, long value) {
        int frame = frameFor(t, page(slot));
        long at = slotAddress(frame, slot);
        OffHeapBuffer c = chunk(frame);
        c.putLong(at, hash);
        c.putLong(at + 8, value);
        markDirty(frame);
    }

    /**
     * Replaces every value by {@code f(value)}, page by page; {@code f} must not return NONE. If an
     * I/O failure stops it part way, the index refuses every later call.
     */
    public void replaceValues(LongUnaryOperator f) {
        checkUsable();
        try {
            replaceAll(f);
        } catch (RuntimeException e) {
            // Some pages are mapped and others not, and a caller cannot tell which.
            failure = "replaceValues failed part way: " + e;
            throw e;
        }
    }

    private void replaceAll(LongUnaryOperator f) {
        Table t = table;
        for (int p = 0; p < t.pages; p++) {
            if (t.state(p) == EMPTY) {
                continue;
            }
            int frame = frameFor(t, p);
            OffHeapBuffer c = chunk(frame);
            long base = frameBase(frame);
            boolean changed = false;
            for (int i = 0; i < SLOTS_PER_PAGE; i++) {
                long at = base + ((long) i << 4) + 8;
                long v = c.getLong(at);
                if (v != NONE) {
                    long n = f.applyAsLong(v);
                    if (n == NONE) {
                        throw new IllegalStateException("cannot map a value to NONE");
                    }
                    if (n != v) {
                        c.putLong(at, n);
                        changed = true;
                    }
                }
            }
            if (changed) {
                markDirty(frame);
            }
        }
    }

    /**
     * Visits every value in page order. Pages on disk are read into a transfer buffer, not the
     * cache, so a scan does not evict the working set. The consumer must not change the index.
     */
    public void forEachValue(LongConsumer consumer) {
        checkUsable();
        Table t = table;
        for (int p = 0; p < t.pages; p++) {
            int state = t.state(p);
            if (state == EMPTY) {
                continue;
            }
            if (state >= 0) {
                OffHeapBuffer c = chunk(state);
                long base = frameBase(state);
                for (int i = 0; i < SLOTS_PER_PAGE; i++) {
                    long v = c.getLong(base + ((long) i << 4) + 8);
                    if (v != NONE) {
                        consumer.accept(v);
                    }
                }
            } else {
                readIntoTransfer(t, p);
                for (int i = 0; i < SLOTS_PER_PAGE; i++) {
                    long v = transferLong((i << 4) + 8);
                    if (v != NONE) {
                        consumer.accept(v);
                    }
                }
            }
        }
    }

    /** Drops every entry; keeps the cache's memory and the table's size. */
    public void clear() {
        checkUsable();
        for (int f = 0; f < frameCount(); f++) {
            if ((meta(f) & FREE) == 0) {
                freeFrame(f);
            }
        }
        for (int p = 0; p < table.pages; p++) {
            table.setState(p, EMPTY);
        }
        size = 0;
    }

    // ---------------------------------------------------------------- growth

    /**
     * Doubles the table: old page {@code p} is read once, in order, and its entries go to new pages
     * {@code 2p} and {@code 2p + 1}. Rehashed old pages are the first frames given up when the
     * cache is full. On failure the old table is kept (and the new one dropped) if it is whole.
     */
    private void grow() {
        Table old = table;
        Table next = new Table(old.bits + 1, generation + 1);
        generation++;
        previous = old;
        table = next;
        consumed = 0;
        droppedPrevious = false;
        try {
            for (int p = 0; p < old.pages; p++) {
                int state = old.state(p);
                if (state != EMPTY) {
                    rehashPage(old, p, state);
                }
                consumed = p + 1;
            }
        } catch (RuntimeException | Error e) {
            abandonGrowth(old, next, e);
            throw e;
        }
        for (int f = 0; f < frameCount(); f++) {
            long m = meta(f);
            if ((m & FREE) == 0 && parityOf(m) == (old.generation & 1)) {
                freeFrame(f);
            }
        }
        previous = null;
        old.release();
        resizeAt = (long) (next.capacity * LOAD_FACTOR);
    }

    private void rehashPage(Table old, int p, int state) {
        long[] entries = rehashed;
        int n = 0;
        if (state >= 0) {
            OffHeapBuffer c = chunk(state);
            long base = frameBase(state);
            for (int i = 0; i < SLOTS_PER_PAGE; i++) {
                long v = c.getLong(base + ((long) i << 4) + 8);
                if (v != NONE) {
                    entries[n++] = c.getLong(base + ((long) i << 4));
                    entries[n++] = v;
                }
            }
        } else {
            readIntoTransfer(old, p);
            for (int i = 0; i < SLOTS_PER_PAGE; i++) {
                long v = transferLong((i << 4) + 8);
                if (v != NONE) {
                    entries[n++] = transferLong(i << 4);
                    entries[n++] = v;
                }
            }
        }
        for (int k = 0; k < n; k += 2) {
            insertNew(entries[k], entries[k + 1]);
        }
    }

    /** Inserts an entry known to be absent, without growing. */
    private void insertNew(long hash, long value) {
        Table t = table;
        for (long slot = t.home(hash); ; slot = t.next(slot)) {
            int frame = frameFor(t, page(slot));
            long at = slotAddress(frame, slot);
            OffHeapBuffer c = chunk(frame);
            if (c.getLong(at + 8) == NONE) {
                c.putLong(at, hash);
                c.putLong(at + 8, value);
                markDirty(frame);
                return;
            }
        }
    }

    private void abandonGrowth(Table old, Table next, Throwable cause) {
        for (int f = 0; f < frameCount(); f++) {
            long m = meta(f);
            if ((m & FREE) == 0 && parityOf(m) == (next.generation & 1)) {
                freeFrame(f);
            }
        }
        table = old;
        previous = null;
        generation--;
        next.release();
        if (droppedPrevious) {
            failure = "a growth of the hash index failed after dropping pages: " + cause;
        }
    }

    // ---------------------------------------------------------------- frames

    private int frameFor(Table t, int page) {
        int state = t.state(page);
        if (state >= 0) {
            if (evicting) {
                long m = meta(state);
                if ((m & REF) == 0) {
                    setMeta(state, m | REF);
                }
            }
            return state;
        }
        int frame = acquireFrame();
        try {
            if (state == EMPTY) {
                fillEmpty(frame);
            } else {
                readIntoTransfer(t, page);
                chunk(frame).putBytes(frameBase(frame), transfer, 0, PAGE_BYTES);
            }
        } catch (RuntimeException e) {
            releaseFrame(frame);
            throw e;
        }
        t.setState(page, frame);
        setMeta(
                frame,
                (page & PAGE_MASK)
                        | ((long) (t.generation & 1) << 32)
                        | REF
                        | (state == EMPTY ? WAS_EMPTY : 0));
        return frame;
    }

    private void fillEmpty(int frame) {
        OffHeapBuffer c = chunk(frame);
        long base = frameBase(frame);
        for (int i = 0; i < SLOTS_PER_PAGE; i++) {
            c.putLong(base + ((long) i << 4), 0);
            c.putLong(base + ((long) i << 4) + 8, NONE);
        }
    }

    private int acquireFrame() {
        if (freeHead >= 0) {
            int f = freeHead;
            freeHead = (int) meta(f);
            return f;
        }
        OffHeapBuffer c =
                CacheShare.growChunk(
                        shared,
                        chunks.size(),
                        maxChunks,
                        Integer.MAX_VALUE >>> FRAME_SHIFT,
                        CHUNK_BYTES,
                        allocateChunk);
        if (c != null) {
            addChunk(c);
            return acquireFrame();
        }
        return evictOne();
    }

    /** A chunk of cache from the budget; null if the budget refuses. */
    private OffHeapBuffer newChunk() {
        return OffHeapBuffer.tryAllocateForCache(budget, CHUNK_BYTES);
    }

    private void addChunk(OffHeapBuffer c) {
        chunks.add(c);
        int first = (chunks.size() - 1) << FRAME_SHIFT;
        for (int f = first + FRAMES_PER_CHUNK - 1; f >= first; f--) {
            releaseFrame(f);
        }
    }

    /**
     * Clock: a page referenced since the hand last passed gets a second chance. Reference bits are
     * kept only from the first eviction on: until then every page is cached and none is needed.
     */
    private int evictOne() {
        evicting = true;
        int n = frameCount();
        for (int sweep = 0; sweep < 3 * n; sweep++) {
            int f = hand;
            hand = hand + 1 == n ? 0 : hand + 1;
            long m = meta(f);
            if ((m & (FREE | PINNED)) != 0) {
                continue;
            }
            boolean consumedPrevious =
                    previous != null
                            && parityOf(m) == (previous.generation & 1)
                            && (int) (m & PAGE_MASK) < consumed;
            if ((m & REF) != 0 && !consumedPrevious) {
                setMeta(f, m & ~REF);
                continue;
            }
            evict(f, m, consumedPrevious);
            return f;
        }
        throw new IllegalStateException("hash index cache: no frame to evict among " + n);
    }

    private void evict(int frame, long m, boolean consumedPrevious) {
        Table t = tableOf(m);
        int page = (int) (m & PAGE_MASK);
        if (consumedPrevious && (m & DIRTY) != 0) {
            // Rehashed already: only a rollback would need this page again.
            droppedPrevious = true;
            t.setState(page, ON_DISK);
        } else if ((m & DIRTY) != 0) {
            writePage(t, page, frame);
        } else {
            t.setState(page, (m & WAS_EMPTY) != 0 ? EMPTY : ON_DISK);
        }
        setMeta(frame, 0);
    }

    private void freeFrame(int f) {
        long m = meta(f);
        Table t = tableOf(m);
        if (t != null) {
            int page = (int) (m & PAGE_MASK);
            if (page < t.pages && t.state(page) == f) {
                t.setState(page, (m & WAS_EMPTY) != 0 && (m & DIRTY) == 0 ? EMPTY : ON_DISK);
            }
        }
        releaseFrame(f);
    }

    private void releaseFrame(int f) {
        setMeta(f, FREE | (freeHead & PAGE_MASK));
        freeHead = f;
    }

    private Table tableOf(long m) {
        int parity = parityOf(m);
        if ((table.generation & 1) == parity) {
            return table;
        }
        return previous;
    }

    private static int parityOf(long m) {
        return (int) ((m >>> 32) & 1);
    }

    private void markDirty(int frame) {
        long m = meta(frame);
        if ((m & DIRTY) == 0) {
            setMeta(frame, m | DIRTY);
        }
    }

    private int frameCount() {
        return chunks.size() << FRAME_SHIFT;
    }

    private OffHeapBuffer chunk(int frame) {
        return chunks.get(frame >>> FRAME_SHIFT);
    }

    private static long frameBase(int frame) {
        return (long) (frame & (FRAMES_PER_CHUNK - 1)) << PAGE_SHIFT;
    }

    private static long slotAddress(int frame, long slot) {
        return frameBase(frame) + ((slot & (SLOTS_PER_PAGE - 1)) << 4);
    }

    private static int page(long slot) {
        return (int) (slot >>> SLOTS_SHIFT);
    }

    private long meta(int frame) {
        return chunk(frame).getLong(META_OFFSET + ((long) (frame & (FRAMES_PER_CHUNK - 1)) << 3));
    }

    private void setMeta(int frame, long m) {
        chunk(frame).putLong(META_OFFSET + ((long) (frame & (FRAMES_PER_CHUNK - 1)) << 3), m);
    }

    // ---------------------------------------------------------------- page file

    private void writePage(Table t, int page, int frame) {
        chunk(frame).getBytes(frameBase(frame), transfer, 0, PAGE_BYTES);
        crc.reset();
        crc.update(transfer, 0, PAGE_BYTES);
        int sum = (int) crc.getValue();
        try {
            FileChannel ch = t.file();
            transferView.clear();
            long at = PageFileDescriptor.pageOffset(page);
            while (transferView.hasRemaining()) {
                ch.write(transferView, at + transferView.position());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Could not write page " + page + " of the hash index to " + t.path, e);
        }
        pageWrites++;
        t.setCrc(page, sum);
        t.setState(page, ON_DISK);
    }

    private void readIntoTransfer(Table t, int page) {
        long at = PageFileDescriptor.pageOffset(page);
        try {
            if (t.file == null) {
                throw new IOException("page file was never written");
            }
            transferView.clear();
            while (transferView.hasRemaining()) {
                int n = t.file.read(transferView, at + transferView.position());
                if (n < 0) {
                    throw new IOException("end of file");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Could not read page " + page + " of the hash index in " + t.path, e);
        }
        crc.reset();
        crc.update(transfer, 0, PAGE_BYTES);
        if ((int) crc.getValue() != t.crc(page)) {
            throw new UncheckedIOException(
                    new IOException(
                            "Corrupt hash index page "
                                    + page
                                    + " at offset "
                                    + at
                                    + " of "
                                    + t.path
                                    + ": checksum mismatch"));
        }
        pageReads++;
    }

    private long transferLong(int at) {
        return (transfer[at] & 0xFFL)
                | (transfer[at + 1] & 0xFFL) << 8
                | (transfer[at + 2] & 0xFFL) << 16
                | (transfer[at + 3] & 0xFFL) << 24
                | (transfer[at + 4] & 0xFFL) << 32
                | (transfer[at + 5] & 0xFFL) << 40
                | (transfer[at + 6] & 0xFFL) << 48
                | (transfer[at + 7] & 0xFFL) << 56;
    }

    private void checkUsable() {
        if (table == null) {
            throw new IllegalStateException("hash index is closed");
        }
        if (failure != null) {
            throw new IllegalStateException("hash index unusable: " + failure);
        }
    }

    /** Frees every frame and page table and deletes the page files. Idempotent. */
    @Override
    public void close() {
        IOException error = null;
        for (OffHeapBuffer c : chunks) {
            c.close();
        }
        chunks.clear();
        if (shared != null) {
            shared.close();
        }
        freeHead = -1;
        for (Table t : new Table[] {table, previous}) {
            if (t != null) {
                try {
                    t.releaseQuietly();
                } catch (IOException e) {
                    error = e;
                }
            }
        }
        table = null;
        previous = null;
        if (error != null) {
            throw new UncheckedIOException("Could not delete a hash index page file", error);
        }
    }

    /** One size of the table: its page table in native memory and its page file. */
    private final class Table {
        final int bits;
        final long capacity;
        final long mask;
        final int pages;
        final int generation;
        final OffHeapBuffer pageTable;
        Path path;
        FileChannel file;

        Table(int bits, int generation) {
            this.bits = bits;
            this.capacity = 1L << bits;
            this.mask = capacity - 1;
            this.pages = (int) (capacity >>> SLOTS_SHIFT);
            this.generation = generation;
            this.pageTable =
                    OffHeapBuffer.allocate(
                            budget,
                            (long) pages * 8,
                            "page table of a hash index of " + capacity + " slots");
            for (int p = 0; p < pages; p++) {
                pageTable.putLong((long) p << 3, EMPTY & PAGE_MASK);
            }
        }

        long home(long hash) {
            return Hashing.fmix(hash) >>> (64 - bits);
        }

        long next(long slot) {
            return (slot + 1) & mask;
        }

        int state(int page) {
            return pageTable.getInt((long) page << 3);
        }

        void setState(int page, int state) {
            pageTable.putInt((long) page << 3, state);
        }

        int crc(int page) {
            return pageTable.getInt(((long) page << 3) + 4);
        }

        void setCrc(int page, int sum) {
            pageTable.putInt(((long) page << 3) + 4, sum);
        }

        FileChannel file() throws IOException {
            if (file == null) {
                path = directory.resolve(filePrefix + generation + ".pages");
                io.delete(path); // a scratch file left by a crashed process
                FileChannel ch = io.openForAppend(path);
                try {
                    ByteBuffer header =
                            ByteBuffer.allocate(PageFileDescriptor.HEADER_LENGTH)
                                    .order(ByteOrder.LITTLE_ENDIAN);
                    PageFileDescriptor.writeHeader(header, bits);
                    header.flip();
                    while (header.hasRemaining()) {
                        ch.write(header, header.position());
                    }
                } catch (IOException | RuntimeException e) {
                    ch.close();
                    io.delete(path);
                    throw e;
                }
                file = ch;
            }
            return file;
        }

        void release() {
            try {
                releaseQuietly();
            } catch (IOException e) {
                throw new UncheckedIOException("Could not delete " + path, e);
            }
        }

        void releaseQuietly() throws IOException {
            pageTable.close();
            if (file != null) {
                FileChannel ch = file;
                file = null;
                try {
                    ch.close();
                } finally {
                    io.delete(path);
                }
            }
        }
    }
}
