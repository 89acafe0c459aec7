package io.flowkv.flink.restore;

import io.flowkv.core.log.FileIo;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link RestoreFetch}: files arrive in the background; a store touching one waits for it or
 * fetches it itself; deletes, failures and close.
 */
class RestoreFetchTest {
    @TempDir Path dir;

    private final List<RestoreFetch> open = new ArrayList<>();

    /** Names of the threads that copied each file. */
    private final ConcurrentHashMap<Path, String> copiedBy = new ConcurrentHashMap<>();

    @AfterEach
    void close() {
        open.forEach(RestoreFetch::close);
    }

    private RestoreFetch fetch(FileIo io) {
        RestoreFetch fetch = new RestoreFetch(io);
        open.add(fetch);
        return fetch;
    }

    /** A file whose copy writes {@code content}, recording the thread, after {@code gate}. */
    private RestoreFetch.File file(String name, String content, CountDownLatch gate) {
        Path target = dir.resolve(name);
        return new RestoreFetch.File(
                target,
                stop -> {
                    try {
                        if (!gate.await(30, TimeUnit.SECONDS)) {
                            throw new IOException("gate never opened");
                        }
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                    copiedBy.put(target, Thread.currentThread().getName());
                    Files.writeString(target, content);
                });
    }

    /**
     * Waits until the fetch threads have fetched every file, without fetching any on this thread
     * (as {@link RestoreFetch#awaitAll} would, for a file no thread took yet).
     */
    private static void awaitFetchThreads(RestoreFetch fetch) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (fetch.pendingFiles() > 0) {
            assertThat(System.nanoTime()).as("fetch threads done in 30 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void shouldFetchEveryFileInTheBackground() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        CountDownLatch open = new CountDownLatch(0);
        List<RestoreFetch.File> files = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            files.add(file("f" + i, "content " + i, open));
        }
        fetch.add(files);
        fetch.start(3, "test");
        awaitFetchThreads(fetch);
        fetch.awaitAll();
        assertThat(fetch.pendingFiles()).isZero();
        for (int i = 0; i < 20; i++) {
            assertThat(Files.readString(dir.resolve("f" + i))).isEqualTo("content " + i);
        }
        assertThat(copiedBy.values()).allMatch(t -> t.startsWith("flowkv-restore-fetch-"));
        fetch.checkFailed();
    }

    @Test
    void shouldFetchInTheBackgroundAtTheNiceValueGivenAndOnTheNeedingThreadAtItsOwn()
            throws Exception {
        assumeTrue(
                ThreadNice.lowerCurrentThreadPossible(),
                "per-thread nice values need Linux's /proc/thread-self and renice");
        int own = ThreadNice.current();
        ConcurrentHashMap<Path, Integer> niceOf = new ConcurrentHashMap<>();
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch firstTaken = new CountDownLatch(1);
        List<RestoreFetch.File> files = new ArrayList<>();
        for (String name : new String[] {"first", "second"}) {
            Path target = dir.resolve(name);
            files.add(
                    new RestoreFetch.File(
                            target,
                            stop -> {
                                niceOf.put(target, ThreadNice.current());
                                if (name.equals("first")) {
                                    firstTaken.countDown();
                                    try {
                                        blocked.await(30, TimeUnit.SECONDS);
                                    } catch (InterruptedException e) {
                                        throw new IOException(e);
                                    }
                                }
                                Files.writeString(target, name);
                            }));
        }
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        fetch.add(files);
        fetch.start(1, "test", 7);
        assertThat(firstTaken.await(30, TimeUnit.SECONDS)).isTrue();
        // The one fetch thread holds the first file; this thread fetches the second itself.
        try (FileChannel channel = fetch.openForRead(dir.resolve("second"))) {
            assertThat(channel.size()).isEqualTo(6);
        }
        blocked.countDown();
        fetch.awaitAll();
        assertThat(niceOf.get(dir.resolve("first"))).as("fetch thread").isEqualTo(Math.max(7, own));
        assertThat(niceOf.get(dir.resolve("second"))).as("the needing thread").isEqualTo(own);
        assertThat(ThreadNice.current()).isEqualTo(own);
    }

    @Test
    void shouldRejectANiceValueOutOfRange() {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        assertThatThrownBy(() -> fetch.start(1, "test", 20))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[0, 19]");
        assertThatThrownBy(() -> fetch.start(1, "test", -1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldFetchNothingInTheBackgroundBeforeStart() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        CountDownLatch open = new CountDownLatch(0);
        fetch.add(List.of(file("a", "1", open), file("b", "2", open)));
        Thread.sleep(50);
        assertThat(copiedBy).isEmpty();
        try (FileChannel channel = fetch.openForRead(dir.resolve("b"))) {
            assertThat(channel.size()).isEqualTo(1);
        }
        assertThat(copiedBy).containsOnlyKeys(dir.resolve("b"));
        fetch.start(2, "test");
        awaitFetchThreads(fetch);
        fetch.awaitAll();
        assertThat(copiedBy.get(dir.resolve("a"))).startsWith("flowkv-restore-fetch-");
        assertThat(copiedBy.get(dir.resolve("b"))).isEqualTo(Thread.currentThread().getName());
    }

    @Test
    void shouldFetchAFileNoThreadTookOnTheThreadThatNeedsIt() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch free = new CountDownLatch(0);
        CountDownLatch firstTaken = new CountDownLatch(1);
        RestoreFetch.File first = file("first", "1", blocked);
        // One fetch thread, held on the first file: the second waits in the queue.
        fetch.add(
                List.of(
                        new RestoreFetch.File(
                                first.target(),
                                stop -> {
                                    firstTaken.countDown();
                                    first.copy().run(stop);
                                }),
                        file("second", "2", free)));
        fetch.start(1, "test");
        assertThat(firstTaken.await(30, TimeUnit.SECONDS)).isTrue();
        try (FileChannel channel = fetch.openForRead(dir.resolve("second"))) {
            assertThat(channel.size()).isEqualTo(1);
        }
        assertThat(copiedBy.get(dir.resolve("second"))).isEqualTo(Thread.currentThread().getName());
        assertThat(fetch.pendingFiles()).isEqualTo(1);
        blocked.countDown();
        fetch.awaitAll();
        assertThat(copiedBy.get(dir.resolve("first"))).startsWith("flowkv-restore-fetch-");
    }

    @Test
    void shouldWaitForAFileAFetchThreadIsCopying() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Path target = dir.resolve("slow");
        fetch.add(
                List.of(
                        new RestoreFetch.File(
                                target,
                                stop -> {
                                    started.countDown();
                                    try {
                                        release.await(30, TimeUnit.SECONDS);
                                    } catch (InterruptedException e) {
                                        throw new IOException(e);
                                    }
                                    Files.writeString(target, "done");
                                })));
        fetch.start(1, "test");
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        Thread releaser =
                new Thread(
                        () -> {
                            try {
                                Thread.sleep(100);
                            } catch (InterruptedException ignored) {
                                // released at once then
                            }
                            release.countDown();
                        });
        releaser.start();
        try (FileChannel channel = fetch.openForRead(target)) {
            assertThat(channel.size()).isEqualTo(4);
        }
        releaser.join();
    }

    @Test
    void shouldNotFetchAFileDeletedBeforeItsTurn() throws Exception {
        Set<Path> deleted = ConcurrentHashMap.newKeySet();
        RestoreFetch fetch =
                fetch(
                        new FileIo() {
                            @Override
                            public void delete(Path file) throws IOException {
                                deleted.add(file);
                                FileIo.super.delete(file);
                            }
                        });
        CountDownLatch blocked = new CountDownLatch(1);
        fetch.add(List.of(file("first", "1", blocked), file("second", "2", blocked)));
        fetch.start(1, "test");
        fetch.delete(dir.resolve("second"));
        assertThat(deleted).containsExactly(dir.resolve("second"));
        blocked.countDown();
        fetch.awaitAll();
        assertThat(dir.resolve("first")).exists();
        assertThat(dir.resolve("second")).doesNotExist();
        assertThat(copiedBy).doesNotContainKey(dir.resolve("second"));
    }

    @Test
    void shouldFailTheAccessToAFileThatCouldNotBeFetchedAndTheNextCheckpoint() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        Path bad = dir.resolve("bad");
        fetch.add(
                List.of(
                        new RestoreFetch.File(
                                bad,
                                stop -> {
                                    throw new IOException("Checkpoint file x/bad is corrupt");
                                }),
                        file("good", "g", new CountDownLatch(0))));
        fetch.start(2, "test");
        assertThatThrownBy(() -> fetch.openForRead(bad))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(bad.toString())
                .hasMessageContaining("Checkpoint file x/bad is corrupt");
        try (FileChannel channel = fetch.openForRead(dir.resolve("good"))) {
            assertThat(channel.size()).isEqualTo(1);
        }
        assertThatThrownBy(fetch::checkFailed).hasMessageContaining("x/bad is corrupt");
        assertThatThrownBy(fetch::awaitAll).hasMessageContaining("x/bad is corrupt");
    }

