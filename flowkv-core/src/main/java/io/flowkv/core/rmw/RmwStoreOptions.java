package io.flowkv.core.rmw;

import io.flowkv.core.Checks;
import io.flowkv.core.Jitter;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.Positions;

import java.nio.file.Path;

/**
 * Configuration of one {@link RmwStore}. Every value is checked when it is set, so a bad setting
 * fails where it is made, with the parameter's name, the bad value and the allowed range.
 */
public final class RmwStoreOptions {
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

    private final Path directory;
    private final double maxSpaceAmplification;
    private final long writeBufferBytes;
    private final long segmentRollBytes;
    private final int ioBufferBytes;
    private final FileIo fileIo;
    private final long jitterSeed;
    private final double jitterSpread;
    private final long hashMask;
    private final long indexCacheBytes;

    private RmwStoreOptions(Builder b) {
        this.directory = b.directory;
        this.maxSpaceAmplification = b.maxSpaceAmplification;
        this.writeBufferBytes = b.writeBufferBytes;
        this.segmentRollBytes = b.segmentRollBytes;
        this.ioBufferBytes = b.ioBufferBytes;
        this.fileIo = b.fileIo;
        this.jitterSeed = b.jitterSeed;
        this.jitterSpread = b.jitterSpread;
        this.hashMask = b.hashMask;
        this.indexCacheBytes = b.indexCacheBytes;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    public Path directory() {
        return directory;
    }

    /** Compaction runs when (live + dead bytes) / live bytes exceeds this (jittered downwards). */
    public double maxSpaceAmplification() {
        return maxSpaceAmplification;
    }

    /** Record bytes the write buffer may hold before it is flushed (jittered downwards). */
    public long writeBufferBytes() {
        return writeBufferBytes;
    }

    /** A value-log segment is closed and a new one started once it reaches this size. */
    public long segmentRollBytes() {
        return segmentRollBytes;
    }

    /** Size of the staging buffer for appends and of the read buffer for scans. */
    /**
     * Native memory the hash index may keep its pages in; pages beyond it live in a page file and
     * are read back on demand.
     */
    public long indexCacheBytes() {
        return indexCacheBytes;
    }

    public int ioBufferBytes() {
        return ioBufferBytes;
    }

    public FileIo fileIo() {
        return fileIo;
    }

    public long jitterSeed() {
        return jitterSeed;
    }

    public double jitterSpread() {
        return jitterSpread;
    }

    /** Applied to every (key, namespace) hash; only tests narrow it, to force collisions. */
    long hashMask() {
        return hashMask;
    }

    Jitter newJitter() {
        return new Jitter(jitterSeed, jitterSpread);
    }

    @Override
    public String toString() {
        return "RmwStoreOptions{directory="
                + directory
                + ", maxSpaceAmplification="
                + maxSpaceAmplification
                + ", writeBufferBytes="
                + writeBufferBytes
                + ", segmentRollBytes="
                + segmentRollBytes
                + ", ioBufferBytes="
                + ioBufferBytes
                + ", indexCacheBytes="
                + indexCacheBytes
                + ", jitterSeed="
                + jitterSeed
                + ", jitterSpread="
                + jitterSpread
                + "}";
    }

    /** Builder; each setter validates its argument. */
    public static final class Builder {
        private final Path directory;
        private double maxSpaceAmplification = DEFAULT_MAX_SPACE_AMPLIFICATION;
        private long writeBufferBytes = DEFAULT_WRITE_BUFFER_BYTES;
        private long segmentRollBytes = DEFAULT_SEGMENT_ROLL_BYTES;
        private int ioBufferBytes = DEFAULT_IO_BUFFER_BYTES;
        private FileIo fileIo = FileIo.DEFAULT;
        private long jitterSeed;
        private double jitterSpread = Jitter.DEFAULT_SPREAD;
        private long hashMask = -1L;
        private long indexCacheBytes = DEFAULT_INDEX_CACHE_BYTES;

        private Builder(Path directory) {
            this.directory = Checks.checkNotNull("directory", directory);
        }

        public Builder maxSpaceAmplification(double msa) {
            this.maxSpaceAmplification =
                    Checks.checkRange(
                            "maxSpaceAmplification", msa, 1.0, false, MAX_MAX_SPACE_AMPLIFICATION);
            return this;
        }

        public Builder writeBufferBytes(long bytes) {
            this.writeBufferBytes = Checks.checkPositive("writeBufferBytes", bytes);
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

        public Builder fileIo(FileIo io) {
            this.fileIo = Checks.checkNotNull("fileIo", io);
            return this;
        }

        public Builder jitterSeed(long seed) {
            this.jitterSeed = seed;
            return this;
        }

        /** 0 turns jitter off (thresholds are then exactly the configured ones). */
        public Builder jitterSpread(double spread) {
            this.jitterSpread = Checks.checkRange("jitterSpread", spread, 0.0, true, 0.9);
            return this;
        }

        /** Keeps only the masked hash bits so that tests exercise the collision paths. */
        Builder hashMaskForTesting(long mask) {
            this.hashMask = mask;
            return this;
        }

        public RmwStoreOptions build() {
            return new RmwStoreOptions(this);
        }
    }
}
