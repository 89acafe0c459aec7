package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.read;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Predictive batch read: hit ratio on a session trace, and mispredictions never served stale. */
class AurPredictionTest {
    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private final MemoryBudget budget = new MemoryBudget(64L << 20);
    private final List<AurStore> stores = new ArrayList<>();

    @AfterEach
    void shouldLeakNothing() throws IOException {
        for (AurStore store : stores) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    private AurStore open(String name, double ratio) throws IOException {
        return open(name, ratio, true);
    }

    private AurStore open(String name, double ratio, boolean readAhead) throws IOException {
        AurStore store =
                AurStore.open(
                        AurStoreOptions.builder(dir.resolve(name))
                                .readBatchRatio(ratio)
                                .readAhead(readAhead)
                                .writeBufferBytes(16 * 1024)
                                .prefetchBufferLimit(4L << 20)
                                .fileIo(io)
                                .jitterSeed(name.hashCode())
                                .build(),
                        budget);
        stores.add(store);
        return store;
    }

    private record Result(double hitRatio, double readAmplification, long gets, int maxLive) {}

    private static final class Session {
        final byte[] key;
        final byte[] window;
        final long gap;
        long maxTs;
        final List<String> values = new ArrayList<>();

        Session(byte[] key, long start, long gap) {
            this.key = key;
            this.window = timeWindow(start, start + gap);
            this.gap = gap;
            this.maxTs = start;
        }
    }

    private record Due(long ett, Session session) {}

    /**
     * Keys send elements at random; a key's session closes after {@code gap} without elements;
     * closed sessions fire in ETT order (as event-time timers do) and are read, then cleared.
     */
    private Result runSessionTrace(AurStore store, long seed, boolean explicitEtt, int events)
            throws IOException {
        SplittableRandom rnd = new SplittableRandom(seed);
        int keys = 3000;
        long gap = 1000;
        Session[] open = new Session[keys];
        PriorityQueue<Due> timers =
                new PriorityQueue<>((a, b) -> a.ett != b.ett ? Long.compare(a.ett, b.ett) : 0);
        String pad = "p".repeat(100);
        int live = 0;
        int maxLive = 0;
        long gets = 0;
        for (long t = 0; t < events; t++) {
            int k = rnd.nextInt(keys);
            Session s = open[k];
            if (s == null || s.maxTs + s.gap <= t) {
                s = new Session(bytes("key-" + k), t, gap);
                open[k] = s;
                live++;
            }
            String value = t + pad;
            store.append(s.key, s.window, bytes(value), t);
            s.values.add(value);
            s.maxTs = t;
            if (explicitEtt) {
                store.setTriggerTime(s.key, s.window, t + gap);
            }
            timers.add(new Due(t + gap, s));
            maxLive = Math.max(maxLive, live);
            while (!timers.isEmpty() && timers.peek().ett <= t) {
                Due due = timers.poll();
                Session fired = due.session;
                if (fired.maxTs + fired.gap != due.ett) {
                    continue; // an older timer of a session that has grown since
                }
                assertThat(read(store, fired.key, fired.window))
                        .as("seed=" + seed + " t=" + t)
                        .isEqualTo(fired.values);
                gets++;
                store.remove(fired.key, fired.window);
                live--;
                int key = Integer.parseInt(new String(fired.key).substring(4));
                if (open[key] == fired) {
                    open[key] = null;
                }
            }
        }
        return new Result(store.hitRatio(), store.readAmplification(), gets, maxLive);
    }

    @Test
    void shouldHitAtLeastNinetyPercentWhenSessionsFireInEttOrder() throws IOException {
        long seed = AurTestSupport.seed();
        Result predicted = runSessionTrace(open("predicted", 0.02), seed, false, 40_000);
        Result exact = runSessionTrace(open("exact", 0.02), seed, true, 40_000);
        Result disabled = runSessionTrace(open("disabled", 0.0), seed, false, 8_000);
        System.out.println(
                "AurPredictionTest seed="
                        + seed
                        + " ratio 0.02 estimated ETT: "
                        + predicted
                        + "; explicit ETT: "
                        + exact
                        + "; ratio 0: "
                        + disabled);
        assertThat(predicted.hitRatio()).as("seed=" + seed).isGreaterThanOrEqualTo(0.9);
        assertThat(exact.hitRatio()).as("seed=" + seed).isGreaterThanOrEqualTo(0.9);
        // Without prediction every read of flushed data is a miss: the hit ratio above is earned.
        assertThat(disabled.hitRatio()).as("seed=" + seed).isZero();
        // Mispredicted windows are read again; each value is read about 1 / hitRatio times.
        assertThat(predicted.readAmplification()).as("seed=" + seed).isLessThan(1.3);
    }

    @Test
    void shouldPrefetchTheRatioOfLiveWindowsNearestToTheirTrigger() throws IOException {
        // The batch of FlowKV §4.2 alone: bets ride on the read that missed.
        AurStore store = open("nearest", 0.05, false);
        byte[] w = hundredWindowsInShuffledOrder(store);
        assertThat(read(store, bytes("k0"), w)).containsExactly("v0");
        assertThat(store.stats().prefetchMisses()).isEqualTo(1);
        // N = ceil(0.05 x 100 live windows) = 5: k1..k5, the next five to trigger, were loaded.
        for (int i = 1; i <= 5; i++) {
            assertThat(read(store, bytes("k" + i), w)).containsExactly("v" + i);
        }
        assertThat(store.stats().prefetchHits()).isEqualTo(5);
        assertThat(read(store, bytes("k6"), w)).containsExactly("v6");
        assertThat(store.stats().prefetchMisses()).isEqualTo(2);
        assertThat(store.stats().bytesPrefetched()).isPositive();
        assertThat(store.stats().readAheads()).isZero();
    }

    /** 100 windows appended in shuffled order, k{i} triggering at 1000 + 10 i, flushed. */
    private static byte[] hundredWindowsInShuffledOrder(AurStore store) throws IOException {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, new java.util.Random(42));
        byte[] w = timeWindow(0, 10);
        for (int i : order) {
            store.append(bytes("k" + i), w, bytes("v" + i), i);
            store.setTriggerTime(bytes("k" + i), w, 1000 + 10L * i);
        }
        store.flush();
        return w;
    }

