package io.flowkv.core.aar;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogFileHeader;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;

/**
 * The payload of an AAR manifest frame (the file itself is a {@code ManifestFile}). Little-endian.
 *
 * <pre>
 *  payload version:int | manifest sequence:long | next file id:long | partitions:int
 *  window count:int
 *  per window:     window length:int | window bytes | present partitions:int
 *    per present partition, ascending index:
 *                  partition index:int | live bytes:long | dead bytes:long | segment count:int
 *      per segment: file id:long | length:long
 * </pre>
 *
 * A partition is present when it has segments or counts bytes. Version 1 wrote every partition of
 * every window, without the count and the index; it is still read. Removals need no entry: they are
 * REMOVE records inside the segments.
 */
final class AarManifest {
    static final int VERSION = 2;

    /** Every partition of every window, in index order, with no count or index. */
    static final int VERSION_DENSE = 1;

    /** Where the payload starts in the manifest file, for error offsets. */
    private static final int PAYLOAD_OFFSET = LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH;

    final long sequence;
    final long nextFileId;

    private AarManifest(long sequence, long nextFileId) {
        this.sequence = sequence;
        this.nextFileId = nextFileId;
    }

    static byte[] encode(long sequence, long nextFileId, int partitions, List<AarWindow> windows) {
        int size = 4 + 8 + 8 + 4 + 4;
        for (AarWindow w : windows) {
            size += 4 + w.bytes.length + 4;
            for (AarPartition p : w.present()) {
                if (written(p)) {
                    size += 4 + 8 + 8 + 4 + 16 * p.segmentCount();
                }
            }
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(VERSION).putLong(sequence).putLong(nextFileId).putInt(partitions);
        b.putInt(windows.size());
        for (AarWindow w : windows) {
            b.putInt(w.bytes.length).put(w.bytes);
            AarPartition[] present = w.present();
            int countAt = b.position();
            int count = 0;
            b.putInt(0);
            for (AarPartition p : present) {
                if (!written(p)) {
                    continue;
                }
                count++;
                b.putInt(p.index);
                b.putLong(p.fileLiveBytes).putLong(p.fileDeadBytes).putInt(p.segmentCount());
                for (int s = 0; s < p.segmentCount(); s++) {
                    b.putLong(p.fileId(s)).putLong(p.length(s));
                }
            }
            b.putInt(countAt, count);
        }
        return b.array();
    }

    /** A partition the manifest lists: buffered-only state is flushed before any seal. */
    private static boolean written(AarPartition p) {
        return p.hasSegments() || p.fileLiveBytes != 0 || p.fileDeadBytes != 0;
    }

    /** Recreates the manifest's windows in {@code table}; the partition counts must agree. */
    static AarManifest decode(byte[] payload, Path file, int partitions, WindowTable table)
            throws CorruptLogException {
        ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int version = b.getInt();
            if (version != VERSION && version != VERSION_DENSE) {
                throw corrupt(file, 0, "unsupported AAR manifest version " + version);
            }
            long sequence = b.getLong();
            long nextFileId = b.getLong();
            int stored = b.getInt();
            if (stored != partitions) {
                throw corrupt(
                        file,
                        20,
                        "written with "
                                + stored
                                + " partitions per window but the store is configured with "
                                + partitions);
            }
            int windows = count(b, file, 8);
            for (int w = 0; w < windows; w++) {
                byte[] bytes = new byte[count(b, file, 1)];
                b.get(bytes);
                AarWindow window = table.create(bytes);
                boolean dense = version == VERSION_DENSE;
                int listed = dense ? partitions : count(b, file, 24);
                int previous = -1;
                for (int i = 0; i < listed; i++) {
                    int index = dense ? i : b.getInt();
                    if (index <= previous || index >= partitions) {
                        throw corrupt(
                                file,
                                b.position() - 4,
                                "partition " + index + " out of order or beyond " + partitions);
                    }
                    previous = index;
                    long live = b.getLong();
                    long dead = b.getLong();
                    int segments = count(b, file, 16);
                    if (dense && segments == 0 && live == 0 && dead == 0) {
                        continue;
                    }
                    AarPartition p = window.partition(index);
                    p.fileLiveBytes = live;
                    p.fileDeadBytes = dead;
                    for (int s = 0; s < segments; s++) {
                        long fileId = b.getLong();
                        long length = b.getLong();
                        if (fileId < 0 || fileId >= nextFileId || length < LogFileHeader.LENGTH) {
                            throw corrupt(
                                    file,
                                    b.position() - 16,
                                    "bad segment " + fileId + " of length " + length);
                        }
                        p.addSegment(fileId, length);
                    }
                }
            }
            if (b.hasRemaining()) {
                throw corrupt(file, b.position(), b.remaining() + " trailing bytes");
            }
            return new AarManifest(sequence, nextFileId);
        } catch (BufferUnderflowException e) {
            throw corrupt(file, payload.length, "payload ends early");
        }
    }

    /** Reads a count that must be non-negative and fit the remaining bytes at its minimum size. */
    private static int count(ByteBuffer b, Path file, int minBytesEach) throws CorruptLogException {
        int n = b.getInt();
        if (n < 0 || (long) n * minBytesEach > b.remaining()) {
            throw corrupt(file, b.position() - 4, "bad count " + n);
        }
        return n;
    }

    private static CorruptLogException corrupt(Path file, int payloadPosition, String problem) {
        return new CorruptLogException(file, PAYLOAD_OFFSET + payloadPosition, problem);
    }
}
