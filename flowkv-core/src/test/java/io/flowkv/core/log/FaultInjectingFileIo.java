package io.flowkv.core.log;

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
 * A {@link FileIo} whose channels fail writes on demand: "the disk is full" after a number of write
 * calls, or from now on until healed. Counts open channels for leak checks.
 */
public final class FaultInjectingFileIo implements FileIo {
    private final AtomicInteger writesUntilFailure = new AtomicInteger(Integer.MAX_VALUE);
    private final AtomicInteger openChannels = new AtomicInteger();

    /** Fails every write call after the next {@code n} succeed. */
    public void failWritesAfter(int n) {
        writesUntilFailure.set(n);
    }

    public void heal() {
        writesUntilFailure.set(Integer.MAX_VALUE);
    }

    public int openChannels() {
        return openChannels.get();
    }

    @Override
    public FileChannel openForAppend(Path file) throws IOException {
        return track(FileIo.DEFAULT.openForAppend(file));
    }

    @Override
    public FileChannel openForRead(Path file) throws IOException {
        return track(FileIo.DEFAULT.openForRead(file));
    }

    private FileChannel track(FileChannel channel) {
        openChannels.incrementAndGet();
        return new Faulty(channel);
    }

    private void maybeFail() throws IOException {
        if (writesUntilFailure.get() != Integer.MAX_VALUE
                && writesUntilFailure.getAndDecrement() <= 0) {
            writesUntilFailure.set(0);
            throw new IOException("No space left on device (injected)");
        }
    }

    private final class Faulty extends FileChannel {
        private final FileChannel delegate;

        Faulty(FileChannel delegate) {
            this.delegate = delegate;
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
            delegate.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target)
                throws IOException {
            WritableByteChannel real =
                    target instanceof Faulty ? ((Faulty) target).delegate : target;
            if (target instanceof Faulty) {
                maybeFail();
            }
            return delegate.transferTo(position, count, real);
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
