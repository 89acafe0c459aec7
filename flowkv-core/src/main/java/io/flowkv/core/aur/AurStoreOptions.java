package io.flowkv.core.aur;

import io.flowkv.core.Checks;
import io.flowkv.core.Jitter;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.FileIo;

import java.nio.file.Path;

/**
 * Configuration of one {@link AurStore}. Built with {@link #builder(Path)}; every value is checked
 * when {@link Builder#build()} runs, so a bad configuration fails before a store exists.
 */
public final class AurStoreOptions {
    public static final double DEFAULT_READ_BATCH_RATIO = 0.02;
    public static final double DEFAULT_MAX_SPACE_AMPLIFICATION = 1.5;
    public static final long DEFAULT_WRITE_BUFFER_LIMIT = 4L << 20;
    public static final long DEFAULT_PREFETCH_BUFFER_LIMIT = 16L << 20;
    public static final long DEFAULT_SEGMENT_SIZE = 64L << 20;
    public static final long DEFAULT_STAT_CACHE_BYTES = 16L << 20;

    /**
     * The least page cache of the stat table and frame chains: a quarter for the chains and a
     * quarter for the table's hash index, each at least what a hash index works with.
     */
    public static final long MIN_STAT_CACHE_BYTES = 4 * PagedHashIndex.MIN_CACHE_BYTES;

    private final Path directory;
    private final double readBatchRatio;
    private final double maxSpaceAmplification;
    private final long writeBufferLimit;
    private final long prefetchBufferLimit;
    private final long segmentSize;
    private final long statCacheBytes;
    private final TriggerTimePredictor predictor;
    private final FileIo fileIo;
    private final long jitterSeed;
    private final double jitterSpread;

    private AurStoreOptions(Builder b) {
        this.directory = Checks.checkNotNull("directory", b.directory);
        this.readBatchRatio = Checks.checkRange("readBatchRatio", b.readBatchRatio, 0.0, true, 1.0);
        this.maxSpaceAmplification =
                Checks.checkRange(
                        "maxSpaceAmplification", b.maxSpaceAmplification, 1.0, false, 1000.0);
        this.writeBufferLimit =
                Checks.checkRange("writeBufferLimit", b.writeBufferLimit, 1024, 1L << 40);
        this.prefetchBufferLimit =
                Checks.checkRange("prefetchBufferLimit", b.prefetchBufferLimit, 0, 1L << 40);
        this.segmentSize = Checks.checkRange("segmentSize", b.segmentSize, 4096, 1L << 39);
        this.statCacheBytes =
                Checks.checkRange(
                        "statCacheBytes", b.statCacheBytes, MIN_STAT_CACHE_BYTES, 1L << 40);
        this.predictor = Checks.checkNotNull("predictor", b.predictor);
        this.fileIo = Checks.checkNotNull("fileIo", b.fileIo);
        this.jitterSeed = b.jitterSeed;
        this.jitterSpread = Checks.checkRange("jitterSpread", b.jitterSpread, 0.0, true, 0.9);
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    public Path directory() {
        return directory;
    }

    /** Fraction of the live windows loaded with every prefetch miss; 0 disables prediction. */
    public double readBatchRatio() {
        return readBatchRatio;
    }

    /** Compaction runs once total data bytes / live data bytes exceed this (jittered below it). */
    public double maxSpaceAmplification() {
        return maxSpaceAmplification;
    }

    public long writeBufferLimit() {
        return writeBufferLimit;
    }

    public long prefetchBufferLimit() {
        return prefetchBufferLimit;
    }

    /** A data log segment is rolled over once it reaches this size. */
    public long segmentSize() {
        return segmentSize;
    }

    /**
     * Native memory for the cached pages of the window stat table and of the frame chains; the rest
     * of them is in scratch files, read back when touched.
     */
    public long statCacheBytes() {
        return statCacheBytes;
    }

    public TriggerTimePredictor predictor() {
        return predictor;
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

    Jitter newJitter() {
        return new Jitter(jitterSeed, jitterSpread);
    }

    /** Builder; setters only record values, {@link #build()} validates them. */
    public static final class Builder {
        private final Path directory;
        private double readBatchRatio = DEFAULT_READ_BATCH_RATIO;
        private double maxSpaceAmplification = DEFAULT_MAX_SPACE_AMPLIFICATION;
        private long writeBufferLimit = DEFAULT_WRITE_BUFFER_LIMIT;
        private long prefetchBufferLimit = DEFAULT_PREFETCH_BUFFER_LIMIT;
        private long segmentSize = DEFAULT_SEGMENT_SIZE;
        private long statCacheBytes = DEFAULT_STAT_CACHE_BYTES;
        private TriggerTimePredictor predictor = TriggerTimePredictor.sessionGap();
        private FileIo fileIo = FileIo.DEFAULT;
        private long jitterSeed;
        private double jitterSpread = Jitter.DEFAULT_SPREAD;

        private Builder(Path directory) {
            this.directory = directory;
        }

        public Builder readBatchRatio(double ratio) {
            this.readBatchRatio = ratio;
            return this;
        }

        public Builder maxSpaceAmplification(double msa) {
            this.maxSpaceAmplification = msa;
            return this;
        }

        public Builder writeBufferLimit(long bytes) {
            this.writeBufferLimit = bytes;
            return this;
        }

        public Builder prefetchBufferLimit(long bytes) {
            this.prefetchBufferLimit = bytes;
            return this;
        }

        public Builder segmentSize(long bytes) {
            this.segmentSize = bytes;
            return this;
        }

        public Builder statCacheBytes(long bytes) {
            this.statCacheBytes = bytes;
            return this;
        }

        public Builder predictor(TriggerTimePredictor predictor) {
            this.predictor = predictor;
            return this;
        }

        public Builder fileIo(FileIo fileIo) {
            this.fileIo = fileIo;
            return this;
        }

        public Builder jitterSeed(long seed) {
            this.jitterSeed = seed;
            return this;
        }

        public Builder jitterSpread(double spread) {
            this.jitterSpread = spread;
            return this;
        }

        public AurStoreOptions build() {
            return new AurStoreOptions(this);
        }
    }
}
