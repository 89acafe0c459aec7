package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.Positions;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.flowkv.core.aur.WindowStatTable.EXPLICIT_ETT;
import static io.flowkv.core.aur.WindowStatTable.NO_ID;

/**
 * The payload of an AUR manifest (the file itself is a {@code ManifestFile}): the store's counters,
 * its logs and its stat table. Little-endian, through {@link ManifestCodec}; docs/FORMAT.md has the
 * table.
 *
 * <pre>
 *  payload version:int | next flush sequence:long | next file id:int | read clock:long
 *  data log count:int  | per data log, in log order:  file id:int | length:long
 *  index log count:int | per index log:               file id:int | length:long
 *  window count:int    | per window: ETT:long | max timestamp:long | first sequence:long
 *                        | live data bytes:long | flags:int | key (length-prefixed) | window (same)
 * </pre>
 */
final class AurManifest {
    static final int VERSION = 1;

    final long flushSeq;
    final int nextFileId;
    final long readClock;
    final List<LogSegment> dataLogs;
    final List<LogSegment> indexLogs;

    /** The windows' live data bytes, summed. */
    final long liveBytes;

    /** Windows with live data bytes. */
    final int windowsWithData;

    private AurManifest(
            long flushSeq,
            int nextFileId,
            long readClock,
            List<LogSegment> dataLogs,
            List<LogSegment> indexLogs,
            long liveBytes,
            int windowsWithData) {
        this.flushSeq = flushSeq;
        this.nextFileId = nextFileId;
        this.readClock = readClock;
        this.dataLogs = dataLogs;
        this.indexLogs = indexLogs;
        this.liveBytes = liveBytes;
        this.windowsWithData = windowsWithData;
    }

    static byte[] encode(
            long flushSeq,
            int nextFileId,
            long readClock,
            DataLogs dataLogs,
            List<LogSegment> indexLogs,
            WindowStatTable table) {
        ManifestCodec.Writer out = new ManifestCodec.Writer();
        out.putInt(VERSION);
        out.putLong(flushSeq);
        out.putInt(nextFileId);
        out.putLong(readClock);
        out.putInt(dataLogs.size());
        for (LogSegment segment : dataLogs) {
            out.putInt(segment.id);
            out.putLong(segment.size);
        }
        out.putInt(indexLogs.size());
        for (LogSegment segment : indexLogs) {
            out.putInt(segment.id);
            out.putLong(segment.size);
        }
        out.putInt(table.size());
        for (int id = 0, end = table.highWater(); id < end; id++) {
            if (!table.inUse(id)) {
                continue;
            }
            out.putLong(table.ett(id));
            out.putLong(table.maxTimestamp(id));
            out.putLong(table.firstSeq(id));
            out.putLong(table.diskBytes(id));
            out.putInt(table.flags(id) & EXPLICIT_ETT);
            out.putBytes(table.key(id));
            out.putBytes(table.window(id));
        }
        return out.toByteArray();
    }

    /**
     * Reads the payload of {@code manifest}, naming logs as files of {@code directory}, and inserts
     * its windows into {@code table} (empty before). Fails with {@link CorruptLogException} on a
     * field out of range or a window listed twice.
     */
    static AurManifest decode(Path manifest, byte[] payload, Path directory, WindowStatTable table)
            throws IOException {
        ManifestCodec.Reader in = new ManifestCodec.Reader(manifest, payload);
        int version = in.getInt("payload version");
        if (version != VERSION) {
            throw new CorruptLogException(
                    manifest,
                    0,
                    "unsupported AUR manifest payload version "
                            + version
                            + " (this build reads "
                            + VERSION
                            + ")");
        }
        long flushSeq = in.getLong("flush sequence");
        int nextFileId = in.getInt("next file id");
        long readClock = in.getLong("read clock");
        List<LogSegment> dataLogs =
                segments("data", AurStore.DATA_PREFIX, FileType.AUR_DATA_LOG, in, directory);
        List<LogSegment> indexLogs =
                segments("index", AurStore.INDEX_PREFIX, FileType.AUR_INDEX_LOG, in, directory);
        int windows = in.getCount("window count");
        long live = 0;
        int withData = 0;
        // One call per window, not the loop body: a restore runs this loop once in a JVM, so the
        // JIT compiles a method called per window long before it would compile the loop.
        for (int i = 0; i < windows; i++) {
            long disk = decodeWindow(manifest, in, table, i);
            live += disk;
            if (disk != 0) {
                withData++;
            }
        }
        return new AurManifest(
                flushSeq, nextFileId, readClock, dataLogs, indexLogs, live, withData);
    }

    /** Inserts the manifest's {@code i}-th window into {@code table}; returns its data bytes. */
    private static long decodeWindow(
            Path manifest, ManifestCodec.Reader in, WindowStatTable table, int i)
            throws IOException {
        long ett = in.getLong("ett");
        long maxTimestamp = in.getLong("max timestamp");
        long firstSeq = in.getLong("first sequence");
        long disk = in.getLong("data bytes");
        int flags = in.getInt("flags");
        byte[] key = in.getBytes("key");
        byte[] window = in.getBytes("window");
        if (table.find(key, window) != NO_ID || disk < 0) {
            throw new CorruptLogException(
                    manifest, 0, "duplicate or invalid window entry " + i + " in manifest");
        }
        int id = table.insert(key, window, firstSeq);
        table.setEtt(id, ett);
        table.setMaxTimestamp(id, maxTimestamp);
        table.setDiskBytes(id, disk);
        table.setFlags(id, flags & EXPLICIT_ETT);
        return disk;
    }

    private static List<LogSegment> segments(
            String kind, String prefix, FileType type, ManifestCodec.Reader in, Path directory)
            throws IOException {
        int count = in.getCount(kind + " segment count");
        List<LogSegment> segments = new ArrayList<>(count);
        Set<Integer> ids = new HashSet<>();
        for (int i = 0; i < count; i++) {
            int id = in.getInt(kind + " segment id");
            long length = in.getLong("segment length");
            if (id <= 0 || id > Positions.MAX_SEGMENT || length < LogFileHeader.LENGTH) {
                throw new CorruptLogException(
                        in.file(), 0, "bad segment id " + id + " or length " + length);
            }
            if (!ids.add(id)) {
                throw new CorruptLogException(
                        in.file(), 0, kind + " segment id " + id + " listed twice");
            }
            Path file = directory.resolve(AurStore.fileName(prefix, id));
            segments.add(new LogSegment(id, file, type, length));
        }
        return segments;
    }
}
