package io.flowkv.core.aur;

import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.read;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A read with nothing to bet on (count and global windows: no trigger time) follows its window's
 * frame chain: it reads that window's frames and nothing else, never the index log.
 */
class AurChainReadTest {
    /** Flink's GlobalWindow.Serializer writes one zero byte. */
    private static final byte[] GLOBAL = {0};

    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(8L << 20);
    private AurStore store;

    @AfterEach
    void shouldLeakNothing() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    private AurStoreOptions.Builder options() {
        return AurStoreOptions.builder(dir).writeBufferBytes(16 * 1024).jitterSeed(3);
    }

    @Test
    void shouldReadAMissOfAWindowWithoutTriggerTimeFromItsOwnFramesOnly() throws IOException {
        long seed = AurTestSupport.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        store = AurStore.open(options().build(), budget);
        Map<String, List<String>> model = appendRounds(rnd, 2_000, 6);
        long scans = store.stats().indexScans();
        readAllAndCheck(model, "seed=" + seed);
        assertThat(store.stats().indexScans())
                .as("index scans while reading %d windows (seed=%d)", model.size(), seed)
                .isEqualTo(scans);
        assertThat(store.stats().chainReads()).isEqualTo(model.size());
    }

    @Test
    void shouldKeepChainsRightAcrossCompactionAndRestore() throws IOException {
        long seed = AurTestSupport.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        store = AurStore.open(options().maxSpaceAmplification(1.5).build(), budget);
        Map<String, List<String>> model = appendRounds(rnd, 1_000, 4);
        List<String> keys = new ArrayList<>(model.keySet());
        for (int i = 0; i < keys.size(); i += 2) {
            store.remove(bytes(keys.get(i)), GLOBAL);
            model.remove(keys.get(i));
        }
        store.compact();
        assertThat(store.stats().compactions()).isEqualTo(1);
        model.putAll(appendRounds(rnd, 300, 2));
        SealedStore sealed = store.seal();
        store.close();
        store = AurStore.restore(options().build(), budget, sealed.manifest());
        long scans = store.stats().indexScans();
        readAllAndCheck(model, "seed=" + seed + " after compaction and restore");
        assertThat(store.stats().indexScans()).isEqualTo(scans);
    }

    @Test
    void shouldNotGrowItsChainsWithWindowsThatCameAndWent() throws IOException {
        store = AurStore.open(options().build(), budget);
        long afterWarmUp = 0;
        for (int round = 0; round < 60; round++) {
            for (int k = 0; k < 1_000; k++) {
                // Keys change every round: a count window fires and its state is purged.
                store.append(bytes("k" + round + "-" + k), GLOBAL, bytes("v" + k), round);
            }
            store.flush();
            for (int k = 0; k < 1_000; k++) {
                byte[] key = bytes("k" + round + "-" + k);
                assertThat(read(store, key, GLOBAL)).containsExactly("v" + k);
                store.remove(key, GLOBAL);
            }
            if (round == 10) {
                afterWarmUp = store.memoryUsed();
            }
        }
        assertThat(store.memoryUsed())
                .as("memory after 60 rounds vs after 10")
                .isLessThanOrEqualTo(afterWarmUp + 64 * 1024);
    }

    @Test
    void shouldServeMoreWindowsThanTheStatCacheHoldsWithBoundedMemory() throws IOException {
        long seed = AurTestSupport.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        long cache = AurStoreOptions.MIN_STAT_CACHE_BYTES;
        store = AurStore.open(options().statCacheBytes(cache).build(), budget);
        Map<String, List<String>> model = appendRounds(rnd, 4_000, 3);
        List<String> keys = new ArrayList<>(model.keySet());
        for (int i = 0; i < keys.size(); i += 3) {
            store.remove(bytes(keys.get(i)), GLOBAL);
            model.remove(keys.get(i));
        }
        model.putAll(appendRounds(rnd, 3_000, 2));
        String label = "seed=" + seed;
        assertThat(store.liveWindows())
                .as("%s: more windows than the cache holds records", label)
                .isGreaterThan((int) (cache / WindowStatTable.RECORD_BYTES));
        readAllAndCheck(model, label);
        assertThat(store.statPageReads()).as("%s: pages read back", label).isPositive();
        // Records, index and chains stay in their caches, plus page tables of 8 bytes a page.
        assertThat(store.statMemoryBytes())
                .as("%s: stat memory with %d live windows", label, store.liveWindows())
                .isLessThanOrEqualTo(cache + 16 * 1024);
        SealedStore sealed = store.seal();
        store.close();
        store =
                AurStore.restore(
                        options().statCacheBytes(cache).build(), budget, sealed.manifest());
        readAllAndCheck(model, label + " after restore");
    }

