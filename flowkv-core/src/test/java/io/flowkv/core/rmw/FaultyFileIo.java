package io.flowkv.core.rmw;

import io.flowkv.core.log.FileIo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link FileIo} whose writable channels throw while {@link #failWrites} is set, and which counts
 * open channels so tests can check that a closed store left none behind. With {@link #wrapWriters}
 * off, writable channels are plain JDK ones (so {@code transferTo} between files takes the kernel's
 * zero-copy path) and only read channels are counted.
 */
final class FaultyFileIo implements FileIo {
    volatile boolean failWrites;

    /** When >= 0: that many more writes succeed, then every write fails. */
    volatile int writesBeforeFailure = -1;

    /** Off: {@code force} does nothing, for tests that seal often and do not test durability. */
    volatile boolean syncs = true;

    final boolean wrapWriters;
    final AtomicInteger openChannels = new AtomicInteger();

    FaultyFileIo() {
        this(true);
    }

    FaultyFileIo(boolean wrapWriters) {
        this.wrapWriters = wrapWriters;
    }

    @Override
    public FileChannel openForAppend(Path file) throws IOException {
        FileChannel channel = FileIo.DEFAULT.openForAppend(file);
        return wrapWriters ? new Channel(channel, file, true) : channel;
    }

    @Override
    public FileChannel openForRead(Path file) throws IOException {
        return new Channel(FileIo.DEFAULT.openForRead(file), file, false);
    }

    private final class Channel extends FileChannel {
        private final FileChannel delegate;
        private final Path file;
        private final boolean writable;

        Channel(FileChannel delegate, Path file, boolean writable) {
            this.delegate = delegate;
            this.file = file;
            this.writable = writable;
            openChannels.incrementAndGet();
        }

        private void maybeFail() throws IOException {
            if (!writable) {
                return;
            }
            if (writesBeforeFailure > 0) {
                writesBeforeFailure--;
            } else if (failWrites || writesBeforeFailure == 0) {
                throw new IOException("injected write failure on " + file);
            }
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return delegate.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return delegate.read(dsts, offset, length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            maybeFail();
            return delegate.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            maybeFail();
            return delegate.write(srcs, offset, length);
        }

        @Override
        public long position() throws IOException {
            return delegate.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            delegate.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return delegate.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            delegate.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            maybeFail();
            if (syncs) {
                delegate.force(metaData);
            }
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target)
                throws IOException {
            return delegate.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count)
                throws IOException {
            maybeFail();
            return delegate.transferFrom(src, position, count);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return delegate.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            maybeFail();
            return delegate.write(src, position);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return delegate.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return delegate.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return delegate.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            openChannels.decrementAndGet();
            delegate.close();
        }
    }
}
