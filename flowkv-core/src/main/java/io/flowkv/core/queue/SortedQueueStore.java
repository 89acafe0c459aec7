package io.flowkv.core.queue;

import io.flowkv.core.Checks;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.IoFailures;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;
import java.util.function.Consumer;

import static io.flowkv.core.log.IoFailures.chain;
import static io.flowkv.core.queue.SortedRunDescriptor.ADD;
import static io.flowkv.core.queue.SortedRunDescriptor.DEL;
import static io.flowkv.core.queue.SortedRunDescriptor.isAdd;
import static io.flowkv.core.queue.SortedRunDescriptor.record;

/**
 * An ordered set of byte strings (unsigned lexicographic order, {@link
 * Arrays#compareUnsigned(byte[], byte[])}) whose size is bounded by the disk, not by memory: the
 * priority queue of Flink's timers held off the Java heap, as RocksDB's {@code
 * state.backend.rocksdb.timer-service.factory: ROCKSDB} does. A job with millions of timers per
 * subtask (one per key and window) would otherwise keep them all on the heap.
 *
 * <p>It is a log-structured merge tree with sequence numbers and tombstones, and it never reads at
 * random: every file is written once front to back and read front to back. Each mutation gets the
 * next sequence number and becomes a record (element, seq, ADD or DEL):
 *
 * <pre>
 *  add(e) / remove(e) ---> memtable: TreeMap element -> latest record (seq &lt;&lt; 1 | kind), on the
 *                             | heap, at most memtableBytes (element + 64 B each)
 *                             | full: written in order as one tier-0 run
 *                             v
 *  tier 0:  [run][run][run]        4 runs of one tier -> k-way merge into 1 run of the next tier,
 *  tier 1:  [run][run]             keeping the latest record of each element (ADD or DEL)
 *  tier 2:  [run]
 *    ...       each run: run-NNNNNNNN.log, blocks of (element, record) (SortedRunDescriptor), read
 *              from its head through one read buffer of at most 16 KiB; deleted once consumed
 *
 *  peek/poll: e = the smallest of the memtable's first element and the runs' heads (a heap of runs
 *             by head); its latest record there decides: ADD -> e is the head;
 *             DEL -> consume every record of e (advance the runs, drop the memtable entry), go on
 * </pre>
 *
 * <p><b>Why this is exact.</b> (1) The latest record of an element wins: its presence is the kind
 * of its record with the highest sequence number, wherever that is (a memtable record is newer than
 * every run's, as runs are made of earlier memtables). (2) All records of an element meet at the
 * heads together: every run is strictly ascending and holds at most one record per element, and a
 * cursor only moves past an element when that element is the smallest entry of all, so when e is
 * the smallest entry, every run still holding a record of e has it at its head, and the memtable's
 * first element is e if it holds one. (3) A poll, or the skipping of a deleted element, consumes
 * all of them at once (the deciding record last, so that a read failing half-way leaves the
 * decision as it was): a later {@code add(e)} writes a record with a new, higher sequence number
 * and e is present again, exactly once. Merges keep the latest record per element, which preserves
 * (1) and (2); they drop a DEL only when they merge every run, since then no older record of the
 * element is left anywhere (the memtable is newer).
 *
 * <p><b>The cached head.</b> {@link #peek()} resolves the head once and caches it; the store keeps
 * the invariant that while the head is known, no record of an element below it exists. So {@code
 * add(e)} below the head makes e the head, {@code remove(e)} below the head is a no-op (e is absent
 * and needs no tombstone: this is the common removal of a timer that already fired), and only
 * {@code remove(head)}, {@link #poll()} and {@link #clear()} forget it.
 *
 * <p><b>What the store knows.</b> Without an index it cannot tell in general whether an element is
 * present, so {@link #add} answers "true unless known present" and {@link #remove} "true if it may
 * have been present"; {@link #size()} is exact but counts with a merged scan of everything when it
 * is not known (after an add or a remove whose effect on the count was not known).
 *
 * <p><b>Costs.</b> {@code add}, {@code remove}: a memtable update (a flush now and then). {@code
 * peek}: free while the head is cached. {@code poll}: the heap work for the runs at its element,
 * plus sequential reads of the runs, one block at a time. Each record is rewritten once per tier it
 * climbs: write amplification about log4(n / records per memtable). A removed element costs its DEL
 * record on disk until its turn comes at the heads (a tombstone, as in RocksDB). Memory charged to
 * the budget: the 64 KiB write staging buffer, nothing else. On the heap, not charged (so that a
 * full budget never fails a poll or a merge): the memtable and one read buffer of at most 16 KiB
 * per run (a merge opens its inputs once more while it runs, {@link #forEach} and {@link #size()}
 * every run); there are at most three runs per tier, O(log n) in all (about 20 for 100M timers of
 * 40 bytes with a 256 KiB memtable). A single element larger than the read buffer makes it grow
 * while its block is read.
 *
 * <p>Run files are scratch: not synced, never part of a snapshot (a snapshot visits the elements
 * with {@link #forEach}), deleted when consumed, on {@link #clear()} and on {@link #close()}. A
 * failure in a flush or merge leaves the store's content as it was (the mutation that flushed is
 * not applied); a run that fails its checksum keeps failing every {@code peek} and {@code poll}
 * that reaches it.
 *
 * <p>Single writer: one thread calls every method. Callers do not modify the arrays they pass or
 * get; the store keeps them as they are.
 */
