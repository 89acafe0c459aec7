package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.OffHeapBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import static io.flowkv.core.aur.WindowStatTable.NO_ID;

/**
 * The reading half of a miss: a {@link FrameBatch} holds the frames a chain walk or an index scan
 * collected, in file order; this reads them, coalescing adjacent frames into reads of at most
 * {@value #MAX_COALESCED_READ} bytes, verifies each frame against its index entry, and hands the
 * payloads to the prefetched copies the {@link PrefetchBuffer} admits, or to the reader.
 *
 * <p>Per window the stat table tallies what the batch holds: first the frame bytes and frames
 * collected (checked against the window's data-log bytes), then how much of its copy is filled.
 * Windows of this read carry its stamp; a bet that is not admitted, or whose frame is corrupt,
 * loses it and is skipped.
 *
 * <p>Values leave through one heap array: consumers deserialize on the heap. It is not charged to
 * the budget (which stands for native memory); it is {@value #MAX_COALESCED_READ} bytes, larger
 * only while a bigger frame is read.
 */
final class BatchLoader {
    static final int MAX_COALESCED_READ = 256 * 1024;

    final Path directory;
    final FileIo io;
    final WindowStatTable table;
    final FrameBatch batch;
    final PrefetchBuffer prefetch;
    final DataLogs dataLogs;
    final StoreStats stats;
    private byte[] scratch = new byte[0];

    BatchLoader(
            Path directory,
            FileIo io,
            WindowStatTable table,
            FrameBatch batch,
            PrefetchBuffer prefetch,
            DataLogs dataLogs,
            StoreStats stats) {
        this.directory = directory;
        this.io = io;
        this.table = table;
        this.batch = batch;
        this.prefetch = prefetch;
        this.dataLogs = dataLogs;
        this.stats = stats;
    }

    /** Serves the window's prefetched copy: [length][bytes] records in native memory. */
    boolean serveCopy(int id, ValueConsumer consumer) {
        OffHeapBuffer values = table.prefetched(id);
        long end = values.capacity();
        boolean any = false;
        long at = 0;
        long served = 0;
        while (at < end) {
            int length = end - at >= 4 ? values.getInt(at) : -1;
            if (length < 0 || length > end - at - 4) {
                throw new IllegalStateException(
                        "AUR prefetched copy in "
                                + directory
                                + " has a bad value length "
                                + length);
            }
            ensureScratch(length);
            values.getBytes(at + 4, scratch, 0, length);
            consumer.accept(scratch, 0, length);
            served += length;
            any = true;
            at += 4 + length;
        }
        stats.addValueBytesServedFromDisk(served);
        return any;
    }

    /** Serves the [length][bytes] records of a frame payload; checks lengths stay inside it. */
    private boolean serveValues(
            byte[] buf, int from, int end, ValueConsumer consumer, Path file, long fileOffset)
            throws IOException {
        boolean any = false;
        int at = from;
        long served = 0;
        while (at < end) {
            int length = end - at >= 4 ? FrameDescriptor.readIntLE(buf, at) : -1;
            if (length < 0 || length > end - at - 4) {
                throw new CorruptLogException(
                        file == null ? directory : file,
                        fileOffset + (at - from),
                        "bad value length " + length + " in data frame");
            }
            consumer.accept(buf, at + 4, length);
            served += length;
            any = true;
            at += 4 + length;
        }
        stats.addValueBytesServedFromDisk(served);
        return any;
    }

    /**
     * Reads the frames the batch collected for the read stamped {@code stamp}: copies the payloads
     * of windows the prefetch buffer admits into their copies, streams the rest of the requested
     * window's to {@code consumer} (and drops bets that do not fit), then serves the requested
     * window's copy if it got one. Returns whether the requested window had a value.
     */
    boolean load(int requested, boolean cacheRequested, long stamp, ValueConsumer consumer)
            throws IOException {
        prepareReadBuffer();
        admit(requested, cacheRequested);
        try {
            return readBatch(requested, stamp, consumer);
        } catch (IOException | RuntimeException e) {
            dropStamped(stamp);
            throw e;
        }
    }

    /**
     * After a read stamped {@code stamp} failed: copies admitted for it and not filled would later
     * be served as values, so every window of the batch with that stamp loses its copy and the
     * stamp; their windows are read from the logs again when asked for.
     */
    void dropStamped(long stamp) {
        for (int i = 0; i < batch.size(); i++) {
            int id = batch.id(i);
            if (table.batchStamp(id) == stamp) {
                prefetch.evict(id);
                table.setBatchStamp(id, 0);
            }
        }
    }