    @Test
    void shouldStopFetchingWhenClosed() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        CountDownLatch copying = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        List<RestoreFetch.File> files = new ArrayList<>();
        files.add(
                new RestoreFetch.File(
                        dir.resolve("endless"),
                        stop -> {
                            copying.countDown();
                            while (!stop.getAsBoolean()) {
                                Thread.onSpinWait();
                            }
                            stopped.countDown();
                            throw new IOException("stopped");
                        }));
        files.add(file("never", "n", new CountDownLatch(0)));
        fetch.add(files);
        fetch.start(1, "test");
        assertThat(copying.await(30, TimeUnit.SECONDS)).isTrue();
        fetch.close();
        // close() returned after the copy under way saw the stop.
        assertThat(stopped.getCount()).isZero();
        assertThat(dir.resolve("never")).doesNotExist();
        assertThatThrownBy(() -> fetch.openForRead(dir.resolve("never")))
                .hasMessageContaining("closed");
        // A close is not a failure of the checkpoint's files.
        fetch.checkFailed();
    }

    @Test
    void shouldPassOtherFilesStraightThrough() throws Exception {
        RestoreFetch fetch = fetch(FileIo.DEFAULT);
        Path other = dir.resolve("other");
        try (FileChannel channel = fetch.openForAppend(other)) {
            assertThat(channel.size()).isZero();
        }
        fetch.moveAtomically(other, dir.resolve("moved"));
        fetch.delete(dir.resolve("moved"));
        assertThat(dir.resolve("moved")).doesNotExist();
        assertThat(fetch.pendingFiles()).isZero();
    }
}
