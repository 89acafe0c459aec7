package io.flowkv.core.index;

/** 64-bit hashing of byte ranges, for hash indexes and partitioning. Stable across runs. */
public final class Hashing {
    private static final long SEED = 0x9E3779B97F4A7C15L;

    private Hashing() {}

    public static long hash64(byte[] b) {
        return hash64(b, 0, b.length, SEED);
    }

    public static long hash64(byte[] b, int off, int len) {
        return hash64(b, off, len, SEED);
    }

    /** Hash of the pair (a, b), distinct from the hash of their concatenation's other splits. */
    public static long hash64(byte[] a, byte[] b) {
        return hash64(b, 0, b.length, hash64(a, 0, a.length, SEED) ^ ((long) a.length << 1));
    }

    public static long hash64(byte[] b, int off, int len, long seed) {
        long h = seed ^ (len * 0xC2B2AE3D27D4EB4FL);
        int i = off;
        int end = off + len;
        for (; i + 8 <= end; i += 8) {
            long k =
                    (b[i] & 0xFFL)
                            | (b[i + 1] & 0xFFL) << 8
                            | (b[i + 2] & 0xFFL) << 16
                            | (b[i + 3] & 0xFFL) << 24
                            | (b[i + 4] & 0xFFL) << 32
                            | (b[i + 5] & 0xFFL) << 40
                            | (b[i + 6] & 0xFFL) << 48
                            | (b[i + 7] & 0xFFL) << 56;
            h = Long.rotateLeft(h ^ mix(k), 27) * 0x9E3779B97F4A7C15L + 0x52DCE729L;
        }
        long tail = 0;
        int shift = 0;
        for (; i < end; i++, shift += 8) {
            tail |= (b[i] & 0xFFL) << shift;
        }
        h ^= mix(tail);
        return fmix(h);
    }

    private static long mix(long k) {
        k *= 0x87C37B91114253D5L;
        k = Long.rotateLeft(k, 31);
        return k * 0x4CF5AD432745937FL;
    }

    /** Murmur3's finaliser: every input bit affects every output bit. */
    public static long fmix(long h) {
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 33;
        return h;
    }
}