    /**
     * Checks the frames collected for each window against its flushed bytes and gives each window
     * whose copy the prefetch buffer admits an empty copy; a bet not admitted loses its stamp. The
     * requested window ({@link WindowStatTable#NO_ID} for none) is kept out of the buffer unless
     * {@code cacheRequested}, and must be in the batch.
     */
    void admit(int requested, boolean cacheRequested) {
        for (int i = 0; i < batch.size(); i++) {
            int id = batch.id(i);
            table.setCollectedBytes(id, 0);
            table.setCollectedFrames(id, 0);
        }
        for (int i = 0; i < batch.size(); i++) {
            int id = batch.id(i);
            table.setCollectedBytes(id, table.collectedBytes(id) + batch.length(i));
            table.setCollectedFrames(id, table.collectedFrames(id) + 1);
        }
        boolean requestedFound = false;
        for (int i = 0; i < batch.size(); i++) {
            int id = batch.id(i);
            if (table.collectedFrames(id) < 0) {
                continue;
            }
            if (table.collectedBytes(id) != table.diskBytes(id)) {
                throw new IllegalStateException(
                        "AUR index scan found "
                                + table.collectedBytes(id)
                                + " data bytes for a window the stat table says has "
                                + table.diskBytes(id));
            }
            long payload =
                    table.collectedBytes(id)
                            - (long) table.collectedFrames(id) * FrameDescriptor.HEADER_LENGTH;
            table.setCollectedFrames(id, -1);
            table.setCollectedBytes(id, 0);
            requestedFound |= id == requested;
            boolean wanted = id != requested || cacheRequested;
            if (!(wanted && prefetch.admit(id, payload)) && id != requested) {
                table.setBatchStamp(id, 0);
            }
        }
        if (!requestedFound && requested != NO_ID) {
            throw new IllegalStateException(
                    "AUR index scan found no entry of a window with "
                            + table.diskBytes(requested)
                            + " flushed bytes");
        }
    }

    /** The reading part of {@link #load}: the frames of the windows stamped {@code stamp}. */
    private boolean readBatch(int requested, long stamp, ValueConsumer consumer)
            throws IOException {
        boolean any = false;
        long read = 0;
        long loaded = 0;
        int i = 0;
        while (i < batch.size()) {
            if (table.batchStamp(batch.id(i)) != stamp) {
                i++;
                continue;
            }
            int segmentId = Positions.segment(batch.position(i));
            long start = Positions.offset(batch.position(i));
            int j = batch.runEnd(i, scratch.length, k -> table.batchStamp(batch.id(k)) == stamp);
            LogSegment segment = dataLogs.require(segmentId);
            int length = batch.span(i, j);
            ensureScratch(length);
            segment.reader(io).readFully(start, ByteBuffer.wrap(scratch, 0, length));
            read += length;
            int at = 0;
            for (int k = i; k < j; k++) {
                if (table.batchStamp(batch.id(k)) != stamp) {
                    at += batch.length(k);
                    continue;
                }
                int id = batch.id(k);
                int payload;
                try {
                    payload =
                            verifyFrame(scratch, segment.path, start, at, length, batch.length(k));
                } catch (CorruptLogException e) {
                    if (id == requested) {
                        throw e;
                    }
                    // Only a bet: drop it; the error surfaces when that window is asked for.
                    prefetch.evict(id);
                    table.setBatchStamp(id, 0);
                    at += batch.length(k);
                    continue;
                }
                int from = at + FrameDescriptor.HEADER_LENGTH;
                OffHeapBuffer target = table.prefetched(id);
                if (target != null) {
                    target.putBytes(table.collectedBytes(id), scratch, from, payload);
                    table.setCollectedBytes(id, table.collectedBytes(id) + payload);
                    loaded += payload;
                } else {
                    any |=
                            serveValues(
                                    scratch,
                                    from,
                                    from + payload,
                                    consumer,
                                    segment.path,
                                    start + from);
                }
                at += batch.length(k);
            }
            i = j;
        }
        shrinkScratch();
        stats.addRead(read);
        stats.addPrefetchLoad(loaded);
        if (table.prefetched(requested) != null) {
            any = serveCopy(requested, consumer);
        }
        return any;
    }

    /**
     * Checks the frame at {@code at} of {@code buf}, which holds {@code length} bytes read at
     * {@code start} of {@code file}, against the {@code expected} length its index entry gives;
     * returns its payload length.
     */
    static int verifyFrame(byte[] buf, Path file, long start, int at, int length, int expected)
            throws CorruptLogException {
        int payload = FrameDescriptor.verify(buf, at, length - at, file, start + at);
        if (payload + FrameDescriptor.HEADER_LENGTH != expected) {
            throw new CorruptLogException(
                    file,
                    start + at,
                    "data frame of " + payload + " bytes, index entry says " + expected);
        }
        return payload;
    }

    private void prepareReadBuffer() {
        if (scratch.length < MAX_COALESCED_READ) {
            scratch = new byte[MAX_COALESCED_READ];
        }
    }

    private void ensureScratch(int length) {
        if (scratch.length < length) {
            scratch = new byte[Math.max(length, Math.min(MAX_COALESCED_READ, scratch.length * 2))];
        }
    }

    /** A frame larger than a coalesced read needed a big scratch array: let it go. */
    private void shrinkScratch() {
        if (scratch.length > MAX_COALESCED_READ) {
            scratch = new byte[0];
        }
    }

    /** Lets the read buffer go (the store closes). */
    void release() {
        scratch = new byte[0];
    }
}
