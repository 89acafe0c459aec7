package io.flowkv.core.log;

/**
 * A position in a store's files packed into one {@code long}, so that indexes hold primitives.
 *
 * <pre>
 *   63           40 39                                   0
 *  +---------------+--------------------------------------+
 *  | segment (24b) |         offset in segment (40b)      |
 *  +---------------+--------------------------------------+
 * </pre>
 *
 * 16M segments of up to 1 TiB each. -1 is never a valid position and serves as "none".
 */
public final class Positions {
    public static final long NONE = -1L;
    public static final int SEGMENT_BITS = 24;
    public static final int OFFSET_BITS = 40;
    public static final long MAX_OFFSET = (1L << OFFSET_BITS) - 1;
    public static final int MAX_SEGMENT = (1 << SEGMENT_BITS) - 1;

    private Positions() {}

    public static long pack(int segment, long offset) {
        if (segment < 0 || segment > MAX_SEGMENT || offset < 0 || offset > MAX_OFFSET) {
            throw new IllegalArgumentException(
                    "segment=" + segment + " offset=" + offset + " out of range");
        }
        return ((long) segment << OFFSET_BITS) | offset;
    }

    public static int segment(long position) {
        return (int) (position >>> OFFSET_BITS);
    }

    public static long offset(long position) {
        return position & MAX_OFFSET;
    }
}
