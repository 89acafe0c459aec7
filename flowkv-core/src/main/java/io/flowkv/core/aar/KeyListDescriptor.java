package io.flowkv.core.aar;

/**
 * Layout of a loaded partition in its off-heap arena: one key entry per key and one value node per
 * live value, linked in log order. The partition's hash index maps a key's hash to its entry.
 *
 * <p>Key entry:
 *
 * <pre>
 *   0               8               16              24      28      32
 *  +---------------+---------------+---------------+-------+-------+-------------+
 *  | first value   | last value    | live log bytes| count |key len| key ...     |
 *  +---------------+---------------+---------------+-------+-------+-------------+
 * </pre>
 *
 * Value node:
 *
 * <pre>
 *   0               8       12
 *  +---------------+-------+-----------------+
 *  | next value    | length| value bytes ... |
 *  +---------------+-------+-----------------+
 * </pre>
 *
 * A removed key keeps its entry with count 0, so a later append of the same key reuses it.
 */
final class KeyListDescriptor {
    static final int HEAD_OFFSET = 0;
    static final int TAIL_OFFSET = 8;
    static final int LIVE_BYTES_OFFSET = 16;
    static final int COUNT_OFFSET = 24;
    static final int KEY_LENGTH_OFFSET = 28;
    static final int KEY_OFFSET = 32;

    static final int NEXT_OFFSET = 0;
    static final int VALUE_LENGTH_OFFSET = 8;
    static final int VALUE_OFFSET = 12;

    static final long NO_NODE = -1L;

    private KeyListDescriptor() {}
}
