package io.flowkv.core.aur;

import io.flowkv.core.Checks;
import io.flowkv.core.StoreOptions;
import io.flowkv.core.index.PagedHashIndex;

import java.nio.file.Path;

/**
 * Configuration of one {@link AurStore}: the settings of every store plus prediction, compaction,
 * prefetch buffer, log size and stat cache. Built with {@link #builder(Path)}; every value is
 * checked when it is set, so a bad configuration fails before a store exists.
 */
public final class AurStoreOptions extends StoreOptions {
    public static final double DEFAULT_READ_BATCH_RATIO = 0.02;
    public static final double DEFAULT_MAX_SPACE_AMPLIFICATION = 1.5;
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 4L << 20;
    public static final long MIN_WRITE_BUFFER_BYTES = 1024;
    public static final long DEFAULT_PREFETCH_BUFFER_LIMIT = 16L << 20;
    public static final long DEFAULT_SEGMENT_SIZE = 64L << 20;
    public static final long DEFAULT_STAT_CACHE_BYTES = 16L << 20;

    /**
     * The least page cache of the stat table and frame chains: a quarter for the chains and a
     * quarter for the table's hash index, each at least what a hash index works with.
     */
    public static final long MIN_STAT_CACHE_BYTES = 4 * PagedHashIndex.MIN_CACHE_BYTES;

    private final double readBatchRatio;
    private final double maxSpaceAmplification;
    private final long prefetchBufferLimit;
    private final long segmentSize;
    private final long statCacheBytes;
    private final TriggerTimePredictor predictor;
    private final boolean openDataLogsOnRestore;
    private final boolean readAhead;
    private final boolean backgroundFlush;

    private AurStoreOptions(Builder b) {
        super(b);
        this.readBatchRatio = b.readBatchRatio;
        this.maxSpaceAmplification = b.maxSpaceAmplification;
        this.prefetchBufferLimit = b.prefetchBufferLimit;
        this.segmentSize = b.segmentSize;
        this.statCacheBytes = b.statCacheBytes;
        this.predictor = b.predictor;
        this.openDataLogsOnRestore = b.openDataLogsOnRestore;
        this.readAhead = b.readAhead;
        this.backgroundFlush = b.backgroundFlush;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    /** Whether the prefetch's bets are read on another thread ahead of the misses. */
    public boolean readAhead() {
        return readAhead;
    }

    /**
     * Whether a flush writes its data frames on another thread while appends go on into a second
     * write buffer.
     */
    public boolean backgroundFlush() {
        return backgroundFlush;
    }

    /** Fraction of the live windows loaded with every prefetch miss; 0 disables prediction. */
    public double readBatchRatio() {
        return readBatchRatio;
    }

    /** Compaction runs once total data bytes / live data bytes exceed this (jittered below it). */
    public double maxSpaceAmplification() {
        return maxSpaceAmplification;
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

    /**
     * Whether a restore opens every data log at once, so that a missing file or a bad header fails
     * the restore; otherwise each is opened (and its header checked) at its first read.
     */
    public boolean openDataLogsOnRestore() {
        return openDataLogsOnRestore;
    }

    /** Builder; each setter checks its argument. */
    public static final class Builder extends StoreOptions.Builder<Builder, AurStoreOptions> {
        private double readBatchRatio = DEFAULT_READ_BATCH_RATIO;
        private double maxSpaceAmplification = DEFAULT_MAX_SPACE_AMPLIFICATION;
        private long prefetchBufferLimit = DEFAULT_PREFETCH_BUFFER_LIMIT;
        private long segmentSize = DEFAULT_SEGMENT_SIZE;
        private long statCacheBytes = DEFAULT_STAT_CACHE_BYTES;
        private TriggerTimePredictor predictor = TriggerTimePredictor.sessionGap();
        private boolean openDataLogsOnRestore = true;
        private boolean readAhead = true;
        private boolean backgroundFlush = true;

        private Builder(Path directory) {
            super(directory, DEFAULT_WRITE_BUFFER_BYTES, MIN_WRITE_BUFFER_BYTES);
        }

        public Builder readBatchRatio(double ratio) {
            this.readBatchRatio = Checks.checkRange("readBatchRatio", ratio, 0.0, true, 1.0);
            return this;
        }

        /**
         * true (the default): once the windows of the last batch are half served, the next windows
         * nearest to their trigger are read on another thread; false: bets are read only with the
         * read that missed (FlowKV §4.2).
         */
        public Builder readAhead(boolean readAhead) {
            this.readAhead = readAhead;
            return this;
        }

        /**
         * true (the default): a flush lays out its frames, writes the index entries and updates the
         * windows on the calling thread, then writes the data frames on another thread while
         * appends go on into a second write buffer; false: the calling thread writes them too.
         */
        public Builder backgroundFlush(boolean inBackground) {
            this.backgroundFlush = inBackground;
            return this;
        }

        public Builder maxSpaceAmplification(double msa) {
            this.maxSpaceAmplification =
                    Checks.checkRange("maxSpaceAmplification", msa, 1.0, false, 1000.0);
            return this;
        }

        public Builder prefetchBufferLimit(long bytes) {
            this.prefetchBufferLimit =
                    Checks.checkRange("prefetchBufferLimit", bytes, 0, MAX_WRITE_BUFFER_BYTES);
            return this;
        }

        public Builder segmentSize(long bytes) {
            this.segmentSize = Checks.checkRange("segmentSize", bytes, 4096, 1L << 39);
            return this;
        }

        public Builder statCacheBytes(long bytes) {
            this.statCacheBytes =
                    Checks.checkRange("statCacheBytes", bytes, MIN_STAT_CACHE_BYTES, 1L << 40);
            return this;
        }

        public Builder predictor(TriggerTimePredictor predictor) {
            this.predictor = Checks.checkNotNull("predictor", predictor);
            return this;
        }

        /**
         * false: a restore opens no data log; each opens at its first read (for a caller that
         * checked the files itself, or brings them in while the store runs).
         */
        public Builder openDataLogsOnRestore(boolean open) {
            this.openDataLogsOnRestore = open;
            return this;
        }

        @Override
        public AurStoreOptions build() {
            return new AurStoreOptions(this);
        }
    }
}
