package io.flowkv.core.aur;

import io.flowkv.core.BackgroundWork;
import io.flowkv.core.CorruptLogException;
import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.OffHeapBuffer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import static io.flowkv.core.aur.WindowStatTable.NO_ID;

/**
 * Reads the AUR prefetch's bets on another thread while the task thread goes on. In FlowKV §4.2 the
 * bets ride on the read that missed, and the task waits for all of them; here, once the windows of
 * the last batch are half served, the next windows nearest to their trigger are bet on and read
 * beside the task, so that they are in memory when they fire.
 *
 * <p>While a read runs, the {@link FrameBatch}, the copies of its windows and the log readers it
 * took belong to the reading thread. The store calls {@link #settle} before it touches any of them:
 * a read, eviction or flush extension of one of those windows ({@link #holds}), the next batch, a
 * compaction, a checkpoint, close. Everything else (appends, reads of other windows, the stat
 * table) goes on beside it. Settling hands them back: a window whose frames could not be read, or
 * were corrupt, loses its copy and is read from the logs when asked for, where a corrupt frame
 * fails that read as it would have without the read ahead.
 *
 * <p>Memory: the copies are admitted by the {@link PrefetchBuffer} (native, charged) before the
 * read starts; this keeps a read array of {@value BatchLoader#MAX_COALESCED_READ} bytes on the heap
 * (larger only while a larger frame is read) and per window of the read now running an id, a copy
 * reference and a fill counter, as many as the prefetch buffer holds windows at most.
 */
final class ReadAhead {
    private static final Logger LOG = LoggerFactory.getLogger(ReadAhead.class);

    /** Shared by every AUR store of the JVM; threads end after 30 s without work. */
    private static final ExecutorService READERS = BackgroundWork.pool("flowkv-aur-read-ahead-");

    /** The store's reading half: its table, batch, prefetch buffer, logs and stats. */
    private final BatchLoader loader;

    /** The stamp of the windows being read; meaningful while {@link #running} is set. */
    private long stamp;

    private Future<?> running;

    // The read's windows, by their label in the batch (0..windows): handed to the reading thread
    // when it starts, back at settle.
    private int windows;
    private int[] ids = new int[16];
    private OffHeapBuffer[] copies = new OffHeapBuffer[16];
    private long[] filled = new long[16];
    private boolean[] failed = new boolean[16];

    private int segments;
    private int[] segmentIds = new int[4];
    private LogReader[] readers = new LogReader[4];

    private byte[] scratch = new byte[0];
    private long bytesRead;
    private IOException firstFailure;

    ReadAhead(BatchLoader loader) {
        this.loader = loader;
    }

    /** Whether a read runs. */
    boolean running() {
        return running != null;
    }

    /** Whether the read now running fills window {@code id}'s copy. */
    boolean holds(int id) {
        return running != null && loader.table.batchStamp(id) == stamp;
    }

    /**
     * Starts reading the frames the batch collected for the bets stamped {@code stamp}: the
     * prefetch buffer admits their copies (a bet it does not admit loses its stamp), then another
     * thread fills them. Returns the windows it reads; 0 if none was admitted (nothing started).
     */
    int start(long stamp) throws IOException {
        WindowStatTable table = loader.table;
        FrameBatch batch = loader.batch;
        PrefetchBuffer prefetch = loader.prefetch;
        StoreStats stats = loader.stats;
        segments = 0;
        for (int i = 0; i < batch.size(); i++) {
            readerOf(Positions.segment(batch.position(i)), true);
        }
        try {
            loader.admit(NO_ID, false);
        } catch (RuntimeException e) {
            loader.dropStamped(stamp);
            batch.clear();
            throw e;
        }
        windows = 0;
        for (int i = 0; i < batch.size(); i++) {
            int id = batch.id(i);
            if (table.batchStamp(id) != stamp) {
                batch.relabel(i, -1);
                continue;
            }
            // admit() left every window's collected bytes at 0: here they carry label + 1.
            int label = (int) table.collectedBytes(id) - 1;
            if (label < 0) {
                label = addWindow(id, table.prefetched(id));
                table.setCollectedBytes(id, label + 1);
            }
            batch.relabel(i, label);
        }
        for (int w = 0; w < windows; w++) {
            table.setCollectedBytes(ids[w], 0);
        }
        if (windows == 0) {
            batch.clear();
            return 0;
        }
        this.stamp = stamp;
        bytesRead = 0;
        firstFailure = null;
        try {
            running = READERS.submit(this::read);
        } catch (RuntimeException e) {
            for (int w = 0; w < windows; w++) {
                prefetch.evict(ids[w]);
                table.setBatchStamp(ids[w], 0);
                copies[w] = null;
            }
            batch.clear();
            throw e;
        }
        stats.addReadAhead();
        return windows;
    }

