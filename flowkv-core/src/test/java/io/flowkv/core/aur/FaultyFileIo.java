package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link FileIo} whose channels can be told to fail every write, sync and transfer (a full disk)
 * and which counts channels left open, for leak checks.
 */
final class FaultyFileIo implements FileIo {
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();
    private volatile boolean failWrites;
    private volatile int writesUntilFailure = -1;
    private volatile int transfers;

    void failWrites(boolean fail) {
        this.failWrites = fail;
        this.writesUntilFailure = -1;
    }

    /** Lets {@code n} more write calls succeed, then fails all until {@link #failWrites} false. */
    void failAfterWrites(int n) {
        this.writesUntilFailure = n;
    }

    /** Calls of {@code FileChannel.transferTo}: the zero-copy path of compaction. */
    int transfers() {
        return transfers;
    }

    int openChannels() {
        return open.size();
    }

    @Override
    public FileChannel openForAppend(Path file) throws IOException {
        return track(FileIo.DEFAULT.openForAppend(file), file);
    }

    @Override
    public FileChannel openForRead(Path file) throws IOException {
        return track(FileIo.DEFAULT.openForRead(file), file);
    }

    private FileChannel track(FileChannel channel, Path file) {
        Channel c = new Channel(channel, file);
        open.add(c);
        return c;
    }

    private void checkWrite(Path file) throws IOException {
        if (writesUntilFailure == 0) {
            failWrites = true;
            writesUntilFailure = -1;
        } else if (writesUntilFailure > 0) {
            writesUntilFailure--;
        }
        if (failWrites) {
            throw new IOException("injected failure writing " + file);
        }
    }

    private final class Channel extends FileChannel {
        private final FileChannel delegate;
        private final Path file;

        Channel(FileChannel delegate, Path file) {
            this.delegate = delegate;
            this.file = file;
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
            checkWrite(file);
            return delegate.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            checkWrite(file);
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
            checkWrite(file);
            delegate.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target)
                throws IOException {
            checkWrite(file);
            transfers++;
            // Unwrap so the kernel's zero-copy path is taken, as in production.
            WritableByteChannel t =
                    target instanceof Channel ? ((Channel) target).delegate : target;
            return delegate.transferTo(position, count, t);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count)
                throws IOException {
            checkWrite(file);
            return delegate.transferFrom(src, position, count);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return delegate.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            checkWrite(file);
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
            open.remove(this);
            delegate.close();
        }
    }
}
