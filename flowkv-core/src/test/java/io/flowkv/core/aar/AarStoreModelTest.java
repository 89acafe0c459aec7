package io.flowkv.core.aar;

import io.flowkv.core.SealedStore;
import io.flowkv.core.TestSeeds;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random appends, reads, removes, window removals, flushes and seal+restore cycles against a plain
 * in-memory model. Small write buffers and budgets make flushes, partition loading and eviction
 * happen constantly; odd seeds get a budget smaller than a window partition grows, so that reads
 * stream partitions that cannot be loaded. Replay a failure with {@code -Dflowkv.seed=N} (the seed
 * is printed and is in every assertion message).
 */
class AarStoreModelTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final int STEPS = 3000;

    @TempDir Path tmp;

    @Test
    void shouldMatchModelUnderRandomOperations() throws IOException {
        boolean replay = TestSeeds.replayed() != null;
        long base = TestSeeds.base();
        int runs = replay ? 1 : 4;
        for (int r = 0; r < runs; r++) {
            long seed = base + r;
            System.out.println(
                    "AarStoreModelTest seed=" + seed + " (replay: -Dflowkv.seed=" + seed + ")");
            new Run(seed, tmp.resolve("run-" + r)).execute();
        }
    }

    private static final class Run {
        private final long seed;
        private final SplittableRandom rnd;
        private final Path dir;
        private final FaultInjectingFileIo io = new FaultInjectingFileIo();
        private final MemoryBudget budget;
        private final AarStoreOptions options;

        /** window -> key -> values (hex), all in insertion order. */
        private final Map<String, Map<String, List<String>>> model = new TreeMap<>();

        private AarStore store;

        /** Counters of the store instances closed by seal+restore cycles. */
        private long flushes;

        private long bytesRead;

        private long partitionsStreamed;

        private long partitionLoads;

        /** A budget too small for the partitions this run builds: reads must stream. */
        private final boolean tight;

        private int injectedFailures;
        private int lowWindow;
        private int step;

        Run(long seed, Path dir) {
            this.seed = seed;
            this.rnd = new SplittableRandom(seed);
            this.dir = dir;
            // From tight (every load evicts, the write buffer is squeezed) to roomy (several
            // partitions stay loaded).
            int roomy = 48 * 1024 + rnd.nextInt(160 * 1024);
            this.tight = (seed & 1) == 1;
            this.budget = new MemoryBudget(tight ? 24 * 1024 + roomy % (8 * 1024) : roomy);
            int partitions = 1 + rnd.nextInt(4);
            this.options =
                    AarStoreOptions.builder(dir)
                            .partitions(tight ? Math.min(2, partitions) : partitions)
                            .writeBufferBytes(1024 + rnd.nextInt(16 * 1024))
                            .ioBufferBytes(4096)
                            .fileIo(io)
                            .jitterSeed(seed)
                            .build();
        }

        void execute() throws IOException {
            store = AarStore.open(options, budget);
            for (step = 0; step < STEPS; step++) {
                int op = rnd.nextInt(1000);
                if (op < 600) {
                    append();
                } else if (op < 760) {
                    checkGet(randomKey(), randomWindow());
                } else if (op < 810) {
                    remove(randomKey(), randomWindow());
                } else if (op < 818) {
                    removeWindow(randomWindow());
                } else if (op < 840) {
                    store.flush();
                } else if (op < 844) {
                    sealAndRestore();
                } else if (op < 870) {
                    fireWindow(randomWindow(), rnd.nextBoolean());
                } else if (op < 880) {
                    checkForEach();
                } else if (op < 890) {
                    lowWindow++;
                } else if (op < 896) {
                    appendWhileTheDiskFails();
                }
                assertThat(store.stats().liveBytes())
                        .as("%s: live bytes in the stats vs in the partitions", where())
                        .isEqualTo(store.partitionLiveBytes());
                assertThat(store.windowCount())
                        .as("%s: windows holding data", where())
                        .isEqualTo(model.size());
                assertThat(store.stats().entries())
                        .as("%s: windows in the stats", where())
                        .isEqualTo(model.size());
            }
            checkForEach();
            assertThat(injectedFailures).as("%s: injected write failures", where()).isPositive();
            assertThat(flushes + store.stats().flushes()).as("%s: flushes", where()).isPositive();
            assertThat(bytesRead + store.stats().bytesRead())
                    .as("%s: bytes loaded", where())
                    .isPositive();
            if (tight) {
                fireAWindowLargerThanTheBudget();
                assertThat(partitionsStreamed + store.stats().partitionsStreamed())
                        .as("%s: partitions read by streaming", where())
                        .isPositive();
            } else {
                assertThat(partitionLoads + store.stats().partitionLoads())
                        .as("%s: partitions loaded", where())
                        .isPositive();
            }
            for (String window : new ArrayList<>(model.keySet())) {
                removeWindow(window);
            }
            assertThat(store.windowCount()).isZero();
            assertThat(store.stats().liveBytes()).as("%s: live bytes", where()).isZero();
            assertThat(store.stats().deadBytes()).as("%s: dead bytes", where()).isZero();
            assertThat(store.stats().files()).as("%s: files in the stats", where()).isZero();
            assertThat(logFiles())
                    .as("%s: log files after removing every window", where())
                    .isEmpty();
            store.close();
            assertThat(budget.used()).as("%s: budget after close", where()).isZero();
            assertThat(io.openChannels()).as("%s: open channels after close", where()).isZero();
        }

        private void append() throws IOException {
            String key = randomKey();
            String window = randomWindow();
            byte[] value =
                    randomValue(rnd.nextInt(100) < 2 ? 4096 + rnd.nextInt(3000) : rnd.nextInt(60));
            store.append(bytes(key), bytes(window), value);
            model.computeIfAbsent(window, w -> new LinkedHashMap<>())
                    .computeIfAbsent(key, k -> new ArrayList<>())
                    .add(HEX.formatHex(value));
        }

        private byte[] randomValue(int length) {
            byte[] value = new byte[length];
            for (int i = 0; i < value.length; i++) {
                value[i] = (byte) rnd.nextInt();
            }
            return value;
        }

        /**
         * Appends (and explicit flushes) while writes fail part-way: an append whose flush failed
         * was not acknowledged and must not show up; everything acknowledged must survive.
         */
        private void appendWhileTheDiskFails() throws IOException {
            io.failWritesAfter(rnd.nextInt(4));
            if (rnd.nextInt(4) == 0) {
                io.failTruncate();
            }
            try {
                for (int i = 0; i < 40; i++) {
                    try {
                        if (i % 10 == 9) {
                            store.flush();
                        } else {
                            append();
                        }
                    } catch (IOException expected) {
                        // Not acknowledged: append() only updates the model after the store.
                        injectedFailures++;
                    }
                }
            } finally {
                io.heal();
            }
        }

        private void checkGet(String key, String window) throws IOException {
            List<String> actual = new ArrayList<>();
            boolean found =
                    store.get(
                            bytes(key),
                            bytes(window),
                            (b, off, len) -> actual.add(HEX.formatHex(b, off, off + len)));
            List<String> expected =
                    model.getOrDefault(window, Map.of()).getOrDefault(key, List.of());
            assertThat(actual).as("%s: get(%s, %s)", where(), key, window).isEqualTo(expected);
            assertThat(found)
                    .as("%s: get(%s, %s) result", where(), key, window)
                    .isEqualTo(!expected.isEmpty());
        }

        private void remove(String key, String window) throws IOException {
            store.remove(bytes(key), bytes(window));
            Map<String, List<String>> keys = model.get(window);
            if (keys != null) {
                keys.remove(key);
                if (keys.isEmpty()) {
                    model.remove(window);
                }
            }
        }

        private void removeWindow(String window) throws IOException {
            store.removeWindow(bytes(window));
            model.remove(window);
        }

        /** As Flink fires a window: every key read in turn, then (maybe) every key cleared. */
        private void fireWindow(String window, boolean clear) throws IOException {
            List<String> keys = new ArrayList<>(model.getOrDefault(window, Map.of()).keySet());
            keys.add("absent");
            for (String key : keys) {
                checkGet(key, window);
            }
            if (clear) {
                for (String key : keys) {
                    remove(key, window);
                }
                assertThat(store.get(bytes(keys.get(0)), bytes(window), (b, o, l) -> {}))
                        .as("%s: fired and cleared window %s", where(), window)
                        .isFalse();
            }
        }

        /**
         * A window of four times the budget's bytes, flushed and fired: no partition of it can be
         * loaded, so reading it must stream, whatever the random steps before left in the store.
         */
        private void fireAWindowLargerThanTheBudget() throws IOException {
            String window = "large-window";
            for (long bytes = 0; bytes <= 4 * budget.capacity(); bytes += 1000) {
                String key = "large-key-" + (bytes / 1000 % 64);
                byte[] value = randomValue(1000);
                store.append(bytes(key), bytes(window), value);
                model.computeIfAbsent(window, w -> new LinkedHashMap<>())
                        .computeIfAbsent(key, k -> new ArrayList<>())
                        .add(HEX.formatHex(value));
            }
            store.flush();
            fireWindow(window, true);
        }

        private void sealAndRestore() throws IOException {
            SealedStore sealed = store.seal();
            for (SealedStore.SealedFile f : sealed.files()) {
                // A segment abandoned because even its rollback failed keeps the torn tail of the
                // failed append past its recorded length; readers stop at that length.
                assertThat(Files.size(f.path()))
                        .as("%s: sealed %s", where(), f.path())
                        .isGreaterThanOrEqualTo(f.length());
            }
            flushes += store.stats().flushes();
            bytesRead += store.stats().bytesRead();
            partitionsStreamed += store.stats().partitionsStreamed();
            partitionLoads += store.stats().partitionLoads();
            assertThat(store.stats().files())
                    .as("%s: files in the stats vs sealed", where())
                    .isEqualTo(sealed.files().size());
            store.close();
            assertThat(budget.used()).as("%s: budget after close", where()).isZero();
            assertThat(io.openChannels()).as("%s: open channels after close", where()).isZero();
            store = AarStore.restore(options, budget, sealed.manifest());
            assertThat(store.stats().files())
                    .as("%s: files in the stats after restore", where())
                    .isEqualTo(sealed.files().size());
        }

        private void checkForEach() throws IOException {
            Map<String, Map<String, List<String>>> seen = new TreeMap<>();
            store.forEach(
                    (key, window, value, off, len) ->
                            seen.computeIfAbsent(string(window), w -> new TreeMap<>())
                                    .computeIfAbsent(string(key), k -> new ArrayList<>())
                                    .add(HEX.formatHex(value, off, off + len)));
            Map<String, Map<String, List<String>>> expected = new TreeMap<>();
            model.forEach((w, keys) -> expected.put(w, new TreeMap<>(keys)));
            for (String w : union(seen.keySet(), expected.keySet())) {
                Map<String, List<String>> seenKeys = seen.getOrDefault(w, Map.of());
                Map<String, List<String>> expectedKeys = expected.getOrDefault(w, Map.of());
                for (String k : union(seenKeys.keySet(), expectedKeys.keySet())) {
                    assertThat(seenKeys.get(k))
                            .as("%s: forEach values of (%s, %s)", where(), k, w)
                            .isEqualTo(expectedKeys.get(k));
                }
            }
        }

        private static List<String> union(java.util.Set<String> a, java.util.Set<String> b) {
            java.util.TreeSet<String> all = new java.util.TreeSet<>(a);
            all.addAll(b);
            return new ArrayList<>(all);
        }

        private List<Path> logFiles() throws IOException {
            try (Stream<Path> files = Files.list(dir)) {
                return files.filter(f -> f.toString().endsWith(".log")).toList();
            }
        }

        private String randomKey() {
            int k = rnd.nextInt(40);
            // Keys of different lengths, some longer than 8 bytes, to exercise the comparisons.
            return k % 5 == 0 ? "long-key-number-" + k : "k" + k;
        }

        private String randomWindow() {
            return "w" + (lowWindow + rnd.nextInt(5));
        }

        private String where() {
            return "seed=" + seed + (tight ? " (tight budget)" : "") + " step=" + step;
        }

        private static byte[] bytes(String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        }

        private static String string(byte[] b) {
            return new String(b, StandardCharsets.UTF_8);
        }
    }
}
