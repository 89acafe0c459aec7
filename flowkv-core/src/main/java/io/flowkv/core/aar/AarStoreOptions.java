package io.flowkv.core.aar;

import io.flowkv.core.Checks;
import io.flowkv.core.Jitter;
import io.flowkv.core.log.FileIo;

import java.nio.file.Path;

/**
 * Configuration of one {@link AarStore}. Every value is validated when {@link Builder#build()}
 * runs, so a bad configuration fails when the job is set up, not at the first flush.
 */
public final class AarStoreOptions {
    public static final int DEFAULT_PARTITIONS = 2;
    public static final int MAX_PARTITIONS = 1024;
    public static final long DEFAULT_WRITE_BUFFER_BYTES = 64L << 20;
    public static final int DEFAULT_IO_BUFFER_BYTES = 64 << 10;
    public static final int MIN_IO_BUFFER_BYTES = 4 << 10;
    public static final int MAX_IO_BUFFER_BYTES = 64 << 20;

    private final Path directory;
    private final int partitions;
    private final long writeBufferBytes;
    private final int ioBufferBytes;
    private final FileIo fileIo;
    private final long jitterSeed;
    private final double jitterSpread;

    private AarStoreOptions(Builder b) {
        this.directory = Checks.checkNotNull("directory", b.directory);
        this.partitions = Checks.checkRange("partitions", b.partitions, 1, MAX_PARTITIONS);
        this.writeBufferBytes = Checks.checkPositive("write buffer bytes", b.writeBufferBytes);
        this.ioBufferBytes =
                Checks.checkRange(
                        "I/O buffer bytes",
                        b.ioBufferBytes,
                        MIN_IO_BUFFER_BYTES,
                        MAX_IO_BUFFER_BYTES);
        this.fileIo = Checks.checkNotNull("fileIo", b.fileIo);
        this.jitterSeed = b.jitterSeed;
        this.jitterSpread = Checks.checkRange("jitter spread", b.jitterSpread, 0.0, true, 0.9);
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    public Path directory() {
        return directory;
    }

    /** Partitions per window: the unit of gradual state loading. */
    public int partitions() {
        return partitions;
    }

    /** Write buffer limit; the effective limit is jittered down by up to the jitter spread. */
    public long writeBufferBytes() {
        return writeBufferBytes;
    }

    /** Staging buffer for appends and the read buffer for loading partitions. */
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

    Jitter newJitter() {
        return new Jitter(jitterSeed, jitterSpread);
    }

    /** Builder with the defaults of the paper's evaluation where they apply (2 partitions). */
    public static final class Builder {
        private final Path directory;
        private int partitions = DEFAULT_PARTITIONS;
        private long writeBufferBytes = DEFAULT_WRITE_BUFFER_BYTES;
        private int ioBufferBytes = DEFAULT_IO_BUFFER_BYTES;
        private FileIo fileIo = FileIo.DEFAULT;
        private long jitterSeed;
        private double jitterSpread = Jitter.DEFAULT_SPREAD;

        private Builder(Path directory) {
            this.directory = directory;
        }

        public Builder partitions(int partitions) {
            this.partitions = partitions;
            return this;
        }

        public Builder writeBufferBytes(long bytes) {
            this.writeBufferBytes = bytes;
            return this;
        }

        public Builder ioBufferBytes(int bytes) {
            this.ioBufferBytes = bytes;
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

        public AarStoreOptions build() {
            return new AarStoreOptions(this);
        }
    }
}
