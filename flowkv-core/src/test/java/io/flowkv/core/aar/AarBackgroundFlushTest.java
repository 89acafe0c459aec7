package io.flowkv.core.aar;

import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.flowkv.core.aar.AarTesting.append;
import static io.flowkv.core.aar.AarTesting.sealAndRestore;
import static io.flowkv.core.aar.AarTesting.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A full write buffer is written on a background thread while appends go on, and every other
 * operation sees the store as if that flush had run on the calling thread.
 */
class AarBackgroundFlushTest {
    private static final long WRITE_BUFFER = 16 << 10;
    private static final long SMALL_BUDGET = 96 << 10;

    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private final MemoryBudget budget = new MemoryBudget(4 << 20);

    /** Names of the threads that made write calls. */
    private final Set<String> writers = ConcurrentHashMap.newKeySet();

    /** Write calls wait for this before they go ahead. */
    private final CountDownLatch gate = new CountDownLatch(1);

    /** Opened by the first write call. */
    private final CountDownLatch firstWrite = new CountDownLatch(1);

    private AarStoreOptions options;
    private AarStore store;

    private void open(boolean inBackground) throws IOException {
        io.faultOnly(
                file -> {
                    writers.add(Thread.currentThread().getName());
                    firstWrite.countDown();
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return true;
                });
        options =
                AarStoreOptions.builder(dir)
                        .partitions(2)
                        .writeBufferBytes(WRITE_BUFFER)
                        .ioBufferBytes(4096)
                        .backgroundFlush(inBackground)
                        .fileIo(io)
                        .build();
        store = AarStore.open(options, budget);
    }

    @AfterEach
    void shouldReleaseEveryByteAndFileOnClose() throws IOException {
        gate.countDown();
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    @Test
    void shouldAppendWhileAFullBufferIsWrittenAndReadEverythingInOrder() throws Exception {
        open(true);
        List<String> expected = new ArrayList<>();
        // The disk is stuck: the first full buffer's flush waits at its first write call, and
        // appends must go on meanwhile. A buffer holds 97 to 129 of these 127-byte records (the
        // limit's jitter), so 170 appends fill it once but not twice: a second full buffer would
        // wait for the first.
        assertTimeoutPreemptively(
                Duration.ofSeconds(30),
                () -> {
                    for (int i = 0; i < 170; i++) {
                        append(store, "k" + (i % 7), "w", value(i));
                        if (i % 7 == 0) {
                            expected.add(value(i));
                        }
                    }
                });
        // The flushing thread may start its first write only after the appends are done.
        assertThat(firstWrite.await(30, TimeUnit.SECONDS)).as("a flush is writing").isTrue();
        assertThat(writers).allMatch(name -> name.startsWith("flowkv-aar-flush"));

        AtomicBoolean opened = new AtomicBoolean();
        Thread opener =
                new Thread(
                        () -> {
                            sleep(200);
                            opened.set(true);
                            gate.countDown();
                        });
        opener.start();
        List<String> read = values(store, "k0", "w");

        assertThat(opened).as("the read waited for the flush").isTrue();
        assertThat(read).isEqualTo(expected);
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k0", "w")).isEqualTo(expected);
    }

    @Test
    void shouldKeepTheChainsOfAFailedFlushAndWriteThemBeforeLaterOnes() throws IOException {
        open(true);
        gate.countDown();
        io.failWrites();
        List<String> acknowledged = new ArrayList<>();
        IOException failure = null;
        for (int i = 0; i < 2000 && failure == null; i++) {
            try {
                append(store, "k", "w" + (i % 3), value(i));
                acknowledged.add("w" + (i % 3) + ":" + value(i));
            } catch (IOException e) {
                failure = e;
            }
        }
        // The first full buffer failed on the flushing thread; the append that found out, when
        // the buffer was full again, was not acknowledged.
        assertThat(failure)
                .isNotNull()
                .hasMessageContaining(dir.toString())
                .hasMessageContaining("stay buffered");
        assertThat(acknowledged.size()).isGreaterThan(1);
        assertThatThrownBy(() -> values(store, "k", "w0"))
                .as("a read still needs the owed chains on disk")
                .isInstanceOf(IOException.class);

        io.heal();
        for (int i = 2000; i < 2100; i++) {
            append(store, "k", "w" + (i % 3), value(i));
            acknowledged.add("w" + (i % 3) + ":" + value(i));
        }
        List<String> expected = acknowledged.stream().sorted(byWindow()).toList();
        assertThat(readAll()).isEqualTo(expected);
        store = sealAndRestore(store, options, budget);
        assertThat(readAll()).isEqualTo(expected);
    }

    @Test
    void shouldWriteOnTheAppendingThreadWhenFlushesAreNotInTheBackground() throws IOException {
        open(false);
        gate.countDown();
        for (int i = 0; i < 300; i++) {
            append(store, "k", "w", value(i));
        }

        assertThat(writers).containsExactly(Thread.currentThread().getName());
    }

    @Test
    void shouldGiveTheSpareBackWhenTheBudgetRefusesARecord() throws IOException {
        MemoryBudget small = new MemoryBudget(SMALL_BUDGET);
        AarStoreOptions tight =
                AarStoreOptions.builder(dir.resolve("tight"))
                        .partitions(1)
                        .writeBufferBytes(WRITE_BUFFER)
                        .ioBufferBytes(4096)
                        .backgroundFlush(true)
                        .build();
        try (AarStore s = AarStore.open(tight, small)) {
            for (int i = 0; i < 170; i++) {
                append(s, "k", "w", value(i));
            }
            // A read settles the flush in the background: its arena is the spare now. (A read
            // that loads a partition from disk would give the spare back first.)
            assertThat(values(s, "k", "none")).isEmpty();
            long spare = s.spareWriteBufferBytes();
            assertThat(spare).isPositive();

            // A record this large fits the budget (less its headroom) only once the spare is given
            // back.
            int length = (int) (small.available() - SMALL_BUDGET / 16 + spare / 2);
            String large = "y".repeat(length);
            append(s, "k", "w", large);

            assertThat(s.spareWriteBufferBytes()).as("spare given back").isZero();
            List<String> read = values(s, "k", "w");
            assertThat(read).hasSize(171).endsWith(large);
        }
        assertThat(small.used()).as("small budget after close").isZero();
    }

    @Test
    void shouldGiveTheSpareBackBeforeLoadingAPartitionFromDisk() throws IOException {
        open(true);
        gate.countDown();
        for (int i = 0; i < 170; i++) {
            append(store, "k", "w", value(i));
        }
        assertThat(values(store, "k", "none")).isEmpty();
        assertThat(store.spareWriteBufferBytes()).isPositive();

        assertThat(values(store, "k", "w")).hasSize(170);

        assertThat(store.spareWriteBufferBytes()).as("spare after a load").isZero();
    }

    private List<String> readAll() throws IOException {
        List<String> all = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            for (String v : values(store, "k", "w" + w)) {
                all.add("w" + w + ":" + v);
            }
        }
        return all;
    }

    /** Sorts "window:value" by window only, keeping append order within a window. */
    private static Comparator<String> byWindow() {
        return Comparator.comparing(s -> s.substring(0, s.indexOf(':')));
    }

    /** About 100 bytes, so that a few hundred appends fill the write buffer more than once. */
    private static String value(int i) {
        return i + "-" + "x".repeat(96);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
