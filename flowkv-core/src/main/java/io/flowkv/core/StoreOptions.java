package io.flowkv.core;

import io.flowkv.core.log.FileIo;

import java.nio.file.Path;

/**
 * What configures every store: its directory, its write buffer limit, its file I/O and the jitter
 * of its thresholds. Each store's options add their own settings. Setters check their argument and
 * fail with the setting's name, the bad value and the allowed range.
 */
public abstract class StoreOptions {
    /** The largest write buffer limit any store accepts. */
    public static final long MAX_WRITE_BUFFER_BYTES = 1L << 40;

    private final Path directory;
    private final long writeBufferBytes;
    private final FileIo fileIo;
    private final long jitterSeed;
    private final double jitterSpread;

    protected StoreOptions(Builder<?, ?> b) {
        this.directory = b.directory;
        this.writeBufferBytes = b.writeBufferBytes;
        this.fileIo = b.fileIo;
        this.jitterSeed = b.jitterSeed;
        this.jitterSpread = b.jitterSpread;
    }

    /** The directory holding every file of the store. */
    public Path directory() {
        return directory;
    }

    /**
     * Bytes the write buffer may hold before it is flushed; each store instance jitters the limit
     * down by up to {@link #jitterSpread()}.
     */
    public long writeBufferBytes() {
        return writeBufferBytes;
    }

    public FileIo fileIo() {
        return fileIo;
    }

    public long jitterSeed() {
        return jitterSeed;
    }

    /**
     * How far below the configured limits the thresholds of an instance may be (see {@link
     * Jitter}).
     */
    public double jitterSpread() {
        return jitterSpread;
    }

    /** The jitter of a store opened with these options. */
    public Jitter newJitter() {
        return new Jitter(jitterSeed, jitterSpread);
    }

    /**
     * The settings every store has.
     *
     * @param <B> the store's builder
     * @param <O> the store's options
     */
    public abstract static class Builder<B extends Builder<B, O>, O extends StoreOptions> {
        private final Path directory;
        private final long minWriteBufferBytes;
        private long writeBufferBytes;
        private FileIo fileIo = FileIo.DEFAULT;
        private long jitterSeed;
        private double jitterSpread = Jitter.DEFAULT_SPREAD;

        protected Builder(Path directory, long defaultWriteBufferBytes, long minWriteBufferBytes) {
            this.directory = Checks.checkNotNull("directory", directory);
            this.writeBufferBytes = defaultWriteBufferBytes;
            this.minWriteBufferBytes = minWriteBufferBytes;
        }

        public B writeBufferBytes(long bytes) {
            this.writeBufferBytes =
                    Checks.checkRange(
                            "writeBufferBytes", bytes, minWriteBufferBytes, MAX_WRITE_BUFFER_BYTES);
            return self();
        }

        public B fileIo(FileIo io) {
            this.fileIo = Checks.checkNotNull("fileIo", io);
            return self();
        }

        /** Seeds the jitter, so that instances opened with different seeds differ. */
        public B jitterSeed(long seed) {
            this.jitterSeed = seed;
            return self();
        }

        /** 0 turns jitter off (thresholds are then exactly the configured ones). */
        public B jitterSpread(double spread) {
            this.jitterSpread = Checks.checkRange("jitterSpread", spread, 0.0, true, 0.9);
            return self();
        }

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }

        /** The options, after checking the settings that depend on each other. */
        public abstract O build();
    }
}