    @Test
    void shouldReadTheNextBetsAheadOnceHalfTheLastBatchIsServed() throws IOException {
        AurStore store = open("ahead", 0.05);
        byte[] w = hundredWindowsInShuffledOrder(store);
        assertThat(read(store, bytes("k0"), w)).containsExactly("v0");
        assertThat(store.stats().prefetchMisses()).isEqualTo(1);
        assertThat(store.stats().readAheads()).isZero();
        // The miss bet on k1..k5; two of them served (half of 5, rounded down), the next five
        // nearest to their trigger are read on the other thread.
        assertThat(read(store, bytes("k1"), w)).containsExactly("v1");
        assertThat(store.stats().readAheads()).isZero();
        assertThat(read(store, bytes("k2"), w)).containsExactly("v2");
        assertThat(store.stats().readAheads()).isEqualTo(1);
        for (int i = 3; i < 100; i++) {
            assertThat(read(store, bytes("k" + i), w)).as("k" + i).containsExactly("v" + i);
        }
        // Windows fired in trigger order never miss again, and each was read once.
        assertThat(store.stats().prefetchMisses()).isEqualTo(1);
        assertThat(store.stats().prefetchHits()).isEqualTo(99);
        assertThat(store.stats().readAheads()).isGreaterThanOrEqualTo(19);
        // Each frame was read once: as many bytes as the same reads without read ahead.
        AurStore batchOnly = open("batch-only", 0.05, false);
        hundredWindowsInShuffledOrder(batchOnly);
        for (int i = 0; i < 100; i++) {
            assertThat(read(batchOnly, bytes("k" + i), w)).containsExactly("v" + i);
        }
        assertThat(batchOnly.stats().prefetchMisses()).isGreaterThan(1);
        assertThat(store.stats().bytesRead()).isEqualTo(batchOnly.stats().bytesRead());
    }