    private int addWindow(int id, OffHeapBuffer copy) {
        int w = windows++;
        if (w == ids.length) {
            int grown = 2 * ids.length;
            ids = Arrays.copyOf(ids, grown);
            copies = Arrays.copyOf(copies, grown);
            filled = Arrays.copyOf(filled, grown);
            failed = Arrays.copyOf(failed, grown);
        }
        ids[w] = id;
        copies[w] = copy;
        filled[w] = 0;
        failed[w] = false;
        return w;
    }

    /** The reader of data log {@code segment}, opened now if {@code open} (task thread only). */
    private LogReader readerOf(int segment, boolean open) throws IOException {
        for (int s = 0; s < segments; s++) {
            if (segmentIds[s] == segment) {
                return readers[s];
            }
        }
        if (!open) {
            throw new IllegalStateException("read ahead has no reader of data log " + segment);
        }
        if (segments == segmentIds.length) {
            segmentIds = Arrays.copyOf(segmentIds, 2 * segments);
            readers = Arrays.copyOf(readers, 2 * segments);
        }
        segmentIds[segments] = segment;
        readers[segments] = loader.dataLogs.require(segment).reader(loader.io);
        return readers[segments++];
    }

    /** The reading thread: frames in file order, adjacent ones in one read, into the copies. */
    private void read() {
        FrameBatch batch = loader.batch;
        int i = 0;
        while (i < batch.size()) {
            if (batch.id(i) < 0) {
                i++;
                continue;
            }
            int j = batch.runEnd(i, BatchLoader.MAX_COALESCED_READ, k -> batch.id(k) >= 0);
            long first = batch.position(i);
            long start = Positions.offset(first);
            int length = batch.span(i, j);
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, BatchLoader.MAX_COALESCED_READ)];
            }
            LogReader reader;
            try {
                reader = readerOf(Positions.segment(first), false);
                reader.readFully(start, ByteBuffer.wrap(scratch, 0, length));
                bytesRead += length;
            } catch (IOException e) {
                fail(i, j, e);
                i = j;
                continue;
            }
            int at = 0;
            for (int k = i; k < j; k++) {
                int w = batch.id(k);
                if (!failed[w]) {
                    try {
                        int payload =
                                BatchLoader.verifyFrame(
                                        scratch, reader.file(), start, at, length, batch.length(k));
                        copies[w].putBytes(
                                filled[w], scratch, at + FrameDescriptor.HEADER_LENGTH, payload);
                        filled[w] += payload;
                    } catch (CorruptLogException e) {
                        fail(k, k + 1, e);
                    }
                }
                at += batch.length(k);
            }
            i = j;
        }
        if (scratch.length > BatchLoader.MAX_COALESCED_READ) {
            scratch = new byte[0];
        }
    }

    private void fail(int from, int to, IOException e) {
        for (int k = from; k < to; k++) {
            failed[loader.batch.id(k)] = true;
        }
        if (firstFailure == null) {
            firstFailure = e;
        }
    }

    /**
     * Waits for the read now running, if any, and hands its windows back: a filled copy stays, a
     * window whose frames failed loses its copy. An error of the reading thread itself (not of the
     * files) is thrown after its copies are dropped.
     */
    void settle() {
        if (running == null) {
            return;
        }
        WindowStatTable table = loader.table;
        FrameBatch batch = loader.batch;
        PrefetchBuffer prefetch = loader.prefetch;
        StoreStats stats = loader.stats;
        Future<?> read = running;
        running = null;
        Throwable broken = BackgroundWork.await(read);
        long loaded = 0;
        int dropped = 0;
        for (int w = 0; w < windows; w++) {
            int id = ids[w];
            if (broken != null || failed[w] || filled[w] != copies[w].capacity()) {
                prefetch.evict(id);
                table.setBatchStamp(id, 0);
                dropped++;
            } else {
                loaded += filled[w];
            }
            copies[w] = null;
        }
        batch.clear();
        stats.addRead(bytesRead);
        stats.addPrefetchLoad(loaded);
        if (broken != null) {
            throw new IllegalStateException(
                    "AUR store in "
                            + loader.directory
                            + ": the read ahead of "
                            + windows
                            + " windows failed",
                    broken);
        }
        if (firstFailure != null) {
            LOG.warn(
                    "AUR store in {}: a read ahead dropped {} of its {} windows, read from the logs"
                            + " again when asked for",
                    loader.directory,
                    dropped,
                    windows,
                    firstFailure);
        }
    }
}
