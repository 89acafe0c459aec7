package io.flowkv.core.rmw;

import io.flowkv.core.SealedStore;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Model-based test: random puts, gets and removes over many keys and namespaces against a {@link
 * HashMap}, interleaved with flushes, compactions and seal + restore, with budgets small enough
 * that flushes, segment rolls and compactions happen all the time. Replay a failure with {@code
 * -Dflowkv.seed=N}.
 */
class RmwStoreRandomizedTest {
    private static final double MSA = 1.5;

    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(64L << 20);
    private RmwStore store;

    private record Entry(String key, String namespace) {}

    @AfterEach
    void tearDown() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    @Test
    void shouldMatchHashMapModelUnderRandomOperations() throws IOException {
        String fixed = System.getProperty("flowkv.seed");
        long[] seeds =
                fixed != null
                        ? new long[] {Long.parseLong(fixed)}
                        : new long[] {System.nanoTime(), new SplittableRandom().nextLong(), 42L};
        for (long seed : seeds) {
            run(seed, 10_000, -1L, 50 + new SplittableRandom(seed).nextInt(400), 64L << 20);
        }
    }

    /**
     * Far more entries than the index's cache of 64 pages holds: most index pages live in the page
     * file, are evicted and read back, and the table doubles several times on the way.
     */
    @Test
    void shouldMatchHashMapModelWhenTheIndexSpillsToDisk() throws IOException {
        String fixed = System.getProperty("flowkv.seed");
        long seed = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
        run(seed, 25_000, -1L, 6_000, RmwStoreOptions.MIN_INDEX_CACHE_BYTES);
        assertThat(lastIndexPageWrites).as("seed " + seed + ": index pages written").isPositive();
        assertThat(lastIndexPageReads).as("seed " + seed + ": index pages read").isPositive();
    }

    /**
     * Only 64 distinct hashes: every index probe meets other keys, so the key checks against the
     * log and the write buffer decide every operation.
     */
    @Test
    void shouldMatchHashMapModelWhenHashesCollide() throws IOException {
        String fixed = System.getProperty("flowkv.seed");
        long seed = fixed != null ? Long.parseLong(fixed) : System.nanoTime();
        run(seed, 4_000, 0x3FL, 50 + new SplittableRandom(seed).nextInt(400), 64L << 20);
    }

    private long lastIndexPageWrites;
    private long lastIndexPageReads;

    private void run(long seed, int operations, long hashMask, int keys, long indexCacheBytes)
            throws IOException {
        String replay =
                "seed "
                        + seed
                        + (hashMask != -1L ? " with hash mask " + hashMask : "")
                        + " (replay with -Dflowkv.seed="
                        + seed
                        + ")";
        System.out.println("RmwStoreRandomizedTest " + replay);
        SplittableRandom random = new SplittableRandom(seed);
        Path directory = dir.resolve("run-" + Long.toHexString(seed));
        FaultInjectingFileIo io = new FaultInjectingFileIo();
        io.skipSyncs();
        RmwStoreOptions options =
                RmwStoreOptions.builder(directory)
                        .maxSpaceAmplification(MSA)
                        .writeBufferBytes(1 + random.nextInt(8 << 10))
                        .segmentRollBytes(
                                RmwStoreOptions.MIN_SEGMENT_ROLL_BYTES << random.nextInt(4))
                        .fileIo(io)
                        .ioBufferBytes(RmwStoreOptions.MIN_IO_BUFFER_BYTES)
                        .jitterSeed(seed)
                        .hashMaskForTesting(hashMask)
                        .indexCacheBytes(indexCacheBytes)
                        .build();
        store = RmwStore.open(options, budget);
        Map<Entry, byte[]> model = new HashMap<>();
        long flushes = 0;
        long compactions = 0;
        lastIndexPageWrites = 0;
        lastIndexPageReads = 0;
        for (int op = 0; op < operations; op++) {
            String at = replay + ", operation " + op;
            Entry e = randomEntry(random, keys);
            byte[] key = e.key().getBytes(StandardCharsets.ISO_8859_1);
            byte[] ns = e.namespace().getBytes(StandardCharsets.ISO_8859_1);
            int dice = random.nextInt(1000);
            if (dice < 450) {
                byte[] value = randomValue(random);
                store.put(key, ns, value);
                model.put(e, value);
            } else if (dice < 800 || (dice >= 990 && dice < 996)) {
                assertThat(store.get(key, ns)).as(at + " get " + e).isEqualTo(model.get(e));
            } else if (dice < 950) {
                boolean had = model.remove(e) != null;
                assertThat(store.remove(key, ns)).as(at + " remove " + e).isEqualTo(had);
            } else if (dice < 975) {
                store.flush();
                checkLogAccounting(model, directory, at);
            } else if (dice < 980) {
                store.compact();
                assertThat(store.stats().deadBytes()).as(at + " dead after compact").isZero();
                checkLogAccounting(model, directory, at);
            } else if (dice < 985) {
                assertThat(store.size()).as(at + " size").isEqualTo(model.size());
            } else if (dice < 990) {
                if (keys < 1000 || random.nextInt(50) == 0) {
                    checkAll(model, at);
                }
            } else {
                SealedStore sealed = store.seal();
                for (SealedStore.SealedFile f : sealed.files()) {
                    assertThat(Files.size(f.path())).as(at + " " + f).isEqualTo(f.length());
                }
                assertThat(store.stats().files())
                        .as(at + " files in the stats vs sealed")
                        .isEqualTo(sealed.files().size());
                flushes += store.stats().flushes();
                compactions += store.stats().compactions();
                lastIndexPageWrites += store.stats().indexPageWrites();
                lastIndexPageReads += store.stats().indexPageReads();
                store.close();
                assertThat(budget.used()).as(at + " budget after close").isZero();
                assertThat(io.openChannels()).as(at + " open channels after close").isZero();
                store = RmwStore.restore(options, budget, sealed.manifest());
                checkAll(model, at + " after restore");
                assertThat(store.stats().files())
                        .as(at + " files in the stats after restore")
                        .isEqualTo(sealed.files().size());
                assertThat(store.stats().entries())
                        .as(at + " entries in the stats after restore")
                        .isEqualTo(model.size());
            }
            assertThat(store.stats().spaceAmplification())
                    .as(at + " space amplification " + store.stats())
                    .isLessThanOrEqualTo(MSA);
        }
        checkAll(model, replay + " at the end");
        lastIndexPageWrites += store.stats().indexPageWrites();
        lastIndexPageReads += store.stats().indexPageReads();
        flushes += store.stats().flushes();
        compactions += store.stats().compactions();
        assertThat(flushes).as(replay + " flushes").isGreaterThan(10);
        assertThat(compactions).as(replay + " compactions").isGreaterThan(2);
        store.close();
        store = null;
    }

