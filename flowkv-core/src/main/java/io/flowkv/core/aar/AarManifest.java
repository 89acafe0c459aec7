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
 *  per window:     window length:int | window bytes
 *    per partition (partitions times):
 *                  live bytes:long | dead bytes:long | segment count:int
 *      per segment: file id:long | length:long
 * </pre>
 *
 * Removals need no entry: they are REMOVE records inside the segments.
 */
final class AarManifest {
    static final int VERSION = 1;

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
            size += 4 + w.bytes.length;
            for (int i = 0; i < partitions; i++) {
                size += 8 + 8 + 4 + 16 * w.partition(i).segmentCount();
            }
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(VERSION).putLong(sequence).putLong(nextFileId).putInt(partitions);
        b.putInt(windows.size());
        for (AarWindow w : windows) {
            b.putInt(w.bytes.length).put(w.bytes);
            for (int i = 0; i < partitions; i++) {
                AarPartition p = w.partition(i);
                b.putLong(p.fileLiveBytes).putLong(p.fileDeadBytes).putInt(p.segmentCount());
                for (int s = 0; s < p.segmentCount(); s++) {
                    b.putLong(p.fileId(s)).putLong(p.length(s));
                }
            }
        }
        return b.array();
    }

    /** Recreates the manifest's windows in {@code table}; the partition counts must agree. */
    static AarManifest decode(byte[] payload, Path file, int partitions, WindowTable table)
            throws CorruptLogException {
        ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        try {
            int version = b.getInt();
            if (version != VERSION) {
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
            int windows = count(b, file, 12);
            for (int w = 0; w < windows; w++) {
                byte[] bytes = new byte[count(b, file, 1)];
                b.get(bytes);
                AarWindow window = table.create(bytes);
                for (int i = 0; i < partitions; i++) {
                    AarPartition p = window.partition(i);
                    p.fileLiveBytes = b.getLong();
                    p.fileDeadBytes = b.getLong();
                    int segments = count(b, file, 16);
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
