package io.flowkv.core.aar;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Gradual state loading (paper §4.1): a firing window is read one partition at a time. The first
 * read of a partition replays its segments into a {@link LoadedPartition}; later reads replay only
 * what was flushed since. Loaded partitions are kept least-recently-used first and evicted before a
 * new one is loaded unless the budget holds both and still leaves the write buffer room to reach
 * its limit: usually exactly one partition is in memory.
 */
final class PartitionLoader implements AutoCloseable {
    /** What the store does for the loader when memory runs short. */
    interface Pressure {
        /** Frees memory without touching {@code keep}; false if nothing could be freed. */
        boolean relieve(AarPartition keep) throws IOException;

        /** Bytes the write buffer may still take before it flushes. */
        long writeBufferHeadroom();
    }

    private final MemoryBudget budget;
    private final FileIo io;
    private final SegmentFiles files;
    private final WriteBuffer buffer;
    private final int ioBufferBytes;
    private final StoreStats stats;
    private final Pressure pressure;
    private final List<AarPartition> loaded = new ArrayList<>();

    PartitionLoader(
            MemoryBudget budget,
            FileIo io,
            SegmentFiles files,
            WriteBuffer buffer,
            int ioBufferBytes,
            StoreStats stats,
            Pressure pressure) {
        this.budget = budget;
        this.io = io;
        this.files = files;
        this.buffer = buffer;
        this.ioBufferBytes = ioBufferBytes;
        this.stats = stats;
        this.pressure = pressure;
    }

    /**
     * The partition's view, replayed up to the end of its segments; null if it does not fit in the
     * budget even with the write buffer flushed and every other partition evicted. The caller then
     * reads the segments with a {@link PartitionScanner}. A partition that did not fit is not tried
     * again until clearly more memory could be had than at that failure: partitions only grow.
     */
    LoadedPartition load(AarPartition p) throws IOException {
        boolean fresh = p.loaded == null;
        if (fresh) {
            // A quarter more than last time, so that the write buffer growing by a chunk now and
            // then does not make every read of a firing window try (and fail) again.
            if (p.loadFailedWithin >= 0
                    && reachableMemory() <= p.loadFailedWithin + p.loadFailedWithin / 4) {
                return null;
            }
            makeRoom(p);
            LoadedPartition view = newView(p);
            if (view == null) {
                tooLarge(p);
                return null;
            }
            p.loaded = view;
        } else {
            loaded.remove(p);
        }
        loaded.add(p);
        try {
            catchUp(p);
            if (fresh) {
                // Removes issued while the partition was not loaded are still in the buffer; any
                // issued from now on are applied to the view directly by the store.
                buffer.applyRemoves(p, p.loaded);
            }
        } catch (MemoryBudgetExceededException e) {
            // Relief was tried at every refused allocation: this partition alone is too large.
            tooLarge(p);
            drop(p);
            return null;
        } catch (IOException | RuntimeException e) {
            drop(p);
            throw e;
        }
        p.loadFailedWithin = -1;
        if (fresh) {
            stats.addPartitionLoad();
        }
        return p.loaded;
    }

    private void tooLarge(AarPartition p) {
        p.loadFailedWithin = reachableMemory();
        stats.addPartitionStreamed();
    }

    /**
     * The most this store could give a load: free budget plus what evicting and flushing returns (a
     * flush keeps one write buffer chunk, so this is an upper bound).
     */
    private long reachableMemory() {
        return budget.available() + memoryBytes() + buffer.reservedBytes();
    }

    private LoadedPartition newView(AarPartition p) throws IOException {
        while (true) {
            try {
                return new LoadedPartition(budget, ioBufferBytes, () -> pressure.relieve(p));
            } catch (MemoryBudgetExceededException e) {
                if (!pressure.relieve(p)) {
                    return null;
                }
            }
        }
    }

    private void makeRoom(AarPartition p) {
        // The spare write-buffer arena goes first: windows fire, and the memory it frees is what
        // the load's chunks are then allocated from, already mapped. Kept through a load, it left
        // the load only fresh memory to fault in, and q7 ran at 0.8x.
        buffer.releaseSpare();
        long estimate = p.totalSegmentBytes() + p.totalSegmentBytes() / 2 + 4096;
        while (!loaded.isEmpty()
                && budget.available() - estimate < pressure.writeBufferHeadroom()) {
            drop(loaded.get(0));
        }
    }

    /** A flush may extend the segment being replayed or add one: loop until nothing is left. */
    private void catchUp(AarPartition p) throws IOException {
        LoadedPartition view = p.loaded;
        while (true) {
            long end = p.length(view.segment);
            if (view.offset < end) {
                replay(p, view, end);
            } else if (view.segment + 1 < p.segmentCount()) {
                view.segment++;
                view.offset = LogFileHeader.LENGTH;
            } else {
                return;
            }
        }
    }

    private void replay(AarPartition p, LoadedPartition view, long end) throws IOException {
        long fileId = p.fileId(view.segment);
        Path file = files.path(fileId);
        long start = view.offset;
        try (LogReader reader = LogReader.open(io, file, FileType.AAR_WINDOW, end)) {
            checkFileId(reader, fileId);
            FrameScanner frames = reader.scan(start, end, ioBufferBytes);
            while (frames.next()) {
                view.apply(
                        frames.array(),
                        frames.payloadOffset(),
                        frames.payloadLength(),
                        file,
                        frames.frameOffset() + FrameDescriptor.HEADER_LENGTH);
                view.offset = frames.nextOffset();
            }
        }
        stats.addRead(end - start);
    }

    /** Reads every frame of a restored segment, so that corruption surfaces at restore time. */
    void verify(long fileId, long length) throws IOException {
        Path file = files.path(fileId);
        try (LogReader reader = LogReader.open(io, file, FileType.AAR_WINDOW, length)) {
            checkFileId(reader, fileId);
            FrameScanner frames = reader.scanAll(ioBufferBytes);
            while (frames.next()) {
                int at = frames.payloadOffset();
                int end = at + frames.payloadLength();
                long payloadFileOffset = frames.frameOffset() + FrameDescriptor.HEADER_LENGTH;
                while (at < end) {
                    at +=
                            AarRecordDescriptor.checkRecord(
                                    frames.array(),
                                    at,
                                    end,
                                    file,
                                    payloadFileOffset,
                                    frames.payloadOffset());
                }
            }
        }
    }

    static void checkFileId(LogReader reader, long fileId) throws CorruptLogException {
        if (reader.fileId() != fileId) {
            throw new CorruptLogException(
                    reader.file(), 8, "file id " + reader.fileId() + ", expected " + fileId);
        }
    }

    void drop(AarPartition p) {
        if (p.loaded != null) {
            p.loaded.close();
            p.loaded = null;
            loaded.remove(p);
        }
    }

    /** Evicts the least recently used loaded partition other than {@code keep}. */
    boolean evictOne(AarPartition keep) {
        for (AarPartition p : loaded) {
            if (p != keep) {
                drop(p);
                return true;
            }
        }
        return false;
    }

    long memoryBytes() {
        long sum = 0;
        for (AarPartition p : loaded) {
            sum += p.loaded.memoryBytes();
        }
        return sum;
    }

    int loadedCount() {
        return loaded.size();
    }

    @Override
    public void close() {
        while (!loaded.isEmpty()) {
            drop(loaded.get(loaded.size() - 1));
        }
    }
}
