package io.flowkv.core.rmw;

import io.flowkv.core.Checks;
import io.flowkv.core.StoreOptions;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.Positions;

import java.nio.file.Path;

/**
 * Configuration of one {@link RmwStore}: the settings of every store plus compaction, value-log
 * segments, I/O buffer and index cache. Every value is checked when it is set, so a bad setting
 * fails where it is made, with the parameter's name, the bad value and the allowed range.
 */
public final class RmwStoreOptions extends StoreOptions {
    public static final double DEFAULT_MAX_SPACE_AMPLIFICATION = 1.5;
    public static final double MAX_MAX_SPACE_AMPLIFICATION = 100.0;
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 64L << 20;
    public static final long DEFAULT_SEGMENT_ROLL_BYTES = 64L << 20;
    public static final int DEFAULT_IO_BUFFER_BYTES = 64 << 10;
    public static final int MIN_IO_BUFFER_BYTES = 512;
    public static final int MAX_IO_BUFFER_BYTES = 64 << 20;
    public static final long MIN_SEGMENT_ROLL_BYTES = 4096;
    public static final long DEFAULT_INDEX_CACHE_BYTES = 64L << 20;
    public static final long MIN_INDEX_CACHE_BYTES = PagedHashIndex.MIN_CACHE_BYTES;

    private final double maxSpaceAmplification;
    private final long segmentRollBytes;
    private final int ioBufferBytes;
    private final long hashMask;
    private final long indexCacheBytes;

    private RmwStoreOptions(Builder b) {
        super(b);
        this.maxSpaceAmplification = b.maxSpaceAmplification;
        this.segmentRollBytes = b.segmentRollBytes;
        this.ioBufferBytes = b.ioBufferBytes;
        this.hashMask = b.hashMask;
        this.indexCacheBytes = b.indexCacheBytes;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    /** Compaction runs when (live + dead bytes) / live bytes exceeds this (jittered downwards). */
    public double maxSpaceAmplification() {
        return maxSpaceAmplification;
    }

    /** A value-log segment is closed and a new one started once it reaches this size. */
    public long segmentRollBytes() {
        return segmentRollBytes;
    }

    /**
     * Native memory the hash index may keep its pages in; pages beyond it live in a page file and
     * are read back on demand.
     */
    public long indexCacheBytes() {
        return indexCacheBytes;
    }

    /** Size of the staging buffer for appends and of the read buffer for scans. */
    public int ioBufferBytes() {
        return ioBufferBytes;
    }

    /** Applied to every (key, namespace) hash; only tests narrow it, to force collisions. */
    long hashMask() {
        return hashMask;
    }

    @Override
    public String toString() {
        return "RmwStoreOptions{directory="
                + directory()
                + ", maxSpaceAmplification="
                + maxSpaceAmplification
                + ", writeBufferBytes="
                + writeBufferBytes()
                + ", segmentRollBytes="
                + segmentRollBytes
                + ", ioBufferBytes="
                + ioBufferBytes
                + ", indexCacheBytes="
                + indexCacheBytes
                + ", jitterSeed="
                + jitterSeed()
                + ", jitterSpread="
                + jitterSpread()
                + "}";
    }

    /** Builder; each setter validates its argument. */
    public static final class Builder extends StoreOptions.Builder<Builder, RmwStoreOptions> {
        private double maxSpaceAmplification = DEFAULT_MAX_SPACE_AMPLIFICATION;
        private long segmentRollBytes = DEFAULT_SEGMENT_ROLL_BYTES;
        private int ioBufferBytes = DEFAULT_IO_BUFFER_BYTES;
        private long hashMask = -1L;
        private long indexCacheBytes = DEFAULT_INDEX_CACHE_BYTES;

        private Builder(Path directory) {
            super(directory, DEFAULT_WRITE_BUFFER_BYTES, 1);
        }

        public Builder maxSpaceAmplification(double msa) {
            this.maxSpaceAmplification =
                    Checks.checkRange(
                            "maxSpaceAmplification", msa, 1.0, false, MAX_MAX_SPACE_AMPLIFICATION);
            return this;
        }

        public Builder segmentRollBytes(long bytes) {
            this.segmentRollBytes =
                    Checks.checkRange(
                            "segmentRollBytes",
                            bytes,
                            MIN_SEGMENT_ROLL_BYTES,
                            Positions.MAX_OFFSET);
            return this;
        }

        public Builder ioBufferBytes(int bytes) {
            this.ioBufferBytes =
                    Checks.checkRange(
                            "ioBufferBytes", bytes, MIN_IO_BUFFER_BYTES, MAX_IO_BUFFER_BYTES);
            return this;
        }

        public Builder indexCacheBytes(long bytes) {
            this.indexCacheBytes =
                    Checks.checkRange(
                            "indexCacheBytes", bytes, MIN_INDEX_CACHE_BYTES, Long.MAX_VALUE);
            return this;
        }

        /** Keeps only the masked hash bits so that tests exercise the collision paths. */
        Builder hashMaskForTesting(long mask) {
            this.hashMask = mask;
            return this;
        }

        @Override
        public RmwStoreOptions build() {
            return new RmwStoreOptions(this);
        }
    }
}