public final class SortedQueueStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SortedQueueStore.class);

    static final long MIN_MEMTABLE_BYTES = 1024;

    /**
     * Heap bytes counted per memtable element besides its own: tree entry, boxed record, header.
     */
    static final int ELEMENT_OVERHEAD = 64;

    /** A tier holding this many runs is merged into one run of the next tier. */
    static final int RUNS_PER_TIER = 4;

    static final String RUN_PREFIX = "run-";

    private static final int STAGING_BYTES = 64 << 10;
    private static final long UNKNOWN = -1;
    private static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;
    private static final Comparator<RunCursor> CURSOR_BY_HEAD =
            (a, b) -> Arrays.compareUnsigned(a.head(), b.head());
    private static final Comparator<SortedRun> RUN_BY_HEAD =
            (a, b) -> Arrays.compareUnsigned(a.cursor().head(), b.cursor().head());

    private final Path directory;
    private final FileIo io;
    private final long memtableLimit;
    private final IoBuffer staging;

    /**
     * The latest record ({@link SortedRunDescriptor#record}) of each element mutated since the last
     * flush.
     */
    private final TreeMap<byte[], Long> memtable = new TreeMap<>(ORDER);

    private long memtableBytes;

    /** Sequence number of the next mutation. */
    private long nextSeq;

    /** Every run not yet consumed; each has a head and is in {@link #heads} (but see atHead). */
    private final List<SortedRun> runs = new ArrayList<>();

    private final PriorityQueue<SortedRun> heads = new PriorityQueue<>(RUN_BY_HEAD);

    /** Runs taken out of {@link #heads} by {@link #takeRunsAt} until they are put back. */
    private final List<SortedRun> atHead = new ArrayList<>();

    /** Consumed runs whose file could not be deleted; retried (and reported) by clear and close. */
    private final List<Path> undeleted = new ArrayList<>();

    private long nextRunId;

    /** Present elements, or {@link #UNKNOWN}: then {@link #size()} counts them. */
    private long size;

    /**
     * The smallest present element (null: empty) while {@link #headKnown}; no record of a smaller
     * element exists then.
     */
    private byte[] head;

    private boolean headKnown = true;
    private boolean closed;

    private static final int RECENT_BITS = 16;

    /** Slots of {@link #recent}. */
    static final int RECENT_SLOTS = 1 << RECENT_BITS;

    /**
     * Elements added lately and known present since, one per slot by hash: a repeated add of one of
     * them is answered without the memtable, whose lookup compares about log2(memtable size)
     * arrays. A window operator registers the same timer for every element of a window, so most
     * adds repeat a recent one. Two elements in one slot push each other out: a miss then costs the
     * lookup the store would have made anyway. Only an add that succeeded puts an element here;
     * anything that may take it away (remove, poll, consume, clear) takes it out first, so a hit is
     * always right and a miss only means "not known". On the heap, fixed in size: 512 KiB of
     * references, plus the arrays they keep alive.
     */
    private final byte[][] recent = new byte[RECENT_SLOTS][];

    private SortedQueueStore(Path directory, FileIo io, long memtableLimit, IoBuffer staging) {
        this.directory = directory;
        this.io = io;
        this.memtableLimit = memtableLimit;
        this.staging = staging;
    }

    /**
     * A new, empty store in {@code directory} (created if needed; it must hold no run files).
     * memtableBytes: heap cap of the in-memory sorted buffer (>= 1024); budget: pays the 64 KiB
     * staging buffer.
     */
    public static SortedQueueStore open(Path directory, MemoryBudget budget, long memtableBytes)
            throws IOException {
        return open(directory, budget, memtableBytes, FileIo.DEFAULT);
    }

    static SortedQueueStore open(Path directory, MemoryBudget budget, long memtableBytes, FileIo io)
            throws IOException {
        Checks.checkNotNull("directory", directory);
        Checks.checkNotNull("budget", budget);
        Checks.checkRange("memtableBytes", memtableBytes, MIN_MEMTABLE_BYTES, Long.MAX_VALUE);
        Files.createDirectories(directory);
        checkNoRunFiles(directory);
        IoBuffer staging = IoBuffer.allocate(budget, STAGING_BYTES, "sorted queue staging buffer");
        return new SortedQueueStore(directory, io, memtableBytes, staging);
    }

    // ---------------------------------------------------------------- set operations

    /**
     * Adds {@code element}. Returns true unless it is known to be present already (the store does
     * not always know: true does not mean it was absent).
     */
    public boolean add(byte[] element) throws IOException {
        checkOpen();
        Checks.checkNotNull("element", element);
        int slot = recentSlot(element);
        if (isRecent(slot, element)) {
            return false;
        }
        boolean belowHead = headKnown && (head == null || ORDER.compare(element, head) < 0);
        if (headKnown && !belowHead && ORDER.compare(element, head) == 0) {
            return false;
        }
        Long latest;
        long cost = cost(element);
        if (hasRoomFor(cost)) {
            // No flush can be due: one descent of the tree puts the ADD and returns what it
            // replaced. An ADD replaced by a newer ADD leaves the element present.
            latest = memtable.put(element, record(nextSeq++, ADD));
            if (latest == null) {
                memtableBytes += cost;
            }
        } else {
            latest = memtable.get(element);
            if (latest == null || !isAdd(latest)) {
                put(element, latest, ADD);
            }
        }
        recent[slot] = element;
        if (latest != null && isAdd(latest)) {
            return false;
        }
        // A DEL in the memtable is its latest record; below the head there are no records.
        size = (latest != null || belowHead) && size != UNKNOWN ? size + 1 : UNKNOWN;
        if (belowHead) {
            head = element;
        }
        return true;
    }

    /**
     * Removes {@code element}. Returns true if it may have been present (the store does not always
     * know: true does not mean it was).
     */
    public boolean remove(byte[] element) throws IOException {
        checkOpen();
        Checks.checkNotNull("element", element);
        forgetRecent(element);
        if (headKnown && (head == null || ORDER.compare(element, head) < 0)) {
            return false; // absent, and no record of it exists to be overridden
        }
        Long latest = memtable.get(element);
        if (latest != null && !isAdd(latest)) {
            return false;
        }
        boolean isHead = headKnown && ORDER.compare(element, head) == 0;
        // Even over an ADD in the memtable: older runs may hold an older ADD of the element.
        put(element, latest, DEL);
        size = (latest != null || isHead) && size != UNKNOWN ? size - 1 : UNKNOWN;
        if (isHead) {
            forgetHead();
        }
        return true;
    }

    /**
     * Records the next mutation of {@code element} in the memtable; {@code latest} is its record
     * there, if any. A memtable too full for a new element is flushed first; if that fails, nothing
     * changes.
     */
    private void put(byte[] element, Long latest, int kind) throws IOException {
        if (latest == null) {
            long cost = cost(element);
            if (!hasRoomFor(cost)) {
                flushMemtable();
            }
            memtableBytes += cost;
        }
        memtable.put(element, record(nextSeq++, kind));
    }

    /** Whether a new element of {@code cost} fits the memtable without a flush first. */
    private boolean hasRoomFor(long cost) {
        return memtable.isEmpty() || memtableBytes + cost <= memtableLimit;
    }

    /**
     * Whether the store holds no record at all, present or deleted: what {@link #loadAscending}
     * needs.
     */
    public boolean isPristine() {
        checkOpen();
        return memtable.isEmpty() && runs.isEmpty();
    }

    /**
     * Fills an empty store with {@code ascending}, which must be strictly ascending in the store's
     * order: one run written front to back, no memtable and no merges, so each element is written
     * once. The run takes the tier its size would have reached by merging. For moving elements that
     * are already sorted (a heap queue) into the store.
     *
     * @throws IllegalStateException if the store is not {@link #isPristine() pristine} (nothing is
     *     changed)
     * @throws IllegalArgumentException if an element is not above the one before it (nothing is
     *     changed: the run is abandoned)
     */
    public void loadAscending(Iterator<byte[]> ascending) throws IOException {
        checkOpen();
        if (!isPristine()) {
            throw new IllegalStateException(
                    "loadAscending needs an empty store; " + directory + " holds elements");
        }
        long id = nextRunId++;
        Path file = runFile(id);
        long count = 0;
        long bytes = 0;
        long fileSize = -1;
        long firstSeq = nextSeq;
        try (SortedRunWriter writer = SortedRunWriter.create(io, file, id, staging)) {
            byte[] previous = null;
            while (ascending.hasNext()) {
                byte[] element = Checks.checkNotNull("element", ascending.next());
                if (previous != null && ORDER.compare(previous, element) >= 0) {
                    throw new IllegalArgumentException(
                            "loadAscending: element " + count + " is not above the one before it");
                }
                writer.add(element, record(firstSeq + count, ADD));
                previous = element;
                count++;
                bytes += cost(element);
            }
            if (count > 0) {
                fileSize = writer.finish();
            } // else closing the writer deletes the empty run
        }
        if (count == 0) {
            return;
        }
        int tier = 0;
        for (long tierBytes = memtableLimit; tierBytes < bytes && tier < 62; tier++) {
            tierBytes *= RUNS_PER_TIER;
        }
        install(openRun(id, tier, file, fileSize));
        nextSeq = firstSeq + count;
        size = count;
        forgetHead();
    }

    /** The smallest present element, or null if there is none. */
    public byte[] peek() throws IOException {
        checkOpen();
        if (!headKnown) {
            head = findHead();
            headKnown = true;
        }
        return head;
    }

    /** Removes and returns the smallest present element, or null if there is none. */
    public byte[] poll() throws IOException {
        byte[] smallest = peek();
        if (smallest == null) {
            return null;
        }
        forgetHead();
        // If reading a run fails, the deciding ADD stays: the element is still present.
        consume(smallest, takeRunsAt(smallest));
        if (size != UNKNOWN) {
            size--;
        }
        return smallest;
    }

    /**
     * Present elements: exact. Known after a poll or a clear, and after adds and removes whose
     * effect the store could tell; otherwise counted by a merged scan of the memtable and every run
     * ({@link #forEach}'s cost: O(n), sequential reads), then known until the next such change.
     *
     * @throws UncheckedIOException if a run cannot be read (unchecked, as in the earlier API)
     */
    public long size() {
        checkOpen();
        if (size == UNKNOWN) {
            try {
                size = scan(null);
            } catch (IOException e) {
                throw unchecked("count the elements", e);
            }
        }
        return size;
    }

    /**
     * Whether no element is present: {@code peek() == null}.
     *
     * @throws UncheckedIOException if a run cannot be read (unchecked, as in the earlier API)
     */
    public boolean isEmpty() {
        try {
            return peek() == null;
        } catch (IOException e) {
            throw unchecked("find the smallest element", e);
        }
    }

    private UncheckedIOException unchecked(String what, IOException e) {
        return new UncheckedIOException(
                "Could not " + what + " of the sorted queue store in " + directory, e);
    }

    /**
     * Gives every present element to {@code visitor} once, in ascending order. Reads the memtable
     * and every run from its head, with cursors of its own (the store's do not move): O(n),
     * sequential reads. The visitor must not call back into the store.
     */
    public void forEach(Consumer<byte[]> visitor) throws IOException {
        checkOpen();
        Checks.checkNotNull("visitor", visitor);
        scan(visitor);
    }

    // ---------------------------------------------------------------- heads

    /** The smallest present element, consuming the records of deleted elements below it. */
    private byte[] findHead() throws IOException {
        while (true) {
            byte[] smallest = smallestEntry();
            if (smallest == null) {
                return null;
            }
            SortedRun latestRun = takeRunsAt(smallest);
            Long fromMemtable = memtableRecordAt(smallest);
            long latest = fromMemtable != null ? fromMemtable : latestRun.cursor().headRecord();
            if (isAdd(latest)) {
                heads.addAll(atHead);
                atHead.clear();
                return smallest;
            }
            consume(smallest, latestRun);
        }
    }

    /** The smallest element of the memtable and the runs' heads, or null if there is none. */
    private byte[] smallestEntry() {
        byte[] fromMemtable = memtable.isEmpty() ? null : memtable.firstKey();
        SortedRun top = heads.peek();
        if (top == null) {
            return fromMemtable;
        }
        byte[] fromRuns = top.cursor().head();
        return fromMemtable != null && ORDER.compare(fromMemtable, fromRuns) <= 0
                ? fromMemtable
                : fromRuns;
    }

    /** The memtable's record of {@code element} if it is its first element, else null. */
    private Long memtableRecordAt(byte[] element) {
        if (memtable.isEmpty()) {
            return null;
        }
        Map.Entry<byte[], Long> first = memtable.firstEntry();
        return ORDER.compare(first.getKey(), element) == 0 ? first.getValue() : null;
    }

    /**
     * Takes every run whose head is {@code element}, the smallest entry, out of {@link #heads} into
     * {@link #atHead}; returns the one with the latest record, or null if there is none.
     */
    private SortedRun takeRunsAt(byte[] element) {
        SortedRun latest = null;
        while (!heads.isEmpty() && ORDER.compare(heads.peek().cursor().head(), element) == 0) {
            SortedRun run = heads.poll();
            atHead.add(run);
            if (latest == null || run.cursor().headRecord() > latest.cursor().headRecord()) {
                latest = run;
            }
        }
        return latest;
    }

    /**
     * Consumes every record of {@code element}, the smallest entry: advances the runs in {@link
     * #atHead} (a run left empty is deleted), then drops the memtable's record. The deciding record
     * goes last (the memtable's if it has one, else {@code latestRun}'s): if a read fails, the runs
     * not yet advanced go back into {@link #heads} at {@code element}, which is still decided as it
     * was.
     */
    private void consume(byte[] element, SortedRun latestRun) throws IOException {
        forgetRecent(element);
        int n = atHead.size();
        if (latestRun != null) {
            Collections.swap(atHead, atHead.indexOf(latestRun), n - 1);
        }
        for (int i = 0; i < n; i++) {
            SortedRun run = atHead.get(i);
            boolean more;
            try {
                more = run.cursor().advance();
            } catch (IOException | RuntimeException e) {
                heads.addAll(atHead.subList(i, n)); // their heads have not moved
                atHead.clear();
                throw e;
            }
            if (more) {
                heads.add(run);
            } else {
                runs.remove(run);
                retire(run);
            }
        }
        atHead.clear();
        if (memtableRecordAt(element) != null) {
            memtable.pollFirstEntry();
            memtableBytes -= cost(element);
        }
    }

    /** The slot of {@code element} in {@link #recent}: its hash, spread (Fibonacci hashing). */
    static int recentSlot(byte[] element) {
        return (Arrays.hashCode(element) * 0x9E3779B9) >>> (32 - RECENT_BITS);
    }

    /** Takes {@code element} out of {@link #recent}, if it is there. */
    private void forgetRecent(byte[] element) {
        int slot = recentSlot(element);
        if (isRecent(slot, element)) {
            recent[slot] = null;
        }
    }

    /** Whether {@code slot} of {@link #recent} holds an array equal to {@code element}. */
    private boolean isRecent(int slot, byte[] element) {
        byte[] known = recent[slot];
        return known != null && Arrays.equals(known, element);
    }

    private void forgetHead() {
        headKnown = false;
        head = null;
    }

    // ---------------------------------------------------------------- scans

    /**
     * Merges the memtable and every run from its head (with cursors of their own), resolving the
     * latest record of each element; gives each present element to {@code visitor} (if not null) in
     * ascending order and returns their number.
     */
    private long scan(Consumer<byte[]> visitor) throws IOException {
        List<RunCursor> cursors = new ArrayList<>(runs.size());
        long present = 0;
        try {
            PriorityQueue<RunCursor> queue =
                    new PriorityQueue<>(Math.max(1, runs.size()), CURSOR_BY_HEAD);
            for (SortedRun run : runs) {
                RunCursor cursor = run.cursor().reopen();
                cursors.add(cursor);
                queue.add(cursor);
            }
            Iterator<Map.Entry<byte[], Long>> fromMemtable = memtable.entrySet().iterator();
            Map.Entry<byte[], Long> next = fromMemtable.hasNext() ? fromMemtable.next() : null;
            while (next != null || !queue.isEmpty()) {
                byte[] element;
                long latest = -1;
                if (queue.isEmpty()
                        || (next != null
                                && ORDER.compare(next.getKey(), queue.peek().head()) <= 0)) {
                    element = next.getKey();
                    latest = next.getValue();
                    next = fromMemtable.hasNext() ? fromMemtable.next() : null;
                } else {
                    element = queue.peek().head();
                }
                latest = Math.max(latest, advanceAll(queue, element));
                if (isAdd(latest)) {
                    present++;
                    if (visitor != null) {
                        visitor.accept(element);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            for (RunCursor cursor : cursors) {
                IoFailures.closeQuietly(cursor, e);
            }
            throw e;
        }
        IOException closing = closeAll(cursors);
        if (closing != null) {
            throw closing;
        }
        return present;
    }

    /**
     * Advances every cursor of {@code queue} whose head is {@code element}, the smallest; returns
     * the latest of their records (-1 if none).
     */
    private static long advanceAll(PriorityQueue<RunCursor> queue, byte[] element)
            throws IOException {
        long latest = -1;
        while (!queue.isEmpty() && ORDER.compare(queue.peek().head(), element) == 0) {
            RunCursor cursor = queue.poll();
            latest = Math.max(latest, cursor.headRecord());
            if (cursor.advance()) {
                queue.add(cursor);
            }
        }
        return latest;
    }

    // ---------------------------------------------------------------- flush and merge

    /** Writes the memtable as a tier-0 run, then merges every full tier. */
    private void flushMemtable() throws IOException {
        long id = nextRunId++;
        Path file = runFile(id);
        long fileSize;
        try (SortedRunWriter writer = SortedRunWriter.create(io, file, id, staging)) {
            for (Map.Entry<byte[], Long> entry : memtable.entrySet()) {
                writer.add(entry.getKey(), entry.getValue());
            }
            fileSize = writer.finish();
        }
        SortedRun run = openRun(id, 0, file, fileSize);
        memtable.clear();
        memtableBytes = 0;
        install(run);
        for (int tier = fullTier(); tier >= 0; tier = fullTier()) {
            merge(tier);
        }
    }

    /** The lowest tier holding {@link #RUNS_PER_TIER} runs or more, or -1. */
    private int fullTier() {
        int[] counts = new int[64];
        int lowest = Integer.MAX_VALUE;
        for (SortedRun run : runs) {
            if (++counts[run.tier()] >= RUNS_PER_TIER) {
                lowest = Math.min(lowest, run.tier());
            }
        }
        return lowest == Integer.MAX_VALUE ? -1 : lowest;
    }

    /**
     * Merges the runs of {@code tier}, each from its head, into one run of the next tier holding
     * the latest record of each element. DELs are kept (a run outside the merge may hold an older
     * ADD of the element) unless the merge takes in every run: then no older record is left, the
     * memtable being empty or newer. The inputs are read by cursors of their own, so a failed merge
     * leaves them untouched; they are deleted once the output is in place.
     */
    private void merge(int tier) throws IOException {
        List<SortedRun> inputs = new ArrayList<>(RUNS_PER_TIER);
        for (SortedRun run : runs) {
            if (run.tier() == tier) {
                inputs.add(run);
            }
        }
        boolean dropDeletes = inputs.size() == runs.size();
        long id = nextRunId++;
        Path file = runFile(id);
        List<RunCursor> cursors = new ArrayList<>(inputs.size());
        long fileSize = -1;
        try {
            PriorityQueue<RunCursor> queue = new PriorityQueue<>(inputs.size(), CURSOR_BY_HEAD);
            for (SortedRun input : inputs) {
                RunCursor cursor = input.cursor().reopen();
                cursors.add(cursor);
                queue.add(cursor);
            }
            try (SortedRunWriter writer = SortedRunWriter.create(io, file, id, staging)) {
                while (!queue.isEmpty()) {
                    byte[] element = queue.peek().head();
                    long latest = advanceAll(queue, element);
                    if (isAdd(latest) || !dropDeletes) {
                        writer.add(element, latest);
                    }
                }
                if (writer.elements() > 0) {
                    fileSize = writer.finish();
                } // else closing the writer deletes the empty run
            }
        } catch (IOException | RuntimeException e) {
            for (RunCursor cursor : cursors) {
                IoFailures.closeQuietly(cursor, e);
            }
            if (fileSize >= 0) {
                IoFailures.deleteQuietly(io, file, e);
            }
            throw e;
        }
        IOException closing = closeAll(cursors);
        if (closing != null) {
            if (fileSize >= 0) {
                IoFailures.deleteQuietly(io, file, closing);
            }
            throw closing;
        }
        SortedRun output = fileSize < 0 ? null : openRun(id, tier + 1, file, fileSize);
        for (SortedRun input : inputs) {
            runs.remove(input);
            heads.remove(input);
            retire(input);
        }
        if (output != null) {
            install(output);
        }
    }

    /** Opens a cursor on a run just written; deletes the file if that fails. */
    private SortedRun openRun(long id, int tier, Path file, long fileSize) throws IOException {
        RunCursor cursor;
        try {
            cursor = RunCursor.open(io, file, id, fileSize, LogFileHeader.LENGTH, 0);
        } catch (IOException | RuntimeException e) {
            IoFailures.deleteQuietly(io, file, e);
            throw e;
        }
        if (cursor.head() == null) {
            IllegalStateException e = new IllegalStateException("sorted run " + file + " is empty");
            IoFailures.closeQuietly(cursor, e);
            IoFailures.deleteQuietly(io, file, e);
            throw e;
        }
        return new SortedRun(id, tier, file, cursor);
    }

    private void install(SortedRun run) {
        runs.add(run);
        heads.add(run);
    }

    /**
     * Closes and deletes a run no longer listed. The operation that consumed it has done its work,
     * so a failure to delete the file must not fail it (a poll would lose its element): the
     * deletion is retried by {@link #clear()} and {@link #close()}, which report it if it fails
     * again.
     */
    private void retire(SortedRun run) {
        try {
            run.cursor().close();
            io.delete(run.file());
        } catch (IOException e) {
            LOG.warn("Could not delete consumed sorted run {}; will retry", run.file(), e);
            undeleted.add(run.file());
        }
    }

    // ---------------------------------------------------------------- lifecycle

    /** Removes every element and deletes every file; the store stays usable. */
    public void clear() throws IOException {
        checkOpen();
        IOException failure = dropAll();
        if (failure != null) {
            throw failure;
        }
    }

    /** Bytes this store holds from its budget: the staging buffer until closed. */
    public long memoryUsed() {
        return closed ? 0 : staging.capacity();
    }

    /** Sorted runs on disk now. */
    public int runCount() {
        return runs.size();
    }

    /** Returns every byte to the budget and deletes every file of the store. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException failure = dropAll();
        staging.close();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Empties the store: closes and deletes every run, retries deleting the files of consumed runs.
     */
    private IOException dropAll() {
        IOException failure = null;
        for (SortedRun run : runs) {
            try {
                run.cursor().close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
            undeleted.add(run.file());
        }
        runs.clear();
        heads.clear();
        atHead.clear();
        memtable.clear();
        Arrays.fill(recent, null);
        memtableBytes = 0;
        size = 0;
        head = null;
        headKnown = true;
        List<Path> files = new ArrayList<>(undeleted);
        undeleted.clear();
        for (Path file : files) {
            try {
                io.delete(file);
            } catch (IOException e) {
                undeleted.add(file);
                failure = chain(failure, new IOException("Could not delete sorted run " + file, e));
            }
        }
        return failure;
    }

    // ---------------------------------------------------------------- helpers

    private static long cost(byte[] element) {
        return element.length + (long) ELEMENT_OVERHEAD;
    }

    private Path runFile(long id) {
        return directory.resolve(String.format("%s%08d.log", RUN_PREFIX, id));
    }

    private static void checkNoRunFiles(Path directory) throws IOException {
        try (DirectoryStream<Path> files =
                Files.newDirectoryStream(directory, RUN_PREFIX + "*.log")) {
            for (Path f : files) {
                throw new IOException(
                        "Cannot open a new sorted queue store in "
                                + directory
                                + ": it already holds "
                                + f.getFileName()
                                + " (another store's, or left by a crash)");
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("sorted queue store in " + directory + " is closed");
        }
    }

    @Override
    public String toString() {
        return "SortedQueueStore{directory="
                + directory
                + ", size="
                + (size == UNKNOWN ? "?" : Long.toString(size))
                + ", runs="
                + runs.size()
                + ", memtableEntries="
                + memtable.size()
                + ", memtableBytes="
                + memtableBytes
                + ", nextSeq="
                + nextSeq
                + "}";
    }

    /** Closes every cursor; returns the failures, chained, or null. */
    private static IOException closeAll(List<RunCursor> cursors) {
        IOException failure = null;
        for (RunCursor cursor : cursors) {
            try {
                cursor.close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
        }
        return failure;
    }
}
