package io.flowkv.core.aar;

import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.memory.IoBuffer;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;

import static io.flowkv.core.log.IoFailures.chain;
import static io.flowkv.core.log.IoFailures.closeQuietly;
import static io.flowkv.core.log.IoFailures.deleteQuietly;

/**
 * Names, creates, appends to and deletes the segment files of window partitions.
 *
 * <p>All writers share one staging buffer: a writer is always drained ({@link LogWriter#flush()})
 * before another one is used, so the buffer is empty between calls. That keeps the I/O memory of a
 * store at one buffer however many (window, partition) files are open.
 *
 * <p>Only one thread at a time uses this class and the partitions' writers and segment lists: the
 * store's task thread, or its flushing thread while a flush runs in the background (the task thread
 * then only appends to the write buffer; see {@code AarStore}).
 *
 * <p>At most {@link #MAX_OPEN_WRITERS} segments are open for appending: windows that fire per key
 * at different times (a custom assigner, say) can have tens of thousands of partitions holding data
 * at once, and a file descriptor each would exhaust the process's limit. Opening one more seals the
 * segment appended to least recently; that partition's next flush starts a new segment.
 */
final class SegmentFiles {
    static final String PREFIX = "aar-";
    static final String LOG_SUFFIX = ".log";

    private final FileIo io;
    private final Path directory;
    private final IoBuffer staging;
    private final StoreStats stats;
    private long nextFileId;

    /** Segments open for appending at most, per store. */
    static final int MAX_OPEN_WRITERS = 256;

    /** Partitions with an open writer, least recently appended to first. */
    private final LinkedHashMap<AarPartition, Boolean> openWriters =
            new LinkedHashMap<>(16, 0.75f, true);

    SegmentFiles(FileIo io, Path directory, IoBuffer staging, StoreStats stats, long nextFileId) {
        this.io = io;
        this.directory = directory;
        this.staging = staging;
        this.stats = stats;
        this.nextFileId = nextFileId;
    }

    Path path(long fileId) {
        return directory.resolve(PREFIX + fileId + LOG_SUFFIX);
    }

    long nextFileId() {
        return nextFileId;
    }

    void resetNextFileId(long next) {
        nextFileId = next;
    }

    /**
     * Appends the partition's buffered chain to its open segment (a new one if it has none) and
     * records the segment's new length. On failure the segment is rolled back to its last good
     * length and the chain is left untouched, so a later flush can retry with nothing lost.
     */
    long appendChain(AarPartition p, WriteBuffer buffer, int frameTarget) throws IOException {
        if (p.bufferedAppends == 0 && p.bufferedRemoveBytes == 0) {
            return 0;
        }
        return append(p, writer -> buffer.writeChain(p, writer, frameTarget));
    }

    /** {@link #appendChain} for a chain that a flush in the background took with it. */
    long appendFlushingChain(FlushingChain c, WriteBuffer buffer, int frameTarget)
            throws IOException {
        if (!c.hasRecords()) {
            return 0;
        }
        return append(
                c.partition, writer -> buffer.writeFlushingChain(c.head, writer, frameTarget));
    }

    /** Writes records to a log; returns the bytes written. */
    @FunctionalInterface
    private interface ChainWrite {
        long to(LogWriter writer) throws IOException;
    }

    private long append(AarPartition p, ChainWrite write) throws IOException {
        if (p.writer == null) {
            sealLeastRecentWriterIfFull();
            openSegment(p);
        }
        openWriters.put(p, Boolean.TRUE);
        LogWriter writer = p.writer;
        long goodSize = writer.size();
        try {
            long written = write.to(writer);
            writer.flush();
            p.setLastLength(writer.size());
            return written;
        } catch (IOException | RuntimeException e) {
            rollBack(p, goodSize, e);
            throw e;
        }
    }

    /** Takes the partition's writer (null if none) off it and out of the open set. */
    private LogWriter detachWriter(AarPartition p) {
        LogWriter writer = p.writer;
        p.writer = null;
        openWriters.remove(p);
        return writer;
    }

    /** Keeps the open writers under the bound before another one opens. */
    private void sealLeastRecentWriterIfFull() throws IOException {
        if (openWriters.size() < MAX_OPEN_WRITERS) {
            return;
        }
        Iterator<AarPartition> eldest = openWriters.keySet().iterator();
        AarPartition idle = eldest.next();
        eldest.remove();
        seal(idle, false);
    }

    private void openSegment(AarPartition p) throws IOException {
        while (true) {
            long id = nextFileId++;
            Path file = path(id);
            try {
                p.writer = LogWriter.create(io, file, FileType.AAR_WINDOW, id, staging);
                p.addSegment(id, LogFileHeader.LENGTH);
                stats.addFiles(1);
                return;
            } catch (FileAlreadyExistsException e) {
                // Left by a run restored from an older manifest: not ours to touch, skip the id.
            } catch (IOException e) {
                deleteQuietly(io, file, e);
                throw e;
            }
        }
    }

    /**
     * Drops a partial frame. If even that fails the segment is abandoned at its good length:
     * readers never look past the recorded length, and the next flush opens a new segment.
     */
    private void rollBack(AarPartition p, long goodSize, Exception failure) {
        try {
            p.writer.truncate(goodSize);
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
            closeQuietly(detachWriter(p), failure);
        }
    }

    /**
     * Makes the partition's open segment immutable, and durable when {@code durable}; later appends
     * go to a new one.
     */
    void seal(AarPartition p, boolean durable) throws IOException {
        LogWriter writer = detachWriter(p);
        if (writer == null) {
            return;
        }
        try {
            writer.flush(durable);
        } catch (IOException e) {
            closeQuietly(writer, e);
            throw e;
        }
        writer.close();
    }

    /** Forgets the partition's segments, then deletes their files. */
    void deleteSegments(AarPartition p) throws IOException {
        IOException failure = null;
        LogWriter writer = detachWriter(p);
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException e) {
                failure = e;
            }
        }
        int count = p.segmentCount();
        long[] ids = new long[count];
        for (int i = 0; i < count; i++) {
            ids[i] = p.fileId(i);
        }
        p.clearSegments();
        stats.addFiles(-count);
        for (long id : ids) {
            try {
                io.delete(path(id));
            } catch (IOException e) {
                failure = chain(failure, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    void closeWriter(AarPartition p) throws IOException {
        LogWriter writer = detachWriter(p);
        if (writer != null) {
            writer.close();
        }
    }
}
