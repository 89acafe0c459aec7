package io.flowkv.core.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The one {@link FileIo} the tests of every store use to play a failing disk and to check for
 * leaked files.
 *
 * <p>Write faults hit the channels the stores write to, those from {@link #openForAppend}: every
 * {@code write}, {@code force} and {@code transferFrom} on them, and every {@code transferTo} whose
 * target is one of them, is one "write call". After {@link #failWritesAfter} the given number of
 * write calls succeed and every later one throws, as on a full disk, until {@link #heal}. Channels
 * from {@link #openForRead} never fail.
 *
 * <p>{@code transferTo} unwraps its target, so the kernel's zero-copy path is taken as in
 * production; {@link #transfers} counts those calls. {@link #openChannels} counts every channel
 * opened and not yet closed.
 */
public final class FaultInjectingFileIo implements FileIo {
    private static final int NO_FAULT = -1;

    /** Write calls that still succeed; 0: every write call fails; {@link #NO_FAULT}: none does. */
    private final AtomicInteger writesBeforeFailure = new AtomicInteger(NO_FAULT);

    /** Positional read calls that still succeed; {@link #NO_FAULT}: none fails. */
    private final AtomicInteger readsBeforeFailure = new AtomicInteger(NO_FAULT);

    private final AtomicInteger openChannels = new AtomicInteger();
    private final AtomicInteger transfers = new AtomicInteger();
    private final AtomicInteger forces = new AtomicInteger();
    private volatile boolean failTruncate;
    private volatile boolean failCreate;
    private volatile boolean skipSyncs;
    private volatile Predicate<Path> faultable = file -> true;

    /** Write calls from threads whose name starts with this wait for {@link #gate}; null: none. */
    private volatile String heldThreads;

    private volatile CountDownLatch gate;

    /** Write calls now waiting at the gate. */
    private final AtomicInteger held = new AtomicInteger();

    /**
     * Makes every write call from a thread whose name starts with {@code threadPrefix} wait until
     * {@link #releaseWrites} (a disk that stalls under a background writer).
     */
    public void holdWrites(String threadPrefix) {
        gate = new CountDownLatch(1);
        heldThreads = threadPrefix;
    }

    /** Lets the write calls held by {@link #holdWrites} go on; later ones are not held. */
    public void releaseWrites() {
        heldThreads = null;
        CountDownLatch g = gate;
        if (g != null) {
            g.countDown();
        }
    }

    /** Write calls waiting at the gate of {@link #holdWrites} now. */
    public int heldWrites() {
        return held.get();
    }

    /** Lets the next {@code n} write calls succeed, then fails every one until {@link #heal}. */
    public void failWritesAfter(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n=" + n + ", must be >= 0");
        }
        writesBeforeFailure.set(n);
    }

    /**
     * Lets the next {@code n} positional read calls succeed, then fails every one until {@link
     * #heal}.
     */
    public void failReadsAfter(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n=" + n + ", must be >= 0");
        }
        readsBeforeFailure.set(n);
    }

    /** Injects write faults only into the files {@code filter} accepts (all by default). */
    public void faultOnly(Predicate<Path> filter) {
        faultable = filter;
    }

    /** Fails every write call from now on until {@link #heal}. */
    public void failWrites() {
        failWritesAfter(0);
    }

    /** Fails every {@code truncate} until {@link #heal}: a rollback that cannot happen. */
    public void failTruncate() {
        failTruncate = true;
    }

    /** Fails {@link #openForAppend} until {@link #heal}: a file that cannot be created. */
    public void failCreate() {
        failCreate = true;
    }

    /** Ends every injected fault. */
    public void heal() {
        writesBeforeFailure.set(NO_FAULT);
        readsBeforeFailure.set(NO_FAULT);
        failTruncate = false;
        failCreate = false;
    }

    /**
     * Makes {@code force} return without syncing (its write fault still applies), for tests that
     * seal often and do not test durability.
     */
    public void skipSyncs() {
        skipSyncs = true;
    }

    public int openChannels() {
        return openChannels.get();
    }

    /** Calls of {@code FileChannel.force}: fsyncs. */
    public int forces() {
        return forces.get();
    }

    /** Calls of {@code FileChannel.transferTo}: the zero-copy path of compaction. */
    public int transfers() {
        return transfers.get();
    }

    @Override
    public FileChannel openForAppend(Path file) throws IOException {
        if (failCreate) {
            throw new IOException("injected: cannot create " + file);
        }
        return new Channel(FileIo.DEFAULT.openForAppend(file), file, true);
    }

    @Override
    public FileChannel openForRead(Path file) throws IOException {
        return new Channel(FileIo.DEFAULT.openForRead(file), file, false);
    }

    private void beforeWrite(Path file) throws IOException {
        String prefix = heldThreads;
        CountDownLatch g = gate;
        if (prefix != null && g != null && Thread.currentThread().getName().startsWith(prefix)) {
            held.incrementAndGet();
            try {
                g.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while a write to " + file + " was held", e);
            } finally {
                held.decrementAndGet();
            }
        }
        if (!faultable.test(file)) {
            return;
        }
        if (writesBeforeFailure.getAndUpdate(n -> n > 0 ? n - 1 : n) == 0) {
            throw new IOException("injected: no space left on device writing " + file);
        }
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

        private void beforeWrite() throws IOException {
            if (writable) {
                FaultInjectingFileIo.this.beforeWrite(file);
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
            beforeWrite();
            return delegate.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            beforeWrite();
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
            if (failTruncate) {
                throw new IOException("injected: truncate failed on " + file);
            }
            delegate.truncate(size);
            return this;
        }

        @Override
        public void force(boolean metaData) throws IOException {
            beforeWrite();
            forces.incrementAndGet();
            if (!skipSyncs) {
                delegate.force(metaData);
            }
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target)
                throws IOException {
            WritableByteChannel real = target;
            if (target instanceof Channel) {
                Channel channel = (Channel) target;
                channel.beforeWrite();
                real = channel.delegate;
            }
            transfers.incrementAndGet();
            return delegate.transferTo(position, count, real);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count)
                throws IOException {
            beforeWrite();
            return delegate.transferFrom(src, position, count);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            if (readsBeforeFailure.get() != NO_FAULT
                    && readsBeforeFailure.getAndUpdate(n -> n > 0 ? n - 1 : n) == 0) {
                throw new IOException("injected read fault at " + position);
            }
            return delegate.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            beforeWrite();
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