    private static Entry randomEntry(SplittableRandom random, int keys) {
        int k = random.nextInt(keys);
        // Keys of several lengths, the empty one included; namespaces shaped like time windows.
        String key = k == 0 ? "" : "key-" + Integer.toString(k, 36).repeat(1 + k % 3);
        int n = random.nextInt(6);
        String ns = n == 0 ? "" : "window-" + n + "\u0000\u00ff";
        return new Entry(key, ns);
    }

    private static byte[] randomValue(SplittableRandom random) {
        int kind = random.nextInt(100);
        int length =
                kind < 10
                        ? 0
                        : kind < 70
                                ? 1 + random.nextInt(16)
                                : kind < 97 ? random.nextInt(300) : 600 + random.nextInt(3000);
        byte[] value = new byte[length];
        random.nextBytes(value);
        return value;
    }

    private void checkAll(Map<Entry, byte[]> model, String at) throws IOException {
        for (Map.Entry<Entry, byte[]> m : model.entrySet()) {
            Entry e = m.getKey();
            assertThat(
                            store.get(
                                    e.key().getBytes(StandardCharsets.ISO_8859_1),
                                    e.namespace().getBytes(StandardCharsets.ISO_8859_1)))
                    .as(at + " get " + e)
                    .isEqualTo(m.getValue());
        }
        Map<Entry, byte[]> seen = new HashMap<>();
        store.forEach(
                (key, window, value, offset, length) -> {
                    Entry e =
                            new Entry(
                                    new String(key, StandardCharsets.ISO_8859_1),
                                    new String(window, StandardCharsets.ISO_8859_1));
                    byte[] copy = new byte[length];
                    System.arraycopy(value, offset, copy, 0, length);
                    assertThat(seen.put(e, copy)).as(at + " forEach visits once " + e).isNull();
                });
        assertThat(seen).as(at + " forEach").containsOnlyKeys(model.keySet());
        seen.forEach((e, v) -> assertThat(v).as(at + " forEach " + e).isEqualTo(model.get(e)));
        assertThat(store.size()).as(at + " size").isEqualTo(model.size());
    }

    /** Right after a flush every entry is logged: live bytes are exactly the model's frames. */
    private void checkLogAccounting(Map<Entry, byte[]> model, Path directory, String at)
            throws IOException {
        long live = 0;
        for (Map.Entry<Entry, byte[]> m : model.entrySet()) {
            live +=
                    RmwRecordDescriptor.frameLength(
                            m.getKey().key().length(),
                            m.getKey().namespace().length(),
                            m.getValue().length);
        }
        assertThat(store.stats().liveBytes()).as(at + " live bytes").isEqualTo(live);
        assertThat(store.stats().entries()).as(at + " entries").isEqualTo(model.size());
        long frames = 0;
        long logs = 0;
        try (Stream<Path> files = Files.list(directory)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().endsWith(".log")) {
                    frames += Files.size(f) - 32;
                    logs++;
                }
            }
        }
        assertThat(store.stats().files()).as(at + " log files on disk").isEqualTo(logs);
        assertThat(store.stats().liveBytes() + store.stats().deadBytes())
                .as(at + " live + dead = bytes of frames on disk")
                .isEqualTo(frames);
    }
}
