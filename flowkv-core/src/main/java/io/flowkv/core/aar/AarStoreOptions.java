package io.flowkv.core.aar;

import io.flowkv.core.Checks;
import io.flowkv.core.StoreOptions;

import java.nio.file.Path;

/**
 * Configuration of one {@link AarStore}: the settings of every store plus partitions, I/O buffer
 * and partitioner. Every value is checked when it is set, so a bad configuration fails when the job
 * is set up, not at the first flush.
 */
public final class AarStoreOptions extends StoreOptions {
    public static final int DEFAULT_PARTITIONS = 2;
    public static final int MAX_PARTITIONS = 1024;
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 64L << 20;
    public static final int DEFAULT_IO_BUFFER_BYTES = 64 << 10;
    public static final int MIN_IO_BUFFER_BYTES = 4 << 10;
    public static final int MAX_IO_BUFFER_BYTES = 64 << 20;

    private final int partitions;
    private final int ioBufferBytes;
    private final KeyPartitioner partitioner;
    private final boolean verifyOnRestore;
    private final boolean backgroundFlush;

    private AarStoreOptions(Builder b) {
        super(b);
        this.partitions = b.partitions;
        this.ioBufferBytes = b.ioBufferBytes;
        this.partitioner = b.partitioner;
        this.verifyOnRestore = b.verifyOnRestore;
        this.backgroundFlush = b.backgroundFlush;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    /** Partitions per window: the unit of gradual state loading. */
    public int partitions() {
        return partitions;
    }

    /** Staging buffer for appends and the read buffer for loading partitions. */
    public int ioBufferBytes() {
        return ioBufferBytes;
    }

    /** How keys map to partitions (by hash unless the engine knows its read order). */
    public KeyPartitioner partitioner() {
        return partitioner;
    }

    /**
     * Whether {@link AarStore#restore} reads every frame of the restored segments, so that
     * corruption surfaces at restore time (the default). Off where the caller has just checked
     * every file whole (a checkpoint restore checks each against its recorded CRC32C); a frame is
     * still checked whenever it is read.
     */
    public boolean verifyOnRestore() {
        return verifyOnRestore;
    }

    /**
     * Whether a full write buffer is written to the segments on a background thread ({@code
     * flowkv-aar-flush-N}, shared by the JVM's AAR stores) while appends go on (the default),
     * instead of on the appending thread. Explicit flushes, seals, reads and removes wait for it.
     */
    public boolean backgroundFlush() {
        return backgroundFlush;
    }

    /** Builder with the defaults of the paper's evaluation where they apply (2 partitions). */
    public static final class Builder extends StoreOptions.Builder<Builder, AarStoreOptions> {
        private int partitions = DEFAULT_PARTITIONS;
        private int ioBufferBytes = DEFAULT_IO_BUFFER_BYTES;
        private KeyPartitioner partitioner = KeyPartitioner.BY_HASH;
        private boolean verifyOnRestore = true;
        private boolean backgroundFlush = true;

        private Builder(Path directory) {
            super(directory, DEFAULT_WRITE_BUFFER_BYTES, 1);
        }

        public Builder partitions(int partitions) {
            this.partitions = Checks.checkRange("partitions", partitions, 1, MAX_PARTITIONS);
            return this;
        }

        public Builder ioBufferBytes(int bytes) {
            this.ioBufferBytes =
                    Checks.checkRange(
                            "ioBufferBytes", bytes, MIN_IO_BUFFER_BYTES, MAX_IO_BUFFER_BYTES);
            return this;
        }

        public Builder partitioner(KeyPartitioner partitioner) {
            this.partitioner = Checks.checkNotNull("partitioner", partitioner);
            return this;
        }

        public Builder verifyOnRestore(boolean verify) {
            this.verifyOnRestore = verify;
            return this;
        }

        public Builder backgroundFlush(boolean inBackground) {
            this.backgroundFlush = inBackground;
            return this;
        }

        @Override
        public AarStoreOptions build() {
            return new AarStoreOptions(this);
        }
    }
}
