package io.flowkv.core.queue;

import io.flowkv.core.Checks;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.IoFailures;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.TreeSet;
import java.util.function.Consumer;

import static io.flowkv.core.log.IoFailures.chain;

/**
 * An ordered set of byte strings (unsigned lexicographic order, {@link
 * Arrays#compareUnsigned(byte[], byte[])}) whose size is bounded by the disk, not by memory: the
 * priority queue of Flink's timers held off the Java heap, as RocksDB's {@code
 * state.backend.rocksdb.timer-service.factory: ROCKSDB} does. A job with millions of timers per
 * subtask (one per key and window) would otherwise keep them all on the heap.
 *
 * <p>Two structures share the work. <b>Membership</b> says which elements are present: an {@link
 * RmwStore} (key = element, empty namespace and value) in the subdirectory {@code members}, which
 * holds a bounded write buffer and index cache and spills the rest. <b>Order</b> is a
 * log-structured set of sorted runs:
 *
 * <pre>
 *  add(e) ---> memtable: TreeSet, at most memtableBytes (element + 48 B each), on the heap
 *                 | full: written in order as one tier-0 run
 *                 v
 *  tier 0:  [run][run][run]        4 runs of one tier -> k-way merge into 1 run of the next
 *  tier 1:  [run][run]             tier; the merge keeps one copy of each element (present
 *  tier 2:  [run]                  or not: that is decided when it comes up)
 *    ...       each run: run-NNNNNNNN.log, blocks of elements (SortedRunDescriptor), read
 *              from its head through one read buffer of at most 16 KiB; deleted once consumed
 *
 *  peek/poll: the smallest of the memtable's first element and the runs' heads (a heap of
 *             runs by head); absent from membership -> stale copy: advance past it, go on
 * </pre>
 *
 * <p><b>Copies.</b> An element may be in several runs and the memtable at once (added, removed,
 * added again). {@code remove} only clears its membership (and takes it out of the memtable, which
 * therefore holds present elements only); copies left in runs are stale and skipped when they reach
 * a head (a merge keeps one copy of them, like of any element). Each present element is returned by
 * {@link #poll()} exactly once: all its copies are identical bytes, every run is strictly
 * ascending, and the smallest head is the smallest remaining entry, so when it is polled every copy
 * of it is at the head of its run (or first in the memtable) and all of them are advanced past
 * together, after which it is absent from membership. A copy left behind would still be harmless: a
 * head is returned only while membership holds it.
 *
 * <p><b>Costs.</b> {@code add}: one membership lookup and one put (a flush now and then). {@code
 * remove}: one membership remove. {@code poll}: one membership remove, plus the lookup that
 * validated the head (cached, so repeated {@code peek()} costs no I/O). Each element is rewritten
 * once per tier it climbs: write amplification about log4(n / elements per memtable), no membership
 * lookup. Memory charged to the budget: the membership store and a 64 KiB write staging buffer. On
 * the heap, not charged (so that a full budget never fails a poll or a merge): the memtable and one
 * read buffer of at most 16 KiB per run (a merge opens its inputs once more while it runs); there
 * are at most three runs per tier, O(log n) in all (about 20 for 100M timers of 40 bytes with a 256
 * KiB memtable). A single element larger than the read buffer makes it grow while its block is
 * read.
 *
 * <p>Run files are scratch: not synced, never part of a snapshot (a snapshot visits the elements
 * with {@link #forEach}), deleted when consumed, on {@link #clear()} and on {@link #close()}. A
 * failure in a flush or merge leaves the store's content as it was (the element is not added); a
 * run that fails its checksum keeps failing every {@code peek} and {@code poll} that reaches it.
 *
 * <p>Single writer: one thread calls every method. Callers do not modify the arrays they pass or
 * get; the store keeps them as they are.
 */