    @Test
    void shouldDropOnlyTheCorruptWindowOfAReadAheadAndFailItsReadNamingTheFile()
            throws IOException {
        AurStore store = open("ahead-corrupt", 0.05);
        byte[] w = hundredWindowsInShuffledOrder(store);
        Path data;
        try (var files = Files.list(dir.resolve("ahead-corrupt"))) {
            data =
                    files.filter(f -> f.getFileName().toString().startsWith("aur-data-"))
                            .findFirst()
                            .orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(data);
        int at = indexOf(bytes, bytes("v77"));
        bytes[at + 1] ^= 1;
        Files.write(data, bytes);

        for (int i = 0; i < 77; i++) {
            assertThat(read(store, bytes("k" + i), w)).as("k" + i).containsExactly("v" + i);
        }
        assertThat(store.stats().prefetchMisses()).isEqualTo(1);
        // k77 was bet on and read ahead; its frame failed its checksum, so its copy was
        // dropped: its read goes to the log and fails there, naming the file.
        assertThatThrownBy(() -> read(store, bytes("k77"), w))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(data.getFileName().toString());
        // The other windows read as before.
        for (int i = 78; i < 100; i++) {
            assertThat(read(store, bytes("k" + i), w)).as("k" + i).containsExactly("v" + i);
        }
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }

    @Test
    void shouldNeverServeStaleValuesWhenAPrefetchedWindowGetsANewElement() throws IOException {
        AurStore store = open("mispredict", 1.0);
        byte[] k1 = bytes("k1");
        byte[] k2 = bytes("k2");
        byte[] w1 = timeWindow(100, 110);
        byte[] w2 = timeWindow(100, 120);
        store.append(k1, w1, bytes("a"), 100);
        store.append(k2, w2, bytes("b"), 100);
        store.flush();

        assertThat(read(store, k1, w1)).containsExactly("a");
        assertThat(store.stats().prefetchMisses()).isEqualTo(1);
        assertThat(store.prefetchBufferBytes()).as("k2 was prefetched with k1").isPositive();

        // A new element moves k2's ETT: the bet was wrong, the prefetched copy is evicted.
        store.append(k2, w2, bytes("c"), 130);
        assertThat(store.triggerTime(k2, w2)).isEqualTo(150);
        assertThat(read(store, k2, w2)).containsExactly("b", "c");

        // Flushed after the read: a later get must see it too.
        store.append(k2, w2, bytes("d"), 131);
        store.flush();
        assertThat(read(store, k2, w2)).containsExactly("b", "c", "d");
    }

    @Test
    void shouldServeNewElementsOfAPrefetchedWindowWhoseEttIsExplicit() throws IOException {
        AurStore store = open("explicit", 1.0);
        byte[] k1 = bytes("k1");
        byte[] k3 = bytes("k3");
        byte[] w = timeWindow(0, 10);
        store.append(k3, w, bytes("d"), 5);
        store.setTriggerTime(k3, w, 500);
        store.append(k1, w, bytes("x"), 5);
        store.flush();
        assertThat(read(store, k1, w)).containsExactly("x");
        long hits = store.stats().prefetchHits();

        // The ETT is the engine's, so the element does not move it: the prefetched copy stays
        // valid and the new element is served from the write buffer after it.
        store.append(k3, w, bytes("e"), 400);
        assertThat(store.triggerTime(k3, w)).isEqualTo(500);
        assertThat(read(store, k3, w)).containsExactly("d", "e");
        assertThat(store.stats().prefetchHits()).isEqualTo(hits + 1);

        // A flush of new data for a prefetched window must not hide that data.
        store.append(k3, w, bytes("f"), 401);
        store.flush();
        assertThat(read(store, k3, w)).containsExactly("d", "e", "f");

        store.setTriggerTime(k3, w, 900);
        assertThat(store.triggerTime(k3, w)).isEqualTo(900);
        store.append(k3, w, bytes("g"), 2000);
        assertThat(store.triggerTime(k3, w)).as("explicit ETT wins over estimates").isEqualTo(900);
        assertThat(read(store, k3, w)).containsExactly("d", "e", "f", "g");
    }

    @Test
    void shouldKeepPrefetchedValuesValidAcrossCompaction() throws IOException {
        AurStore store = open("compact-prefetched", 1.0);
        byte[] w = timeWindow(0, 10);
        for (int i = 0; i < 50; i++) {
            store.append(bytes("k" + i), w, bytes("v" + i), i);
        }
        store.flush();
        assertThat(read(store, bytes("k0"), w)).containsExactly("v0");
        for (int i = 0; i < 40; i++) {
            store.remove(bytes("k" + i), w);
        }
        store.append(bytes("k45"), w, bytes("late"), 45);
        store.compact();
        assertThat(store.stats().deadBytes()).isZero();
        for (int i = 40; i < 50; i++) {
            List<String> expected = new ArrayList<>(List.of("v" + i));
            if (i == 45) {
                expected.add("late");
            }
            assertThat(read(store, bytes("k" + i), w)).isEqualTo(expected);
        }
    }
}
