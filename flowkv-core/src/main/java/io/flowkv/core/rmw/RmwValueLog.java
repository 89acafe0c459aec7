package io.flowkv.core.rmw;

import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.IoFailures;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.IoBuffer;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static io.flowkv.core.log.IoFailures.chain;
import static io.flowkv.core.log.IoFailures.deleteQuietly;

/**
 * The RMW store's value log: its segments in id order and the writer appending to the last one, the
 * active segment. A position into the log packs a segment id and an offset ({@link Positions}).
 *
 * <pre>
 *   segments:  [rmw-00000003.log][rmw-00000007.log] ... [rmw-00000012.log  ] <- writer appends
 *               immutable, deleted by compaction          active (if any), rolls at
 *                                                         segmentRollBytes
 * </pre>
 *
 * <p>Nothing here is synced on its own: {@link #syncAll} is called by a durable seal only. Every
 * change of the segment list is published as the store's file count ({@link StoreStats#files}).
 */
final class RmwValueLog {
    static final String PREFIX = "rmw-";

    private final FileIo io;
    private final Path directory;
    private final IoBuffer staging;
    private final long segmentRollBytes;
    private final StoreStats stats;

    /** Ordered by id; the active segment, if any, is the last. */
    private final List<RmwSegment> segments = new ArrayList<>();

    private final List<RmwSegment> segmentsView = Collections.unmodifiableList(segments);

    private LogWriter writer;
    private RmwSegment active;
    private int nextSegmentId;

    RmwValueLog(
            FileIo io, Path directory, IoBuffer staging, long segmentRollBytes, StoreStats stats) {
        this.io = io;
        this.directory = directory;
        this.staging = staging;
        this.segmentRollBytes = segmentRollBytes;
        this.stats = stats;
    }

    /** The segments in id order (read-only view; copy it to iterate while the log changes). */
    List<RmwSegment> segments() {
        return segmentsView;
    }

    /** The writer of the active segment, or null when no segment is being written. */
    LogWriter writer() {
        return writer;
    }

    /** The segment being written, or null. */
    RmwSegment active() {
        return active;
    }

    int nextSegmentId() {
        return nextSegmentId;
    }

    void nextSegmentId(int id) {
        nextSegmentId = id;
    }

    /** Makes sure there is an active segment with room: rolls a full one, starts one if none. */
    void ensureWriter() throws IOException {
        if (writer != null && writer.size() >= segmentRollBytes) {
            closeActive();
        }
        if (writer == null) {
            startSegment();
        }
    }

    /** Flushes the writer and records the active segment's new valid size. */
    void flushWriter() throws IOException {
        writer.flush();
        active.size = writer.size();
    }

    /**
     * Closes the active segment: from now on it is immutable. Not synced here: durability is
     * promised by a durable seal only, which syncs every segment that is not yet.
     */
    void closeActive() throws IOException {
        LogWriter w = writer;
        writer = null;
        RmwSegment segment = active;
        active = null;
        try {
            w.flush();
            segment.size = w.size();
        } finally {
            w.close();
        }
    }

    /** Truncates the active segment back to {@code goodSize}; stops appending to it if it can't. */
    void rollBack(long goodSize, Exception failure) {
        try {
            writer.truncate(goodSize);
        } catch (IOException | RuntimeException t) {
            failure.addSuppressed(t);
            // The file cannot be trusted past goodSize: stop appending to it.
            closeQuietly(writer, failure);
            active.size = goodSize;
            writer = null;
            active = null;
        }
    }

    /**
     * Drops what was written since the log had {@code segmentsBefore} segments and its writer was
     * at {@code goodSize} (-1: no writer then): the segments started since, the tail appended.
     */
    void abandonSince(int segmentsBefore, long goodSize, Exception failure) {
        while (segments.size() > segmentsBefore) {
            RmwSegment s = segments.remove(segments.size() - 1);
            if (s == active) {
                closeQuietly(writer, failure);
                writer = null;
                active = null;
            }
            IoFailures.closeQuietly(s.channel, failure);
            deleteQuietly(io, s.path, failure);
        }
        stats.setFiles(segments.size());
        if (writer != null && goodSize >= 0) {
            rollBack(goodSize, failure);
        }
    }

    /** Lists a segment found on restore (ids ascending). */
    void add(RmwSegment segment) {
        segments.add(segment);
        stats.setFiles(segments.size());
    }

    /** Unlists, closes and deletes an immutable segment. */
    void delete(RmwSegment segment) throws IOException {
        segments.remove(segment);
        stats.setFiles(segments.size());
        segment.channel.close();
        io.delete(segment.path);
    }

    /** Forces every segment not yet synced to the device. */
    void syncAll() throws IOException {
        for (RmwSegment s : segments) {
            if (!s.synced) {
                s.channel.force(false);
                s.synced = true;
            }
        }
    }

    RmwSegment segment(int id) {
        int lo = 0;
        int hi = segments.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int at = segments.get(mid).id;
            if (at < id) {
                lo = mid + 1;
            } else if (at > id) {
                hi = mid - 1;
            } else {
                return segments.get(mid);
            }
        }
        throw new IllegalStateException("no RMW segment " + id + " in " + directory);
    }

    Path segmentPath(int id) {
        return directory.resolve(String.format("%s%08d.log", PREFIX, id));
    }

    /**
     * Closes the writer and every segment's channel; returns the failures chained to {@code
     * failure}.
     */
    IOException close(IOException failure) {
        if (writer != null) {
            try {
                writer.close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
            writer = null;
            active = null;
        }
        for (RmwSegment s : segments) {
            try {
                s.channel.close();
            } catch (IOException e) {
                failure = chain(failure, e);
            }
        }
        segments.clear();
        return failure;
    }

    /** Creates a segment file, lists it and makes it the active one. */
    private void startSegment() throws IOException {
        if (nextSegmentId > Positions.MAX_SEGMENT) {
            throw new IOException(
                    "RMW store in "
                            + directory
                            + " ran out of segment ids ("
                            + nextSegmentId
                            + ")");
        }
        int id = nextSegmentId++;
        Path path = segmentPath(id);
        LogWriter w;
        try {
            w = LogWriter.create(io, path, FileType.RMW_VALUE_LOG, id, staging);
        } catch (IOException e) {
            deleteQuietly(io, path, e);
            throw e;
        }
        FileChannel channel;
        try {
            channel = io.openForRead(path);
        } catch (IOException e) {
            closeQuietly(w, e);
            deleteQuietly(io, path, e);
            throw e;
        }
        writer = w;
        active = new RmwSegment(id, path, channel, w.size());
        segments.add(active);
        stats.setFiles(segments.size());
    }

    /** Unlike {@link IoFailures#closeQuietly}, also collects runtime failures of the close. */
    private static void closeQuietly(LogWriter w, Exception failure) {
        try {
            w.close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