public final class SortedQueueStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SortedQueueStore.class);

    static final long MIN_MEMTABLE_BYTES = 1024;

    /** Heap bytes counted per memtable element besides its own: tree entry and array header. */
    static final int ELEMENT_OVERHEAD = 48;

    /** A tier holding this many runs is merged into one run of the next tier. */
    static final int RUNS_PER_TIER = 4;

    static final String MEMBERS_DIRECTORY = "members";
    static final String RUN_PREFIX = "run-";

    private static final int STAGING_BYTES = 64 << 10;
    private static final byte[] EMPTY = new byte[0];
    private static final ValueConsumer IGNORE = (buffer, offset, length) -> {};
    private static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;
    private static final Comparator<RunCursor> CURSOR_BY_HEAD =
            (a, b) -> Arrays.compareUnsigned(a.head(), b.head());
    private static final Comparator<SortedRun> RUN_BY_HEAD =
            (a, b) -> Arrays.compareUnsigned(a.cursor().head(), b.cursor().head());

    private final Path directory;

    /**
     * Run read buffers are counted here, not in the store's budget: they are small heap buffers
     * whose number grows with the log of the store, and refusing one would fail a poll.
     */
    private static final MemoryBudget READ_BUFFERS = new MemoryBudget(Long.MAX_VALUE);

    static final double MEMBERSHIP_MAX_SPACE_AMPLIFICATION = 4.0;

    private final MemoryBudget budget;
    private final FileIo io;
    private final RmwStoreOptions membershipOptions;
    private final long memtableLimit;
    private final IoBuffer staging;

    /** Null only after a {@link #clear()} failed to reopen it; the store is then unusable. */
    private RmwStore membership;

    /** Present elements only (see the class comment). */
    private final TreeSet<byte[]> memtable = new TreeSet<>(ORDER);

    private long memtableBytes;

    /** Every run not yet consumed; each has a head and is in {@link #heads}. */
    private final List<SortedRun> runs = new ArrayList<>();

    private final PriorityQueue<SortedRun> heads = new PriorityQueue<>(RUN_BY_HEAD);

    /** Consumed runs whose file could not be deleted; retried (and reported) by clear and close. */
    private final List<Path> undeleted = new ArrayList<>();

    private long nextRunId;
    private long size;

    /** The smallest present element (null: empty) while {@link #headKnown}. */
    private byte[] head;

    private boolean headKnown = true;
    private boolean closed;

    private SortedQueueStore(
            Path directory,
            MemoryBudget budget,
            FileIo io,
            RmwStoreOptions membershipOptions,
            long memtableLimit,
            IoBuffer staging,
            RmwStore membership) {
        this.directory = directory;
        this.budget = budget;
        this.io = io;
        this.membershipOptions = membershipOptions;
        this.memtableLimit = memtableLimit;
        this.staging = staging;
        this.membership = membership;
    }

    /**
     * A new, empty store in {@code directory} (created if needed; it must hold no run files).
     * memtableBytes: cap of the in-memory sorted buffer (>= 1024); budget: pays the membership
     * store, the staging buffer and the runs' read buffers. {@code indexCacheBytes} and {@code
     * writeBufferBytes} configure the membership store, raised to its minimums.
     */
    public static SortedQueueStore open(
            Path directory,
            MemoryBudget budget,
            long memtableBytes,
            long indexCacheBytes,
            long writeBufferBytes)
            throws IOException {
        return open(
                directory,
                budget,
                memtableBytes,
                indexCacheBytes,
                writeBufferBytes,
                FileIo.DEFAULT);
    }

    static SortedQueueStore open(
            Path directory,
            MemoryBudget budget,
            long memtableBytes,
            long indexCacheBytes,
            long writeBufferBytes,
            FileIo io)
            throws IOException {
        Checks.checkNotNull("directory", directory);
        Checks.checkNotNull("budget", budget);
        Checks.checkRange("memtableBytes", memtableBytes, MIN_MEMTABLE_BYTES, Long.MAX_VALUE);
        RmwStoreOptions options =
                RmwStoreOptions.builder(directory.resolve(MEMBERS_DIRECTORY))
                        .indexCacheBytes(
                                Math.max(RmwStoreOptions.MIN_INDEX_CACHE_BYTES, indexCacheBytes))
                        .writeBufferBytes(Math.max(1, writeBufferBytes))
                        // Every fired timer is a removal: compact the membership log less often
                        // (it is small, about 30 bytes per timer).
                        .maxSpaceAmplification(MEMBERSHIP_MAX_SPACE_AMPLIFICATION)
                        .fileIo(io)
                        .build();
        Files.createDirectories(directory);
        checkNoRunFiles(directory);
        IoBuffer staging = IoBuffer.allocate(budget, STAGING_BYTES, "sorted queue staging buffer");
        RmwStore membership;
        try {
            membership = RmwStore.open(options, budget);
        } catch (IOException | RuntimeException e) {
            staging.close();
            throw e;
        }
        return new SortedQueueStore(
                directory, budget, io, options, memtableBytes, staging, membership);
    }

    // ---------------------------------------------------------------- set operations

    /** Adds {@code element}; returns true if it was not present. */
    public boolean add(byte[] element) throws IOException {
        checkOpen();
        Checks.checkNotNull("element", element);
        if (isMember(element)) {
            return false;
        }
        long cost = cost(element);
        if (!memtable.isEmpty() && memtableBytes + cost > memtableLimit) {
            flushMemtable();
        }
        memtable.add(element);
        memtableBytes += cost;
        try {
            membership.put(element, EMPTY, EMPTY);
        } catch (IOException | RuntimeException e) {
            memtable.remove(element);
            memtableBytes -= cost;
            throw e;
        }
        size++;
        if (headKnown && (head == null || ORDER.compare(element, head) < 0)) {
            head = element;
        }
        return true;
    }

    /** Removes {@code element}; returns true if it was present. Copies in runs become stale. */
    public boolean remove(byte[] element) throws IOException {
        checkOpen();
        Checks.checkNotNull("element", element);
        if (!membership.remove(element, EMPTY)) {
            return false;
        }
        size--;
        if (memtable.remove(element)) {
            memtableBytes -= cost(element);
        }
        if (headKnown && head != null && ORDER.compare(head, element) == 0) {
            headKnown = false;
        }
        return true;
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
        headKnown = false;
        // Copies first: if reading a run fails, the element stays present and at that run's head.
        dropCopies(smallest);
        if (!membership.remove(smallest, EMPTY)) {
            throw new IllegalStateException(
                    "validated head vanished from membership in " + directory);
        }
        size--;
        return smallest;
    }

    /** Present elements. */
    public long size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /**
     * Gives every present element to {@code visitor} once, in no particular order. The visitor must
     * not call back into the store.
     */
    public void forEach(Consumer<byte[]> visitor) throws IOException {
        checkOpen();
        Checks.checkNotNull("visitor", visitor);
        // EntryVisitor does not promise that key arrays outlive the call; the caller may keep them.
        membership.forEach((key, namespace, value, offset, length) -> visitor.accept(key.clone()));
    }

    // ---------------------------------------------------------------- order: heads

    /** The smallest present element, skipping (and consuming) stale copies at the run heads. */
    private byte[] findHead() throws IOException {
        while (true) {
            SortedRun top = heads.peek();
            byte[] fromMemtable = memtable.isEmpty() ? null : memtable.first();
            if (top == null) {
                return fromMemtable;
            }
            byte[] fromRuns = top.cursor().head();
            if (fromMemtable != null && ORDER.compare(fromMemtable, fromRuns) <= 0) {
                return fromMemtable; // the memtable holds present elements only
            }
            if (isMember(fromRuns)) {
                return fromRuns;
            }
            dropCopies(fromRuns);
        }
    }

    /**
     * Advances every head equal to {@code element}, the smallest entry: the memtable's first and
     * the heads of the runs; a run left empty is deleted.
     */
    private void dropCopies(byte[] element) throws IOException {
        if (!memtable.isEmpty() && ORDER.compare(memtable.first(), element) == 0) {
            memtable.pollFirst();
            memtableBytes -= cost(element);
        }
        while (!heads.isEmpty() && ORDER.compare(heads.peek().cursor().head(), element) == 0) {
            SortedRun run = heads.poll();
            boolean more;
            try {
                more = run.cursor().advance();
            } catch (IOException | RuntimeException e) {
                heads.add(run); // its head has not moved
                throw e;
            }
            if (more) {
                heads.add(run);
            } else {
                runs.remove(run);
                retire(run);
            }
        }
    }

    // ---------------------------------------------------------------- order: flush and merge

    /** Writes the memtable as a tier-0 run, then merges every full tier. */
    private void flushMemtable() throws IOException {
        long id = nextRunId++;
        Path file = runFile(id);
        long fileSize;
        try (SortedRunWriter writer = SortedRunWriter.create(io, file, id, staging)) {
            for (byte[] element : memtable) {
                writer.add(element);
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
     * Merges the runs of {@code tier}, each from its head, into one run of the next tier, keeping
     * one copy of each present element. The inputs are read by cursors of their own, so a failed
     * merge leaves them untouched; they are deleted once the output is in place.
     */
    private void merge(int tier) throws IOException {
        List<SortedRun> inputs = new ArrayList<>(RUNS_PER_TIER);
        for (SortedRun run : runs) {
            if (run.tier() == tier) {
                inputs.add(run);
            }
        }
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
                byte[] previous = null;
                while (!queue.isEmpty()) {
                    RunCursor cursor = queue.poll();
                    byte[] element = cursor.head();
                    // One copy of each element; whether it is still present is decided when it
                    // comes up (a membership lookup per merged element cost more than the
                    // copies of deleted timers it saved).
                    if (previous == null || ORDER.compare(previous, element) != 0) {
                        previous = element;
                        writer.add(element);
                    }
                    if (cursor.advance()) {
                        queue.add(cursor);
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
        IOException closing = null;
        for (RunCursor cursor : cursors) {
            try {
                cursor.close();
            } catch (IOException e) {
                closing = chain(closing, e);
            }
        }
        if (closing != null) {
            IoFailures.deleteQuietly(io, file, closing);
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
            cursor = RunCursor.open(io, READ_BUFFERS, file, id, fileSize, LogFileHeader.LENGTH, 0);
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
        IOException failure = dropAllRuns();
        memtable.clear();
        memtableBytes = 0;
        size = 0;
        head = null;
        headKnown = true;
        RmwStore old = membership;
        membership = null;
        IOException membersFailure = null;
        try {
            old.close();
        } catch (IOException e) {
            membersFailure = e;
        }
        membersFailure = deleteMembershipFiles(membersFailure, false);
        // Leftover membership files would make a new membership store refuse the directory.
        if (membersFailure == null) {
            try {
                membership = RmwStore.open(membershipOptions, budget);
            } catch (IOException e) {
                membersFailure = e;
            }
        }
        failure = chain(failure, membersFailure);
        if (failure != null) {
            throw failure;
        }
    }

    /** Bytes this store holds from its budget. */
    public long memoryUsed() {
        if (closed) {
            return 0;
        }
        long bytes = staging.capacity();
        if (membership != null) {
            bytes += membership.memoryUsed();
        }
        return bytes;
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
        IOException failure = dropAllRuns();
        memtable.clear();
        memtableBytes = 0;
        size = 0;
        head = null;
        if (membership != null) {
            try {
                membership.close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
            membership = null;
        }
        failure = deleteMembershipFiles(failure, true);
        staging.close();
        if (failure != null) {
            throw failure;
        }
    }

    /** Closes and deletes every run, and retries deleting the files of consumed runs. */
    private IOException dropAllRuns() {
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

    private IOException deleteMembershipFiles(IOException failure, boolean andDirectory) {
        Path members = membershipOptions.directory();
        if (!Files.isDirectory(members)) {
            return failure;
        }
        try {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(members)) {
                for (Path file : files) {
                    io.delete(file);
                }
            }
            if (andDirectory) {
                Files.deleteIfExists(members);
            }
        } catch (IOException e) {
            failure =
                    chain(
                            failure,
                            new IOException(
                                    "Could not delete the membership files in " + members, e));
        }
        return failure;
    }

    // ---------------------------------------------------------------- helpers

    private boolean isMember(byte[] element) throws IOException {
        return membership.get(element, EMPTY, IGNORE);
    }

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
        if (membership == null) {
            throw new IllegalStateException(
                    "sorted queue store in "
                            + directory
                            + " is unusable: clear() could not reset its membership files");
        }
    }

    @Override
    public String toString() {
        return "SortedQueueStore{directory="
                + directory
                + ", size="
                + size
                + ", runs="
                + runs.size()
                + ", memtableBytes="
                + memtableBytes
                + "}";
    }
}
