package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.LogReader;

import java.io.IOException;
import java.nio.file.Path;

/**
 * One data-log or index-log file of an AUR store and the number of its bytes known good: what the
 * last successful flush (or the manifest) vouches for. Bytes past it, a torn write that was rolled
 * back or never acknowledged, are never read. The reader is opened lazily and reopened when the
 * segment has grown since, because a {@link LogReader} fixes its size when it opens.
 */
final class LogSegment implements AutoCloseable {
    final int id;
    final Path path;
    final FileType type;
    long size;

    /**
     * Data logs: bytes of live frames in it (headers included), counted from the frame chains by a
     * compaction choosing the logs to empty.
     */
    long live;

    /** Data logs: place in the store's order of data logs (write order of their frames). */
    int rank;

    /** Chosen by the compaction now running: its live frames move, then it is deleted. */
    boolean victim;

    private LogReader reader;

    LogSegment(int id, Path path, FileType type, long size) {
        this.id = id;
        this.path = path;
        this.type = type;
        this.size = size;
    }

    LogReader reader(FileIo io) throws IOException {
        if (reader != null && reader.size() != size) {
            reader.close();
            reader = null;
        }
        if (reader == null) {
            reader = LogReader.open(io, path, type, size);
        }
        return reader;
    }

    @Override
    public void close() throws IOException {
        if (reader != null) {
            LogReader r = reader;
            reader = null;
            r.close();
        }
    }
}
