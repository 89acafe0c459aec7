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
                    at = visit(e, visitor, log, buf, at, end, scanner.frameOffset());
                }
            }
        }
        return scanned;
    }

    /**
     * Parses the entry at {@code at} and hands it to {@code visitor}; returns where the next entry
     * starts. A method of its own so that the JIT compiles it after a few hundred entries: a
     * restore scans once per JVM, too few loop iterations for the scan loop itself to be compiled.
     */
    private static int visit(
            IndexEntryDescriptor e,
            EntryVisitor visitor,
            LogSegment log,
            byte[] buf,
            int at,
            int end,
            long frameOffset)
            throws IOException {
        int next = e.parse(buf, at, end, log.path, frameOffset);
        visitor.visit(log, frameOffset);
        return next;
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
