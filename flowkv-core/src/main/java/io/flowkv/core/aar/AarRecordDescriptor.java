package io.flowkv.core.aar;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FrameDescriptor;

import java.nio.file.Path;

/**
 * Layout of an AAR record, in the write buffer and in a window log frame. Little-endian.
 *
 * <p>A log record, many of which fill one frame payload ({@code FrameDescriptor}):
 *
 * <pre>
 *   0      1               5               9
 *  +------+---------------+---------------+-----------------+-------------------+
 *  | type | key length    | value length  | key bytes ...   | value bytes ...   |
 *  +------+---------------+---------------+-----------------+-------------------+
 * </pre>
 *
 * {@link #APPEND} adds the value to the key's list; {@link #REMOVE} (value length 0) clears every
 * value of the key that precedes it in the window partition's log. Replaying a partition's segments
 * in order therefore yields exactly the live lists, with no side table of removals.
 *
 * <p>In the write buffer the same bytes sit behind a 16-byte prefix that chains the records of one
 * (window, partition) in append order and caches the key's hash for cheap comparisons, so a flush
 * copies {@code [LOG_RECORD_OFFSET, end)} of each record to the log unchanged:
 *
 * <pre>
 *   0               8               16
 *  +---------------+---------------+------------------------------------------+
 *  | next position | key hash      | log record (as above)                    |
 *  +---------------+---------------+------------------------------------------+
 * </pre>
 *
 * {@link #DEAD} marks a buffered append whose key was removed before it was flushed: it is skipped
 * by reads and never written.
 */
final class AarRecordDescriptor {
    static final byte DEAD = 0;
    static final byte APPEND = 1;
    static final byte REMOVE = 2;

    static final int TYPE_OFFSET = 0;
    static final int KEY_LENGTH_OFFSET = 1;
    static final int VALUE_LENGTH_OFFSET = 5;
    static final int LOG_HEADER_LENGTH = 9;

    static final int NEXT_OFFSET = 0;
    static final int KEY_HASH_OFFSET = 8;
    static final int LOG_RECORD_OFFSET = 16;
    static final int BUFFERED_HEADER_LENGTH = LOG_RECORD_OFFSET + LOG_HEADER_LENGTH;

    /** End of a chain. Arena positions are never negative. */
    static final long NO_RECORD = -1L;

    private AarRecordDescriptor() {}

    static int logRecordLength(int keyLength, int valueLength) {
        return LOG_HEADER_LENGTH + keyLength + valueLength;
    }

    static int bufferedRecordLength(int keyLength, int valueLength) {
        return LOG_RECORD_OFFSET + logRecordLength(keyLength, valueLength);
    }

    /**
     * Checks the log record at {@code b[at]} of a frame payload ending at {@code end}; returns its
     * length. {@code payloadFileOffset} is where {@code b[payloadStart]} sits in {@code file}, so
     * that an error names the record's own offset.
     */
    static int checkRecord(
            byte[] b, int at, int end, Path file, long payloadFileOffset, int payloadStart)
            throws CorruptLogException {
        long offset = payloadFileOffset + (at - payloadStart);
        if (end - at < LOG_HEADER_LENGTH) {
            throw new CorruptLogException(file, offset, "truncated AAR record header");
        }
        byte type = b[at + TYPE_OFFSET];
        int keyLength = FrameDescriptor.readIntLE(b, at + KEY_LENGTH_OFFSET);
        int valueLength = FrameDescriptor.readIntLE(b, at + VALUE_LENGTH_OFFSET);
        if (type != APPEND && type != REMOVE) {
            throw new CorruptLogException(file, offset, "unknown AAR record type " + type);
        }
        if (keyLength < 0
                || valueLength < 0
                || (type == REMOVE && valueLength != 0)
                || (long) LOG_HEADER_LENGTH + keyLength + valueLength > end - at) {
            throw new CorruptLogException(
                    file,
                    offset,
                    "bad AAR record lengths: key " + keyLength + ", value " + valueLength);
        }
        return LOG_HEADER_LENGTH + keyLength + valueLength;
    }
}
