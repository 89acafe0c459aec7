package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.Positions;

import java.io.IOException;
import java.nio.channels.FileChannel;

import static io.flowkv.core.log.IoFailures.closeQuietly;
import static io.flowkv.core.log.IoFailures.deleteQuietly;

/**
 * One compaction of an AUR store, fed every live index entry by one index scan: the frames of the
 * victim data logs ({@link DataLogs#markVictims}) move to a new data log, adjacent ones in one
 * zero-copy transfer, and every live entry goes to a new index log with its frame's place from then
 * on. Each window's chain is rebuilt alongside, in the rebuilt heads of the stat table. The store
 * creates the logs ({@code AurStore#startCompaction}) and installs the outcome.
 */
final class Compaction {
    /** The most bytes one transfer moves. */
    private static final long MAX_TRANSFER = 64L << 20;

    private final FileIo io;
    private final WindowStatTable table;
    private final DataLogs dataLogs;
    final LogSegment data;
    private final FileChannel dataChannel;
    final LogSegment index;
    final LogWriter writer;
    final FrameChains chains;
    long dataSize;
    private long indexFrame = -1;
    long moved;
    private long kept;
    private LogSegment pending;
    private long pendingStart;
    private long pendingEnd;

    Compaction(
            FileIo io,
            WindowStatTable table,
            DataLogs dataLogs,
            LogSegment data,
            FileChannel dataChannel,
            LogSegment index,
            LogWriter writer,
            FrameChains chains) {
        this.io = io;
        this.table = table;
        this.dataLogs = dataLogs;
        this.data = data;
        this.dataChannel = dataChannel;
        this.index = index;
        this.writer = writer;
        this.chains = chains;
        this.dataSize = data.size;
        for (int id = 0, end = table.highWater(); id < end; id++) {
            table.setRebuiltHead(id, FrameChains.END);
        }
    }

    /**
     * Queues the entry's frame for transfer if its data log is a victim, and rewrites the entry;
     * returns the frame's place from now on.
     */
    long move(IndexEntryDescriptor e) throws IOException {
        LogSegment from = dataLogs.require(Positions.segment(e.position));
        long position = e.position;
        if (from.victim) {
            long offset = Positions.offset(e.position);
            if (pending != from
                    || pendingEnd != offset
                    || pendingEnd - pendingStart + e.frameLength > MAX_TRANSFER) {
                drain();
                pending = from;
                pendingStart = offset;
                pendingEnd = offset;
            }
            pendingEnd += e.frameLength;
            position = Positions.pack(data.id, dataSize);
            dataSize += e.frameLength;
            moved += e.frameLength;
        } else {
            kept += e.frameLength;
        }
        if (indexFrame < 0) {
            indexFrame = writer.beginFrame();
        }
        e.writeMoved(writer, position);
        if (writer.size() - indexFrame >= AurStore.INDEX_FRAME_TARGET) {
            writer.endFrame();
            indexFrame = -1;
        }
        return position;
    }

    /** Appends the moved frame to its window's new chain. */
    void chain(int id, long position, int length) {
        table.setRebuiltHead(id, chains.extend(table.rebuiltHead(id), position, length));
    }

    /** Adjacent live frames move in one zero-copy transfer. */
    private void drain() throws IOException {
        if (pending != null && pendingEnd > pendingStart) {
            pending.reader(io).transferTo(pendingStart, pendingEnd - pendingStart, dataChannel);
        }
        pending = null;
    }

    /**
     * Completes the logs; {@code liveBytes} is what the stat table says the moved and kept frames
     * hold.
     */
    void finish(long liveBytes) throws IOException {
        drain();
        if (indexFrame >= 0) {
            writer.endFrame();
            indexFrame = -1;
        }
        writer.flush();
        if (dataChannel.size() != dataSize) {
            throw new IOException(
                    "Compacted data log "
                            + data.path
                            + " has "
                            + dataChannel.size()
                            + " bytes, expected "
                            + dataSize);
        }
        if (moved + kept != liveBytes) {
            throw new IllegalStateException(
                    "AUR compaction found "
                            + (moved + kept)
                            + " live bytes in the index log, the stat table has "
                            + liveBytes);
        }
        dataChannel.close();
        data.size = dataSize;
        index.size = writer.size();
    }

    void abort(Throwable cause) {
        chains.close();
        closeQuietly(dataChannel, cause);
        closeQuietly(writer, cause);
        deleteQuietly(io, data.path, cause);
        deleteQuietly(io, index.path, cause);
    }
}
