package io.flowkv.core.aar;

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
 * A {@link FileIo} that counts open channels (leak checks) and fails writes, truncates, syncs or
 * file creation on demand, as a full disk would.
 */
final class TrackingFileIo implements FileIo {
    volatile boolean failWrites;
    volatile boolean failTruncate;
    volatile boolean failCreate;

    /** Lets this many more write calls succeed before {@link #failWrites} applies. */
    volatile int writesBeforeFailure;

    final Set<FileChannel> open = ConcurrentHashMap.newKeySet();

    @Override
    public FileChannel openForAppend(Path file) throws IOException {
        if (failCreate) {
            throw new IOException("injected: cannot create " + file);
        }
        return track(FileIo.DEFAULT.openForAppend(file));
    }

    @Override
    public FileChannel openForRead(Path file) throws IOException {
        return track(FileIo.DEFAULT.openForRead(file));
    }

    void healthy() {
        failWrites = false;
        failTruncate = false;
        failCreate = false;
        writesBeforeFailure = 0;
    }

    private FileChannel track(FileChannel channel) {
        FileChannel wrapped = new Faulty(channel);
        open.add(wrapped);
        return wrapped;
    }

    private void checkWrite() throws IOException {
        if (failWrites) {
            if (writesBeforeFailure > 0) {
                writesBeforeFailure--;
                return;
            }
            throw new IOException("injected: no space left on device");
        }
    }

    private final class Faulty extends FileChannel {
        private final FileChannel d;

        Faulty(FileChannel d) {
            this.d = d;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return d.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return d.read(dsts, offset, length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            checkWrite();
            return d.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            checkWrite();
            return d.write(srcs, offset, length);
        }

        @Override
        public long position() throws IOException {
            return d.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            d.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return d.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            if (failTruncate) {
                throw new IOException("injected: truncate failed");
            }
            d.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            checkWrite();
            d.force(metaData);
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target)
                throws IOException {
            return d.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count)
                throws IOException {
            checkWrite();
            return d.transferFrom(src, position, count);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return d.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            checkWrite();
            return d.write(src, position);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return d.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return d.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return d.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            open.remove(this);
            d.close();
        }
    }
}
