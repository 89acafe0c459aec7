package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FrameScanner;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import static io.flowkv.core.aur.WindowStatTable.NO_ID;

/**
 * The index logs of an AUR store and the one way they are read: a scan of every entry, in write
 * order. Flushes append entries to the last log; a compaction replaces them all by the one log it
 * rewrote. Entries of removed windows, and entries older than their window's first sequence, stay
 * in the logs until a compaction drops them: {@link #scanLive} skips them.
 */
final class IndexLogs implements Iterable<LogSegment> {
    private static final int SCAN_BUFFER = 64 * 1024;

    private final FileIo io;
    private final List<LogSegment> logs = new ArrayList<>();

    IndexLogs(FileIo io) {
        this.io = io;
    }

    /** Receives each entry, parsed into the scan's descriptor, with where it was read. */
    interface EntryVisitor {
        void visit(LogSegment log, long frameOffset) throws IOException;
    }

    /** Receives the table id of a live entry, parsed into the scan's descriptor. */
    interface LiveEntryVisitor {
        void visit(int id) throws IOException;
    }

    /** Adds the log flushes now append to, after every other. */
    void add(LogSegment log) {
        logs.add(log);
    }

    /** Replaces every log by {@code logs}: a manifest's list, a compaction's outcome. */
    void replaceAll(List<LogSegment> replacement) {
        logs.clear();
        logs.addAll(replacement);
    }

    int size() {
        return logs.size();
    }

    /** The logs, in write order; a view. */
    List<LogSegment> asList() {
        return Collections.unmodifiableList(logs);
    }

    @Override
    public Iterator<LogSegment> iterator() {
        return asList().iterator();
    }

    /**
     * Parses every entry of every log into {@code e}, checking each frame's checksum, and hands it
     * to {@code visitor}. Returns the entry bytes scanned.
     */
    long scan(IndexEntryDescriptor e, EntryVisitor visitor) throws IOException {
        long scanned = 0;
        for (LogSegment log : logs) {
            FrameScanner scanner = log.reader(io).scanAll(SCAN_BUFFER);
            while (scanner.next()) {
                byte[] buf = scanner.array();
                int at = scanner.payloadOffset();
                int end = at + scanner.payloadLength();
                scanned += scanner.payloadLength();
                while (at < end) {
                    at = e.parse(buf, at, end, log.path, scanner.frameOffset());
                    visitor.visit(log, scanner.frameOffset());
                }
            }
        }
        return scanned;
    }

    /**
     * Hands the entries still live (their window in {@code table} and the entry not older than the
     * window's first sequence) to {@code visitor}. Returns the entry bytes scanned.
     */
    long scanLive(IndexEntryDescriptor e, WindowStatTable table, LiveEntryVisitor visitor)
            throws IOException {
        return scan(
                e,
                (log, frameOffset) -> {
                    int id = e.liveId(table);
                    if (id != NO_ID) {
                        visitor.visit(id);
                    }
                });
    }
}
