package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogWriter;

import java.io.IOException;
import java.nio.file.Path;

/**
 * One entry of the AUR index log: where one flush put the values of one (key, state window) in the
 * data log. Entries are packed back to back in the payload of index-log frames. Little-endian.
 *
 * <pre>
 *   0                               8                               16
 *  +-------------------------------+-------------------------------+
 *  |     flush sequence number     |  data position (seg:24|off:40) |
 *  +---------------+---------------+-------------------------------+
 *  16              20              24                              32
 *  +---------------+---------------+-------------------------------+
 *  | data frame len|  value count  |        max timestamp          |
 *  +---------------+---------------+-------------------------------+
 *  32              36              40
 *  +---------------+---------------+---------------+---------------+
 *  |  key length   | window length |  key bytes ... window bytes   |
 *  +---------------+---------------+-------------------------------+
 * </pre>
 *
 * The data frame length counts the frame header (8 bytes) too: it is the exact byte range to read,
 * or to move during compaction. An entry is live iff its (key, window) is in the store's stat table
 * and its sequence number is at least the window's first sequence number (a window removed and
 * created again starts a new incarnation; entries of the old one are dead).
 *
 * <p>Instances are flyweights: {@link #parse} points one at an entry in a scan buffer without
 * copying it.
 */
final class IndexEntryDescriptor {
    static final int SEQ_OFFSET = 0;
    static final int POSITION_OFFSET = 8;
    static final int FRAME_LENGTH_OFFSET = 16;
    static final int COUNT_OFFSET = 20;
    static final int MAX_TIMESTAMP_OFFSET = 24;
    static final int KEY_LENGTH_OFFSET = 32;
    static final int WINDOW_LENGTH_OFFSET = 36;
    static final int HEADER_LENGTH = 40;

    byte[] buffer;
    int offset;
    long seq;
    long position;
    int frameLength;
    int valueCount;
    long maxTimestamp;
    int keyOffset;
    int keyLength;
    int windowOffset;
    int windowLength;

    /** Points this flyweight at the entry at {@code buf[at]}; returns the offset past it. */
    int parse(byte[] buf, int at, int end, Path file, long frameOffset) throws CorruptLogException {
        if (end - at < HEADER_LENGTH) {
            throw new CorruptLogException(file, frameOffset, "truncated index entry header");
        }
        buffer = buf;
        offset = at;
        seq = FrameDescriptor.readLongLE(buf, at + SEQ_OFFSET);
        position = FrameDescriptor.readLongLE(buf, at + POSITION_OFFSET);
        frameLength = FrameDescriptor.readIntLE(buf, at + FRAME_LENGTH_OFFSET);
        valueCount = FrameDescriptor.readIntLE(buf, at + COUNT_OFFSET);
        maxTimestamp = FrameDescriptor.readLongLE(buf, at + MAX_TIMESTAMP_OFFSET);
        keyLength = FrameDescriptor.readIntLE(buf, at + KEY_LENGTH_OFFSET);
        windowLength = FrameDescriptor.readIntLE(buf, at + WINDOW_LENGTH_OFFSET);
        if (keyLength < 0
                || windowLength < 0
                || frameLength < FrameDescriptor.HEADER_LENGTH
                || valueCount < 0
                || (long) keyLength + windowLength > end - at - HEADER_LENGTH) {
            throw new CorruptLogException(
                    file,
                    frameOffset,
                    "bad index entry at payload offset "
                            + at
                            + ": keyLength="
                            + keyLength
                            + " windowLength="
                            + windowLength
                            + " frameLength="
                            + frameLength);
        }
        keyOffset = at + HEADER_LENGTH;
        windowOffset = keyOffset + keyLength;
        return windowOffset + windowLength;
    }

    int length() {
        return HEADER_LENGTH + keyLength + windowLength;
    }

    static int length(int keyLength, int windowLength) {
        return HEADER_LENGTH + keyLength + windowLength;
    }

    /** Writes the parsed entry again, pointing at {@code newPosition} (a compaction moved it). */
    void writeMoved(LogWriter out, long newPosition) throws IOException {
        write(
                out,
                seq,
                newPosition,
                frameLength,
                valueCount,
                maxTimestamp,
                buffer,
                keyOffset,
                keyLength,
                buffer,
                windowOffset,
                windowLength);
    }

    /** The stat table id of the parsed entry's window if the entry is live, else NO_ID. */
    int liveId(WindowStatTable table) {
        int id = table.find(buffer, keyOffset, keyLength, buffer, windowOffset, windowLength);
        return id != WindowStatTable.NO_ID && seq >= table.firstSeq(id)
                ? id
                : WindowStatTable.NO_ID;
    }

    static void write(
            LogWriter out,
            long seq,
            long position,
            int frameLength,
            int valueCount,
            long maxTimestamp,
            byte[] key,
            int keyOffset,
            int keyLength,
            byte[] window,
            int windowOffset,
            int windowLength)
            throws IOException {
        out.putLong(seq);
        out.putLong(position);
        out.putInt(frameLength);
        out.putInt(valueCount);
        out.putLong(maxTimestamp);
        out.putInt(keyLength);
        out.putInt(windowLength);
        out.putBytes(key, keyOffset, keyLength);
        out.putBytes(window, windowOffset, windowLength);
    }
}
