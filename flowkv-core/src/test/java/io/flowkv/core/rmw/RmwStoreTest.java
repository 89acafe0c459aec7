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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RmwStoreTest {
    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(16L << 20);
    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private RmwStore store;

    @AfterEach
    void tearDown() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    private RmwStoreOptions.Builder options() {
        return RmwStoreOptions.builder(dir).fileIo(io).jitterSpread(0);
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private List<String> segmentFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".log"))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void shouldReturnNothingForAbsentKeys() throws IOException {
        store = RmwStore.open(options().build(), budget);
        assertThat(store.get(b("k"), b("w"))).isNull();
        assertThat(store.get(b("k"), b("w"), (buf, off, len) -> {})).isFalse();
        assertThat(store.remove(b("k"), b("w"))).isFalse();
        assertThat(store.size()).isZero();
    }

    @Test
    void shouldKeepNamespacesOfOneKeyApart() throws IOException {
        store = RmwStore.open(options().build(), budget);
        store.put(b("k"), b("w1"), b("one"));
        store.put(b("k"), b("w2"), b("two"));
        store.put(b("k"), b(""), b("none"));
        // (key, namespace) pairs that concatenate to the same bytes are still different keys.
        store.put(b("kw"), b("1"), b("other"));
        store.flush();
        assertThat(store.get(b("k"), b("w1"))).isEqualTo(b("one"));
        assertThat(store.get(b("k"), b("w2"))).isEqualTo(b("two"));
        assertThat(store.get(b("k"), b(""))).isEqualTo(b("none"));
        assertThat(store.get(b("kw"), b("1"))).isEqualTo(b("other"));
        assertThat(store.size()).isEqualTo(4);
    }

    @Test
    void shouldOverwriteInPlaceWhileTheValueFits() throws IOException {
        store = RmwStore.open(options().build(), budget);
        store.put(b("k"), b("w"), b("12345678"));
        long used = store.memoryUsed();
        for (int i = 0; i < 10_000; i++) {
            store.put(b("k"), b("w"), b(String.format("%08d", i)));
        }
        assertThat(store.get(b("k"), b("w"))).isEqualTo(b("00009999"));
        assertThat(store.memoryUsed()).isEqualTo(used);
        assertThat(store.stats().flushes()).isZero();
        store.put(b("k"), b("w"), b("a longer value than before"));
        store.put(b("k"), b("w"), new byte[0]);
        assertThat(store.get(b("k"), b("w"))).isEmpty();
    }

    @Test
    void shouldServeReadsFromTheLogAfterFlush() throws IOException {
        store = RmwStore.open(options().build(), budget);
        byte[] big = new byte[5000];
        big[4999] = 7;
        store.put(b("small"), b("w"), b("v"));
        store.put(b("big"), b("w"), big);
        store.put(b("empty"), b("w"), new byte[0]);
        store.flush();
        long readBefore = store.stats().bytesRead();
        assertThat(store.get(b("small"), b("w"))).isEqualTo(b("v"));
        assertThat(store.get(b("big"), b("w"))).isEqualTo(big);
        assertThat(store.get(b("empty"), b("w"))).isEmpty();
        assertThat(store.stats().bytesRead()).isGreaterThan(readBefore + big.length);
        byte[][] seen = new byte[1][];
        assertThat(
                        store.get(
                                b("big"),
                                b("w"),
                                (buf, off, len) ->
                                        seen[0] =
                                                java.util.Arrays.copyOfRange(buf, off, off + len)))
                .isTrue();
        assertThat(seen[0]).isEqualTo(big);
    }

    @Test
    void shouldFlushWhenTheWriteBufferIsFull() throws IOException {
        store = RmwStore.open(options().writeBufferBytes(4096).build(), budget);
        for (int i = 0; i < 1000; i++) {
            store.put(b("key" + i), b("w"), b("value" + i));
        }
        assertThat(store.stats().flushes()).isGreaterThan(5);
        for (int i = 0; i < 1000; i++) {
            assertThat(store.get(b("key" + i), b("w"))).isEqualTo(b("value" + i));
        }
    }

    /**
     * Once the index spills, a flush applies its records in the index's page order: each cold page
     * is read once per flush, not once per record. 30k keys make an index of 256 pages (64Ki slots,
     * growing past 45,875 entries) with a one-chunk (16-page) cache; a flush of 15k new keys then
     * reads each page at most once, where the insertion order read about one page per record.
     */
    @Test
    void shouldApplyAFlushToASpillingIndexOnePageAtATime() throws IOException {
        openWith30kKeysOverASpillingIndex(spillingIndexOptions());
        long readsBefore = store.stats().indexPageReads();
        for (int i = 30_000; i < 45_000; i++) {
            store.put(b("key" + i), b("w"), b("v" + i));
        }
        store.flush();
        long reads = store.stats().indexPageReads() - readsBefore;
        assertThat(reads)
                .as("index pages read by one flush of 15k records")
                .isLessThanOrEqualTo(256);
        for (int i = 0; i < 45_000; i += 7) {
            assertThat(store.get(b("key" + i), b("w"))).isEqualTo(b("v" + i));
        }
    }

    /**
     * A compaction consults the index in its page order too: with 30k live keys in a 256-page index
     * and a 16-page cache, looking every frame up in log order read about one page per frame (60k
     * reads for the lookups and the repointing); one batch in page order reads each page at most
     * twice (once to find the live frames, once to point the index at their copies).
     */
    @Test
    void shouldCompactAgainstASpillingIndexOnePageAtATime() throws IOException {
        openWith30kKeysOverASpillingIndex(spillingIndexOptions().maxSpaceAmplification(100));
        for (int i = 0; i < 30_000; i += 2) {
            store.put(b("key" + i), b("w"), b("u" + i));
        }
        store.flush();
        long readsBefore = store.stats().indexPageReads();
        store.compact();
        long reads = store.stats().indexPageReads() - readsBefore;
        assertThat(store.stats().compactions()).isEqualTo(1);
        assertThat(reads).as("index pages read by one compaction").isLessThanOrEqualTo(2 * 256);
        for (int i = 0; i < 30_000; i++) {
            assertThat(store.get(b("key" + i), b("w"))).isEqualTo(b((i % 2 == 0 ? "u" : "v") + i));
        }
        assertThat(store.stats().deadBytes()).isZero();
    }

    /**
     * A map state's iteration gets an entry and removes it, reading other keys from the write
     * buffer in between: the remove's key check finds the frame the get verified, without reading
     * it again.
     */
    /** A write buffer of 4 MiB over an index cache of one chunk (16 pages). */
    private RmwStoreOptions.Builder spillingIndexOptions() {
        return options()
                .writeBufferBytes(4 << 20)
                .indexCacheBytes(RmwStoreOptions.MIN_INDEX_CACHE_BYTES);
    }

    /** Opens a store and flushes keys key0..key29999 (values v0..) into it: a 256-page index. */
    private void openWith30kKeysOverASpillingIndex(RmwStoreOptions.Builder options)
            throws IOException {
        store = RmwStore.open(options.build(), new MemoryBudget(64L << 20));
        for (int i = 0; i < 30_000; i++) {
            store.put(b("key" + i), b("w"), b("v" + i));
        }
        store.flush();
    }

    @Test
    void shouldNotReadAFrameAgainToRemoveTheKeyJustRead() throws IOException {
        store = RmwStore.open(options().build(), budget);
        for (int i = 0; i < 100; i++) {
            store.put(b("entry" + i), b("w"), b("value" + i));
        }
        store.flush();
        store.put(b("chunk"), b("w"), b("in the write buffer"));
        for (int i = 0; i < 100; i++) {
            long before = store.stats().bytesRead();
            assertThat(store.get(b("entry" + i), b("w"))).isEqualTo(b("value" + i));
            long afterGet = store.stats().bytesRead();
            assertThat(afterGet).as("the get reads the frame").isGreaterThan(before);
            assertThat(store.get(b("chunk"), b("w"))).isEqualTo(b("in the write buffer"));
            assertThat(store.remove(b("entry" + i), b("w"))).isTrue();
            assertThat(store.stats().bytesRead())
                    .as("the remove reads nothing")
                    .isEqualTo(afterGet);
            assertThat(store.get(b("entry" + i), b("w"))).isNull();
        }
        store.flush();
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void shouldRemoveFromBufferAndLog() throws IOException {
        store = RmwStore.open(options().build(), budget);
        store.put(b("logged"), b("w"), b("1"));
        store.flush();
        store.put(b("buffered"), b("w"), b("2"));
        assertThat(store.remove(b("logged"), b("w"))).isTrue();
        assertThat(store.remove(b("buffered"), b("w"))).isTrue();
        assertThat(store.remove(b("logged"), b("w"))).isFalse();
        assertThat(store.get(b("logged"), b("w"))).isNull();
        assertThat(store.size()).isZero();
        store.flush();
        assertThat(store.get(b("logged"), b("w"))).isNull();
        assertThat(store.get(b("buffered"), b("w"))).isNull();
        // A tombstone and the put it deletes are dead; compaction reclaims both.
        assertThat(store.stats().liveBytes()).isZero();
        assertThat(store.stats().compactions()).isEqualTo(1);
        assertThat(segmentFiles()).isEmpty();
    }

    @Test
    void shouldCompactAtMaxSpaceAmplificationAndDeleteOldSegments() throws IOException {
        store =
                RmwStore.open(
                        options().maxSpaceAmplification(2.0).segmentRollBytes(4096).build(),
                        budget);
        for (int i = 0; i < 200; i++) {
            store.put(b("key" + i), b("w"), new byte[40]);
            if (i % 20 == 19) {
                store.flush(); // segments roll at flush boundaries
            }
        }
        List<String> before = segmentFiles();
        assertThat(before).hasSizeGreaterThan(1);
        long live = store.stats().liveBytes();
        // Overwrite just under half: amplification stays below 2, nothing compacts.
        for (int i = 0; i < 90; i++) {
            store.put(b("key" + i), b("w"), new byte[40]);
        }
        store.flush();
        assertThat(store.stats().compactions()).isZero();
        assertThat(store.stats().spaceAmplification()).isGreaterThan(1.4).isLessThan(2.0);
        for (int i = 90; i < 200; i++) {
            store.put(b("key" + i), b("w"), new byte[40]);
        }
        store.flush();
        // Now exactly as many bytes are dead as live: 2.0 does not exceed the MSA yet.
        assertThat(store.stats().spaceAmplification()).isEqualTo(2.0);
        assertThat(store.stats().compactions()).isZero();
        store.put(b("key0"), b("w"), new byte[40]);
        store.flush();
        assertThat(store.stats().compactions()).isEqualTo(1);
        assertThat(store.stats().bytesCompactionWritten()).isEqualTo(live);
        assertThat(store.stats().deadBytes()).isZero();
        assertThat(store.stats().spaceAmplification()).isEqualTo(1.0);
        assertThat(segmentFiles()).doesNotContainAnyElementsOf(before);
        long onDisk = 0;
        for (String f : segmentFiles()) {
            onDisk += Files.size(dir.resolve(f)) - 32;
        }
        assertThat(onDisk).isEqualTo(live);
        for (int i = 0; i < 200; i++) {
            assertThat(store.get(b("key" + i), b("w"))).hasSize(40);
        }
    }

    @Test
    void shouldNeverUseAThresholdAboveTheConfiguredMsa() throws IOException {
        // Jitter lowers the thresholds of each instance; the MSA stays an upper bound.
        for (long seed = 0; seed < 20; seed++) {
            Path d = dir.resolve("s" + seed);
            try (RmwStore s =
                    RmwStore.open(
                            RmwStoreOptions.builder(d)
                                    .maxSpaceAmplification(1.2)
                                    .jitterSeed(seed)
                                    .writeBufferBytes(1024)
                                    .build(),
                            budget)) {
                for (int i = 0; i < 2000; i++) {
                    s.put(b("key" + (i % 50)), b("w"), b("value" + i));
                    assertThat(s.stats().spaceAmplification()).isLessThanOrEqualTo(1.2);
                }
            }
        }
    }

    @Test
    void shouldRestoreWhatWasSealedIncludingTombstones() throws IOException {
        RmwStoreOptions opts = options().segmentRollBytes(4096).build();
        store = RmwStore.open(opts, budget);
        Map<String, String> model = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            store.put(b("k" + i), b("w" + (i % 3)), b("v" + i));
            model.put("k" + i + "/w" + (i % 3), "v" + i);
            if (i % 50 == 49) {
                store.flush();
            }
        }
        for (int i = 0; i < 300; i += 7) {
            store.remove(b("k" + i), b("w" + (i % 3)));
            model.remove("k" + i + "/w" + (i % 3));
        }
        SealedStore sealed = store.seal();
        long live = store.stats().liveBytes();
        long dead = store.stats().deadBytes();
        store.close();
        store = RmwStore.restore(opts, budget, sealed.manifest());
        assertThat(store.size()).isEqualTo(model.size());
        assertThat(store.stats().liveBytes()).isEqualTo(live);
        assertThat(store.stats().deadBytes()).isEqualTo(dead);
        Map<String, String> seen = new HashMap<>();
        store.forEach(
                (key, window, value, off, len) ->
                        seen.put(
                                new String(key, StandardCharsets.UTF_8)
                                        + "/"
                                        + new String(window, StandardCharsets.UTF_8),
                                new String(value, off, len, StandardCharsets.UTF_8)));
        assertThat(seen).isEqualTo(model);
        // The restored store keeps working and never appends to the sealed files.
        store.put(b("new"), b("w"), b("x"));
        store.flush();
        for (SealedStore.SealedFile f : sealed.files()) {
            assertThat(Files.size(f.path())).isEqualTo(f.length());
        }
        assertThat(store.get(b("new"), b("w"))).isEqualTo(b("x"));
    }

    @Test
    void shouldSealAndRestoreAnEmptyStoreAndNumberManifestsOnward() throws IOException {
        RmwStoreOptions opts = options().build();
        store = RmwStore.open(opts, budget);
        SealedStore first = store.seal();
        assertThat(first.files()).isEmpty();
        store.put(b("k"), b("w"), b("v"));
        store.remove(b("k"), b("w"));
        SealedStore second = store.seal();
        assertThat(second.manifest()).isNotEqualTo(first.manifest());
        assertThat(first.manifest()).doesNotExist();
        store.close();
        store = RmwStore.restore(opts, budget, second.manifest());
        assertThat(store.size()).isZero();
        assertThat(store.get(b("k"), b("w"))).isNull();
        SealedStore third = store.seal();
        assertThat(third.manifest().getFileName().toString())
                .isGreaterThan(second.manifest().getFileName().toString());
    }

    @Test
    void shouldLeaveSealedFilesUnchangedWhileTheStoreGoesOn() throws IOException {
        store = RmwStore.open(options().build(), budget);
        for (int i = 0; i < 100; i++) {
            store.put(b("k" + i), b("w"), b("v" + i));
        }
        SealedStore sealed = store.seal();
        List<byte[]> contents = new ArrayList<>();
        for (SealedStore.SealedFile f : sealed.files()) {
            contents.add(Files.readAllBytes(f.path()));
        }
        for (int i = 0; i < 100; i++) {
            store.put(b("k" + i), b("w"), b("changed" + i));
        }
        store.flush();
        for (int i = 0; i < sealed.files().size(); i++) {
            Path p = sealed.files().get(i).path();
            if (Files.exists(p)) {
                assertThat(Files.readAllBytes(p)).isEqualTo(contents.get(i));
            }
        }
        assertThat(store.get(b("k1"), b("w"))).isEqualTo(b("changed1"));
    }

    @Test
    void shouldRefuseToOpenOverAnExistingStore() throws IOException {
        store = RmwStore.open(options().build(), budget);
        store.put(b("k"), b("w"), b("v"));
        store.flush();
        assertThatThrownBy(() -> RmwStore.open(options().build(), budget))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("rmw-00000000.log")
                .hasMessageContaining("restore");
    }

    @Test
    void shouldReturnEveryByteOfTheBudgetAndEveryChannelOnClose() throws IOException {
        store =
                RmwStore.open(
                        options().writeBufferBytes(2048).segmentRollBytes(4096).build(), budget);
        for (int i = 0; i < 2000; i++) {
            store.put(b("key" + (i % 300)), b("w"), new byte[i % 97]);
            if (i % 5 == 0) {
                store.get(b("key" + (i % 211)), b("w"));
            }
        }
        store.compact();
        assertThat(store.memoryUsed()).isPositive();
        assertThat(budget.used()).isEqualTo(store.memoryUsed());
        store.close();
        store = null;
        assertThat(budget.used()).isZero();
        assertThat(io.openChannels()).isZero();
    }

    @Test
    void shouldRejectUseAfterClose() throws IOException {
        store = RmwStore.open(options().build(), budget);
        store.close();
        assertThatThrownBy(() -> store.put(b("k"), b("w"), b("v")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        store = null;
    }
}