    @Test
    void shouldFailClearlyAndLoseNothingSealedWhenAScratchPageCannotBeWritten() throws IOException {
        long seed = AurTestSupport.seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        FaultInjectingFileIo io = new FaultInjectingFileIo();
        AurStoreOptions.Builder opts =
                options().statCacheBytes(AurStoreOptions.MIN_STAT_CACHE_BYTES).fileIo(io);
        store = AurStore.open(opts.build(), budget);
        Map<String, List<String>> model = appendRounds(rnd, 3_000, 2);
        SealedStore sealed = store.seal();
        io.faultOnly(file -> file.getFileName().toString().equals("scratch-stat.records"));
        io.failWrites();
        assertThatThrownBy(() -> appendRounds(rnd, 6_000, 1))
                .as("seed=%d", seed)
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("scratch-stat.records");
        io.heal();
        assertThatThrownBy(() -> appendRounds(rnd, 6_000, 1))
                .as("a store that lost a scratch page refuses further use")
                .hasMessageContaining("unusable");
        store.close();
        assertThat(budget.used()).as("budget after closing the failed store").isZero();
        store = AurStore.restore(opts.build(), budget, sealed.manifest());
        readAllAndCheck(model, "seed=" + seed + " restored from the last seal");
    }

    @Test
    void shouldBatchReadWindowsWithKnownTriggerTimesAlongTheirChains() throws IOException {
        store = AurStore.open(options().build(), budget);
        for (int k = 0; k < 200; k++) {
            store.append(bytes("s" + k), timeWindow(k, k + 10), bytes("v" + k), k);
        }
        store.flush();
        assertThat(read(store, bytes("s0"), timeWindow(0, 10))).containsExactly("v0");
        StoreStats stats = store.stats();
        // A session miss bets on its neighbours and reads them along their frame chains too: no
        // scan of the index log, which would look up the window of every live entry.
        assertThat(stats.indexScans()).as("index scans of a batch read").isZero();
        assertThat(stats.chainReads()).isEqualTo(1);
        assertThat(stats.prefetchLoads()).isEqualTo(1);
        for (int k = 1; k < 5; k++) {
            assertThat(read(store, bytes("s" + k), timeWindow(k, k + 10))).containsExactly("v" + k);
        }
        assertThat(stats.prefetchHits()).as("neighbours read ahead").isEqualTo(4);
        assertThat(stats.indexScans()).isZero();
    }

    /** Appends {@code rounds} values to each of {@code keys} global windows, flushing between. */
    private Map<String, List<String>> appendRounds(SplittableRandom rnd, int keys, int rounds)
            throws IOException {
        String prefix = "key-" + rnd.nextInt(1 << 20) + "-";
        Map<String, List<String>> model = new HashMap<>();
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < keys; k++) {
                if (rnd.nextInt(4) == 0) {
                    continue;
                }
                String key = prefix + k;
                String value = "v" + round + "-" + rnd.nextInt(1_000_000);
                store.append(bytes(key), GLOBAL, bytes(value), round);
                model.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
            }
            store.flush();
        }
        return model;
    }

    private void readAllAndCheck(Map<String, List<String>> model, String label) throws IOException {
        for (Map.Entry<String, List<String>> e : model.entrySet()) {
            long before = store.stats().bytesRead();
            assertThat(read(store, bytes(e.getKey()), GLOBAL))
                    .as("%s key %s", label, e.getKey())
                    .isEqualTo(e.getValue());
            long payload = 0;
            for (String v : e.getValue()) {
                payload += 4 + bytes(v).length;
            }
            // Each flush wrote the window one frame: its header (8 bytes) plus its values.
            assertThat(store.stats().bytesRead() - before)
                    .as("%s: data bytes read for key %s", label, e.getKey())
                    .isBetween(payload, payload + 8L * e.getValue().size());
        }
    }
}
