package io.flowkv.flink.restore;

import io.flowkv.core.log.FileIo;

import org.apache.flink.annotation.Internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The file I/O of a keyed backend's stores while a restore's files are still arriving: the restore
 * hands it the files to fetch and returns; threads of its own fetch them in the checkpoint's order,
 * and a store that opens, deletes or moves a file not fetched yet waits for it, or fetches it at
 * once on its own thread when no fetch thread has taken it yet. Every other call goes straight to
 * the file I/O underneath.
 *
 * <p>The restore adds the files ({@link #add}) before it reopens the stores, and starts the fetch
 * threads ({@link #start}) once they are open, so that the files a reopen needs (AUR index logs)
 * are fetched by the reopen itself, without fetch threads competing for the cores.
 *
 * <p>So a restored job processes records while the files it does not need yet are copied: an AAR
 * store reads a window's segments only when the window fires, and appends go to new files.
 *
 * <p>A fetch that fails (a corrupt or unreadable checkpoint file) fails every later access to that
 * file, naming it, and {@link #checkFailed} (which the next checkpoint calls, so that no checkpoint
 * builds on a file that could not be restored). {@link #close} stops the fetch threads and waits
 * for them before the backend deletes its directory.
 */
@Internal
public final class RestoreFetch implements FileIo, Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(RestoreFetch.class);

    /** Copies one file to its place; returns early with an exception once {@code stop} says so. */
    @FunctionalInterface
    public interface Copy {
        void run(BooleanSupplier stop) throws IOException;
    }

    /** A file to fetch: where it goes, and how to copy it there. */
    public record File(Path target, Copy copy) {}

    private static final int NEW = 0;
    private static final int TAKEN = 1;
    private static final int DISCARDED = 2;

    /** A file not yet fetched, or fetched with a failure. */
    private static final class Pending {
        final File file;
        final AtomicInteger state = new AtomicInteger(NEW);
        final CompletableFuture<Void> done = new CompletableFuture<>();

        Pending(File file) {
            this.file = file;
        }
    }

    private final FileIo delegate;

    /** Files not fetched yet, and those whose fetch failed, by target path. */
    private final Map<Path, Pending> pending = new ConcurrentHashMap<>();

    /** True while {@link #pending} may hold anything: the fast path when false. */
    private volatile boolean active;

    private volatile boolean closed;

    /** Files added and not yet taken by a fetch thread, in order. */
    private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();

    private volatile int added;

    /** When {@link #start} started the fetch threads (0: not started), and the restore's name. */
    private volatile long startedNanos;

    private volatile String label;

    private final AtomicBoolean reported = new AtomicBoolean();
    private final AtomicBoolean warnedNice = new AtomicBoolean();
    private final AtomicReference<IOException> failure = new AtomicReference<>();
    private final List<Thread> threads = new ArrayList<>();

    public RestoreFetch(FileIo delegate) {
        this.delegate = delegate;
    }

    /**
     * Takes {@code files} as this restore's, in their order: from now on an access to one waits for
     * it or fetches it ({@link #await}). Nothing is fetched in the background before {@link
     * #start}.
     */
    public synchronized void add(List<File> files) {
        if (closed) {
            throw new IllegalStateException("RestoreFetch is closed");
        }
        for (File file : files) {
            Pending p = new Pending(file);
            if (pending.putIfAbsent(key(file.target()), p) != null) {
                throw new IllegalArgumentException("File fetched twice: " + file.target());
            }
            queue.add(p);
            added++;
        }
        if (!pending.isEmpty()) {
            active = true;
        }
    }

    /**
     * Starts fetching the files added and not fetched yet on up to {@code threadCount} threads, in
     * their order. {@code label} names the restore in the log.
     */
    public void start(int threadCount, String label) {
        start(threadCount, label, 0);
    }

    /**
     * As {@link #start(int, String)}, the fetch threads at Linux nice value {@code nice} (0: the
     * TaskManager's own priority): while the subtask runs, a fetch in the background then takes
     * only the CPU its threads leave. A file a store needs and no fetch thread has taken is fetched
     * on the store's own thread, at its priority. Where the nice value cannot be set, the threads
     * run at the TaskManager's priority and one warning says why.
     */
    public synchronized void start(int threadCount, String label, int nice) {
        // Here, not on the fetch threads, where it would end each thread before its first file.
        ThreadNice.check(nice);
        if (closed || queue.isEmpty()) {
            return;
        }
        this.label = label;
        startedNanos = System.nanoTime();
        int count = Math.min(threadCount, queue.size());
        AtomicInteger running = new AtomicInteger(count);
        for (int i = 0; i < count; i++) {
            Thread thread =
                    new Thread(
                            () -> {
                                if (nice > 0) {
                                    lowerPriority(nice);
                                }
                                Pending next;
                                while (!closed && (next = queue.poll()) != null) {
                                    fetchIfNew(next);
                                }
                                if (running.decrementAndGet() == 0
                                        && !closed
                                        && failure.get() != null) {
                                    LOG.warn(
                                            "{}: the fetch threads finished {} ms after they"
                                                    + " started; {} of {} files could not be"
                                                    + " fetched",
                                            label,
                                            (System.nanoTime() - startedNanos) / 1_000_000,
                                            pending.values().stream()
                                                    .filter(p -> p.done.isCompletedExceptionally())
                                                    .count(),
                                            added);
                                }
                            },
                            "flowkv-restore-fetch-" + (threads.size() + 1));
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
    }

    /** Sets this fetch thread's nice value; warns once per restore where it cannot. */
    private void lowerPriority(int nice) {
        String problem = ThreadNice.lowerCurrentThread(nice);
        if (problem != null && warnedNice.compareAndSet(false, true)) {
            LOG.warn(
                    "{}: the fetch threads run at the TaskManager's priority, not at nice {}: {}",
                    label,
                    nice,
                    problem);
        }
    }

    /** Fetches {@code p} on this thread if nobody took it. */
    private void fetchIfNew(Pending p) {
        if (!p.state.compareAndSet(NEW, TAKEN)) {
            return;
        }
        try {
            p.file.copy().run(() -> closed);
            forget(p);
            p.done.complete(null);
        } catch (IOException | RuntimeException e) {
            IOException io = e instanceof IOException ioe ? ioe : new IOException(e.toString(), e);
            if (!closed) {
                failure.compareAndSet(null, io);
                LOG.error("Could not fetch restored file {}", p.file.target(), io);
            }
            p.done.completeExceptionally(io);
        }
    }

    /**
     * Takes {@code p} off the pending files; with none left, accesses take the fast path, and the
     * time since the fetch threads started is logged once, whichever thread fetched the last file.
     */
    private void forget(Pending p) {
        pending.remove(key(p.file.target()), p);
        if (pending.isEmpty()) {
            active = false;
            long started = startedNanos;
            if (started != 0 && !closed && reported.compareAndSet(false, true)) {
                LOG.info(
                        "{}: {} files in place {} ms after the fetch threads started",
                        label,
                        added,
                        (System.nanoTime() - started) / 1_000_000);
            }
        }
    }

    private static Path key(Path file) {
        return file.toAbsolutePath().normalize();
    }

    /**
     * Returns once {@code file} is in place, if it is one this restore fetches: fetches it on this
     * thread when no fetch thread has taken it yet. Throws the failure of its fetch.
     */
    public void await(Path file) throws IOException {
        if (!active) {
            return;
        }
        Pending p = pending.get(key(file));
        if (p != null) {
            fetchIfNew(p);
            waitFor(p);
        }
    }

    private void waitFor(Pending p) throws IOException {
        try {
            p.done.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(
                    "Interrupted while waiting for restored file " + p.file.target());
        } catch (ExecutionException e) {
            throw new IOException(
                    "Restored file "
                            + p.file.target()
                            + " could not be fetched from the checkpoint: "
                            + e.getCause().getMessage(),
                    e.getCause());
        }
    }

    /** Waits for every file of this restore (the restore then behaves as if fetched up front). */
    public void awaitAll() throws IOException {
        for (Pending p : List.copyOf(pending.values())) {
            await(p.file.target());
        }
    }

    /** Throws the first failure of a fetch thread, if any: a checkpoint must not build on it. */
    public void checkFailed() throws IOException {
        IOException e = failure.get();
        if (e != null) {
            throw new IOException(
                    "A file of the restored checkpoint could not be fetched: " + e.getMessage(), e);
        }
    }

    /** Files not fetched yet (including failed ones). */
    public int pendingFiles() {
        return pending.size();
    }

    /**
     * Stops the fetch threads (a copy under way stops at its next buffer) and waits for them; files
     * not fetched stay missing. Nothing is fetched after this.
     */
    @Override
    public void close() {
        List<Thread> started;
        synchronized (this) {
            closed = true;
            started = List.copyOf(threads);
        }
        for (Pending p : pending.values()) {
            if (p.state.compareAndSet(NEW, DISCARDED)) {
                p.done.completeExceptionally(new IOException("the backend was closed"));
            }
        }
        boolean interrupted = false;
        for (Thread thread : started) {
            while (thread.isAlive()) {
                try {
                    thread.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ FileIo

    @Override
    public FileChannel openForAppend(Path file) throws IOException {
        await(file);
        return delegate.openForAppend(file);
    }

    @Override
    public FileChannel openForRead(Path file) throws IOException {
        await(file);
        return delegate.openForRead(file);
    }

    @Override
    public void delete(Path file) throws IOException {
        if (active) {
            Pending p = pending.get(key(file));
            if (p != null) {
                if (p.state.compareAndSet(NEW, DISCARDED)) {
                    // Not needed any more: not fetched at all.
                    p.done.completeExceptionally(new IOException("deleted before it was fetched"));
                } else {
                    try {
                        waitFor(p);
                    } catch (IOException ignored) {
                        // Deleted anyway: what the fetch left of it goes too.
                    }
                }
                forget(p);
            }
        }
        delegate.delete(file);
    }

    @Override
    public void moveAtomically(Path from, Path to) throws IOException {
        await(from);
        await(to);
        delegate.moveAtomically(from, to);
    }
}
