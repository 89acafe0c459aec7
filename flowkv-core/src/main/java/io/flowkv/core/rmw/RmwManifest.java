package io.flowkv.core.rmw;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.LogFileHeader;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * The payload of an RMW manifest (see docs/format-rmw.md). Little-endian.
 *
 * <pre>
 *  int  format version (1)
 *  int  next segment id
 *  long entry count, long live bytes, long dead bytes   (checked against the restored index)
 *  int  segment count, then per segment: int id, long length in bytes
 * </pre>
 */
record RmwManifest(
        int nextSegmentId,
        long entryCount,
        long liveBytes,
        long deadBytes,
        int[] segmentIds,
        long[] segmentLengths) {
    static final int FORMAT_VERSION = 1;

    byte[] encode() {
        ByteBuffer b =
                ByteBuffer.allocate(4 + 4 + 8 + 8 + 8 + 4 + segmentIds.length * 12)
                        .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(FORMAT_VERSION).putInt(nextSegmentId);
        b.putLong(entryCount).putLong(liveBytes).putLong(deadBytes);
        b.putInt(segmentIds.length);
        for (int i = 0; i < segmentIds.length; i++) {
            b.putInt(segmentIds[i]).putLong(segmentLengths[i]);
        }
        return b.array();
    }

    static RmwManifest decode(byte[] payload, Path file) throws CorruptLogException {
        // Errors point at the manifest's only frame, which follows the file header.
        long at = LogFileHeader.LENGTH;
        try {
            ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
            int version = b.getInt();
            if (version != FORMAT_VERSION) {
                throw new CorruptLogException(
                        file,
                        at,
                        "unsupported RMW manifest version "
                                + version
                                + " (this build reads "
                                + FORMAT_VERSION
                                + ")");
            }
            int next = b.getInt();
            long entries = b.getLong();
            long live = b.getLong();
            long dead = b.getLong();
            int n = b.getInt();
            if (n < 0 || (long) n * 12 != b.remaining() || entries < 0 || live < 0 || dead < 0) {
                throw new CorruptLogException(
                        file,
                        at,
                        "malformed RMW manifest: segments="
                                + n
                                + " remaining="
                                + b.remaining()
                                + " entries="
                                + entries);
            }
            int[] ids = new int[n];
            long[] lengths = new long[n];
            for (int i = 0; i < n; i++) {
                ids[i] = b.getInt();
                lengths[i] = b.getLong();
                if (ids[i] < 0
                        || ids[i] >= next
                        || lengths[i] < LogFileHeader.LENGTH
                        || (i > 0 && ids[i] <= ids[i - 1])) {
                    throw new CorruptLogException(
                            file,
                            at,
                            "malformed RMW manifest: segment " + ids[i] + " length " + lengths[i]);
                }
            }
            return new RmwManifest(next, entries, live, dead, ids, lengths);
        } catch (BufferUnderflowException e) {
            throw new CorruptLogException(file, at, "RMW manifest payload too short");
        }
    }
}
