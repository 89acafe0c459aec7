package io.flowkv.core.aar;

import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.log.ManifestFile;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.flowkv.core.aar.AarTesting.append;
import static io.flowkv.core.aar.AarTesting.b;
import static io.flowkv.core.aar.AarTesting.logFiles;
import static io.flowkv.core.aar.AarTesting.sealAndRestore;
import static io.flowkv.core.aar.AarTesting.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AarStoreTest {
    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private MemoryBudget budget = new MemoryBudget(1 << 20);
    private AarStoreOptions options;
    private AarStore store;

    private AarStore open(AarStoreOptions.Builder builder) throws IOException {
        options = builder.fileIo(io).ioBufferBytes(4096).build();
        store = AarStore.open(options, budget);
        return store;
    }

    private AarStore open() throws IOException {
        return open(AarStoreOptions.builder(dir));
    }

    @AfterEach
    void shouldReleaseEveryByteAndFileOnClose() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    @Test
    void shouldReturnValuesInAppendOrderAcrossFlushesAndTheBuffer() throws IOException {
        open();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            append(store, "k", "w", "v" + i);
            expected.add("v" + i);
            if (i == 3 || i == 6) {
                store.flush();
            }
        }

        assertThat(values(store, "k", "w")).isEqualTo(expected);
        assertThat(values(store, "k", "other-window")).isEmpty();
        assertThat(values(store, "other-key", "w")).isEmpty();
    }

    @Test
    void shouldKeepABoundedNumberOfSegmentsOpenWhateverTheNumberOfWindows() throws IOException {
        open();
        int windows = 3 * SegmentFiles.MAX_OPEN_WRITERS;
        for (int round = 0; round < 3; round++) {
            for (int w = 0; w < windows; w++) {
                append(store, "k", "w" + w, "v" + round);
            }
            store.flush();
            assertThat(io.openChannels())
                    .as("open segment files after flush %d", round)
                    .isLessThanOrEqualTo(SegmentFiles.MAX_OPEN_WRITERS);
        }
        for (int w = 0; w < windows; w++) {
            assertThat(values(store, "k", "w" + w)).containsExactly("v0", "v1", "v2");
        }
        AarStore restored = sealAndRestore(store, options, budget);
        store = restored;
        assertThat(values(store, "k", "w" + (windows - 1))).containsExactly("v0", "v1", "v2");
        assertThat(values(store, "k", "w0")).containsExactly("v0", "v1", "v2");
    }

    @Test
    void shouldKeepBookkeepingOnlyForThePartitionsAWindowUses() throws IOException {
        // Windows that fire per key (a custom assigner shifting each key's windows): every window
        // holds one key, so one partition of 128. Bookkeeping for all 128 per window ran a
        // TaskManager out of Java heap at a few hundred thousand windows.
        open(
                AarStoreOptions.builder(dir)
                        .partitions(128)
                        .partitioner((key, hash, n) -> Math.floorMod(hash, n)));
        int windows = 2_000;
        for (int w = 0; w < windows; w++) {
            append(store, "k" + w, "w" + w, "v" + w);
        }
        store.flush();
        assertThat(store.windowsForTest())
                .allSatisfy(w -> assertThat(w.present()).as("partitions of %s", w).hasSize(1));
        // Reads of keys and windows that hold nothing create no bookkeeping either.
        assertThat(values(store, "absent", "w7")).isEmpty();
        store.remove(b("absent"), b("w8"));
        assertThat(store.windowsForTest()).allSatisfy(w -> assertThat(w.present()).hasSize(1));

        SealedStore sealed = store.seal();
        assertThat(Files.size(sealed.manifest()))
                .as("manifest bytes for %d one-partition windows", windows)
                .isLessThan(windows * 64L);
        store.close();
        store = AarStore.restore(options, budget, sealed.manifest());
        for (int w = 0; w < windows; w++) {
            assertThat(values(store, "k" + w, "w" + w)).containsExactly("v" + w);
        }
        assertThat(store.windowsForTest()).allSatisfy(w -> assertThat(w.present()).hasSize(1));
    }

    @Test
    void shouldServeAWindowWhoseKeysSpreadOverEveryPartition() throws IOException {
        // Past a quarter of the partitions a window indexes them directly; before, by search.
        open(
                AarStoreOptions.builder(dir)
                        .partitions(64)
                        .partitioner((key, hash, n) -> Integer.parseInt(new String(key)) % n));
        for (int round = 0; round < 2; round++) {
            for (int k = 63; k >= 0; k--) {
                append(store, Integer.toString(k), "w", "v" + round);
                if (k % 16 == 0) {
                    for (int check = 63; check >= k; check--) {
                        assertThat(values(store, Integer.toString(check), "w")).hasSize(round + 1);
                    }
                }
            }
            store.flush();
        }
        assertThat(store.windowsForTest().get(0).present())
                .extracting(p -> p.index)
                .containsExactlyElementsOf(
                        java.util.stream.IntStream.range(0, 64).boxed().toList());
        store = sealAndRestore(store, options, budget);
        for (int k = 0; k < 64; k++) {
            assertThat(values(store, Integer.toString(k), "w")).containsExactly("v0", "v1");
        }
    }

    @Test
    void shouldRestoreAManifestThatListsEveryPartitionOfEveryWindow() throws IOException {
        // Payload version 1 wrote all partitions of each window, empty ones too.
        open(AarStoreOptions.builder(dir).partitions(8).partitioner((key, hash, n) -> key[0] % n));
        for (int w = 0; w < 5; w++) {
            for (int k = 0; k < 3; k++) {
                append(store, (char) ('a' + k * 2) + "-" + w, "w" + w, "v" + w + k);
            }
        }
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        byte[] v2 = ManifestFile.read(options.fileIo(), sealed.manifest());
        WindowTable table = new WindowTable(budget, 8, new StoreStats());
        AarManifest m;
        try {
            m = AarManifest.decode(v2, sealed.manifest(), 8, table);
            java.nio.ByteBuffer v1 =
                    java.nio.ByteBuffer.allocate(v2.length + 5 * 8 * 20)
                            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
            v1.putInt(AarManifest.VERSION_DENSE).putLong(m.sequence).putLong(m.nextFileId);
            v1.putInt(8).putInt(table.size());
            for (AarWindow w : table.windows()) {
                v1.putInt(w.bytes.length).put(w.bytes);
                for (int i = 0; i < 8; i++) {
                    AarPartition p = w.existing(i);
                    if (p == null) {
                        v1.putLong(0).putLong(0).putInt(0);
                        continue;
                    }
                    v1.putLong(p.fileLiveBytes).putLong(p.fileDeadBytes).putInt(p.segmentCount());
                    for (int seg = 0; seg < p.segmentCount(); seg++) {
                        v1.putLong(p.fileId(seg)).putLong(p.length(seg));
                    }
                }
            }
            Path dense = dir.resolve("aar-" + (m.sequence + 1) + ".manifest");
            ManifestFile.write(
                    options.fileIo(),
                    dense,
                    m.sequence + 1,
                    java.util.Arrays.copyOf(v1.array(), v1.position()));
            store = AarStore.restore(options, budget, dense);
        } finally {
            table.release();
        }
        for (int w = 0; w < 5; w++) {
            for (int k = 0; k < 3; k++) {
                assertThat(values(store, (char) ('a' + k * 2) + "-" + w, "w" + w))
                        .containsExactly("v" + w + k);
            }
        }
        assertThat(store.windowsForTest()).allSatisfy(w -> assertThat(w.present()).hasSize(3));
    }

    @Test
    void shouldPlaceKeysWithTheConfiguredPartitioner() throws IOException {
        // Partition by the key's first byte, as the Flink backend partitions by key group.
        open(
                AarStoreOptions.builder(dir)
                        .partitions(4)
                        .partitioner((key, hash, n) -> key[0] % n)
                        .writeBufferBytes(8 * 1024));
        for (int i = 0; i < 400; i++) {
            append(store, (char) ('a' + i % 4) + "-" + i / 4, "w", "v" + i);
        }
        store.flush();
        for (int i = 0; i < 400; i++) {
            assertThat(values(store, (char) ('a' + i % 4) + "-" + i / 4, "w"))
                    .containsExactly("v" + i);
        }
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "c-7", "w")).containsExactly("v30");
    }

    @Test
    void shouldRejectAPartitionOutsideTheRange() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(2).partitioner((key, hash, n) -> n));
        assertThatThrownBy(() -> append(store, "k", "w", "v"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("partitioner returned 2 for 2 partitions");
    }

    @Test
    void shouldReturnLateAppendsAfterARead() throws IOException {
        open();
        append(store, "k", "w", "a");
        store.flush();
        assertThat(values(store, "k", "w")).containsExactly("a");

        append(store, "k", "w", "late-1");
        assertThat(values(store, "k", "w")).containsExactly("a", "late-1");
        store.flush();
        append(store, "k", "w", "late-2");
        assertThat(values(store, "k", "w")).containsExactly("a", "late-1", "late-2");

        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k", "w")).containsExactly("a", "late-1", "late-2");
    }

    @Test
    void shouldStartANewListAfterRemove() throws IOException {
        open();
        append(store, "k", "w", "a");
        append(store, "other", "w", "x");
        store.flush();
        append(store, "k", "w", "b");

        store.remove(b("k"), b("w"));
        assertThat(values(store, "k", "w")).isEmpty();

        append(store, "k", "w", "c");
        assertThat(values(store, "k", "w")).containsExactly("c");
        store.flush();
        assertThat(values(store, "k", "w")).containsExactly("c");
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k", "w")).containsExactly("c");
        assertThat(values(store, "other", "w")).containsExactly("x");
    }

    @Test
    void shouldDeleteWindowFilesOnceEveryKeyIsRemoved() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(3));
        for (int k = 0; k < 30; k++) {
            append(store, "k" + k, "w", "v" + k);
            append(store, "k" + k, "kept", "v" + k);
        }
        store.flush();
        List<Path> keptFiles = new ArrayList<>(logFiles(dir));
        assertThat(keptFiles).hasSize(6);

        for (int k = 0; k < 30; k++) {
            assertThat(values(store, "k" + k, "w")).containsExactly("v" + k);
            store.remove(b("k" + k), b("w"));
        }

        assertThat(store.windowCount()).isEqualTo(1);
        assertThat(logFiles(dir)).hasSize(3);
        assertThat(values(store, "k0", "kept")).containsExactly("v0");
        assertThat(store.stats().deadBytes()).isZero();
    }

    @Test
    void shouldDropBufferedWindowOnceEveryKeyIsRemoved() throws IOException {
        open();
        append(store, "a", "w", "1");
        append(store, "b", "w", "2");
        store.remove(b("a"), b("w"));
        assertThat(store.windowCount()).isEqualTo(1);
        store.remove(b("b"), b("w"));

        assertThat(store.windowCount()).isZero();
        store.flush();
        assertThat(logFiles(dir)).isEmpty();
    }

    @Test
    void shouldIndexALongBufferedPartitionInMemoryBeforeReadingIt() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(1));
        for (int k = 0; k <= AarStore.READ_FLUSH_THRESHOLD; k++) {
            append(store, "k" + k, "w", "v" + k);
        }
        long buffered = store.memoryUsed();

        assertThat(values(store, "k0", "w")).containsExactly("v0");

        // Indexed where it is: nothing written out only to be read back and deleted.
        assertThat(logFiles(dir)).isEmpty();
        assertThat(store.memoryUsed()).isGreaterThan(buffered);
        append(store, "k1", "w", "late");
        assertThat(values(store, "k1", "w")).containsExactly("v1", "late");
        store.remove(b("k1"), b("w"));
        assertThat(values(store, "k1", "w")).isEmpty();
        assertThat(values(store, "k2", "w")).containsExactly("v2");

        store.flush();
        assertThat(values(store, "k2", "w")).containsExactly("v2");
        assertThat(values(store, "k1", "w")).isEmpty();
    }

    @Test
    void shouldFlushALongChainOfAPartitionWithSegmentsBeforeReadingIt() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(1));
        append(store, "k0", "w", "flushed");
        store.flush();
        for (int k = 0; k <= AarStore.READ_FLUSH_THRESHOLD; k++) {
            append(store, "k" + k, "w", "v" + k);
        }
        long flushed = store.stats().bytesFlushed();

        assertThat(values(store, "k0", "w")).containsExactly("flushed", "v0");

        assertThat(store.stats().bytesFlushed()).isGreaterThan(flushed);
        assertThat(store.loadedPartitions()).isEqualTo(1);
        append(store, "k1", "w", "late");
        assertThat(values(store, "k1", "w")).containsExactly("v1", "late");
    }

    @Test
    void shouldDeleteFilesOnRemoveWindow() throws IOException {
        open();
        for (int k = 0; k < 10; k++) {
            append(store, "k" + k, "w", "v");
        }
        store.flush();
        append(store, "k0", "w", "buffered");
        assertThat(values(store, "k0", "w")).containsExactly("v", "buffered");

        store.removeWindow(b("w"));

        assertThat(logFiles(dir)).isEmpty();
        assertThat(store.windowCount()).isZero();
        assertThat(values(store, "k0", "w")).isEmpty();
        assertThat(store.stats().liveBytes()).isZero();
        assertThat(store.stats().deadBytes()).isZero();
        store.flush();
        assertThat(logFiles(dir)).isEmpty();
    }

    @Test
    void shouldLoadOnePartitionAtATimeWhenTheBudgetIsTight() throws IOException {
        budget = new MemoryBudget(96 * 1024);
        open(AarStoreOptions.builder(dir).partitions(4).writeBufferBytes(8 * 1024));
        Map<String, String> expected = fill(2000);

        int maxLoaded = readAll(expected);

        assertThat(maxLoaded).isEqualTo(1);
        assertThat(store.stats().bytesRead()).isPositive();
    }

    @Test
    void shouldKeepSeveralPartitionsLoadedWhenTheBudgetAllows() throws IOException {
        budget = new MemoryBudget(4 << 20);
        open(AarStoreOptions.builder(dir).partitions(4).writeBufferBytes(8 * 1024));
        Map<String, String> expected = fill(400);

        int maxLoaded = readAll(expected);

        assertThat(maxLoaded).isEqualTo(4);
    }

    private Map<String, String> fill(int keys) throws IOException {
        Map<String, String> expected = new HashMap<>();
        for (int k = 0; k < keys; k++) {
            String value = "value-of-key-" + k + "-padded-to-some-length";
            append(store, "k" + k, "w", value);
            expected.put("k" + k, value);
        }
        store.flush();
        return expected;
    }

    private int readAll(Map<String, String> expected) throws IOException {
        int maxLoaded = 0;
        for (Map.Entry<String, String> e : expected.entrySet()) {
            assertThat(values(store, e.getKey(), "w")).containsExactly(e.getValue());
            maxLoaded = Math.max(maxLoaded, store.loadedPartitions());
        }
        return maxLoaded;
    }

    /**
     * A window partition several times larger than the budget (the case FlowKV exists for): reads
     * stream it instead of failing, fired key by key as Flink does, across seal and restore.
     */
    @Test
    void shouldServeAPartitionLargerThanTheBudgetByStreaming() throws IOException {
        budget = new MemoryBudget(48 * 1024);
        open(AarStoreOptions.builder(dir).partitions(1).writeBufferBytes(8 * 1024));
        Map<String, List<String>> expected = fillLargerThanTheBudget(200, 12);
        assertThat(store.stats().liveBytes()).isGreaterThan(4 * budget.capacity());

        assertThat(forEachValues()).isEqualTo(expected);
        assertThat(store.stats().partitionsStreamed()).isPositive();
        assertThat(store.loadedPartitions()).isZero();

        store = sealAndRestore(store, options, budget);
        assertThat(forEachValues()).isEqualTo(expected);
        append(store, "k7", "w", "late");
        expected.get("k7").add("late");

        long readBefore = store.stats().bytesRead();
        for (Map.Entry<String, List<String>> e : expected.entrySet()) {
            assertThat(values(store, e.getKey(), "w")).as(e.getKey()).isEqualTo(e.getValue());
            store.remove(b(e.getKey()), b("w"));
            assertThat(values(store, e.getKey(), "w")).as(e.getKey()).isEmpty();
        }

        assertThat(store.stats().partitionsStreamed()).isPositive();
        assertThat(store.stats().bytesRead()).isGreaterThan(readBefore);
        assertThat(store.windowCount()).isZero();
        assertThat(logFiles(dir)).isEmpty();
        assertThat(store.stats().liveBytes()).isZero();
        assertThat(store.stats().deadBytes()).isZero();
    }

    @Test
    void shouldStreamForEachWhenNoMemoryIsLeftEvenForTheRemovedKeys() throws IOException {
        budget = new MemoryBudget(48 * 1024);
        open(AarStoreOptions.builder(dir).partitions(1).writeBufferBytes(8 * 1024));
        Map<String, List<String>> expected = fillLargerThanTheBudget(60, 8);
        store.remove(b("k4"), b("w"));
        expected.remove("k4");
        store.flush();
        store.remove(b("k5"), b("w"));
        expected.remove("k5");
        // Another store of the subtask holds the rest of the budget.
        long held = budget.available();
        assertThat(budget.tryReserve(held)).isTrue();
        try {
            assertThat(forEachValues()).isEqualTo(expected);
            for (Map.Entry<String, List<String>> e : expected.entrySet()) {
                assertThat(values(store, e.getKey(), "w")).as(e.getKey()).isEqualTo(e.getValue());
            }
            assertThat(values(store, "k4", "w")).isEmpty();
            assertThat(values(store, "k5", "w")).isEmpty();
        } finally {
            budget.release(held);
        }
        assertThat(store.stats().partitionsStreamed()).isPositive();
    }

    /**
     * Appends {@code rounds} values to each of {@code keys} keys of window "w", flushing between
     * rounds so every key's values are spread over the log; removes some keys midway (REMOVE
     * records in the log, new lists after them) and leaves the last round buffered.
     */
    private Map<String, List<String>> fillLargerThanTheBudget(int keys, int rounds)
            throws IOException {
        Map<String, List<String>> expected = new java.util.TreeMap<>();
        String padding = "-".repeat(100);
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < keys; k++) {
                String value = "k" + k + "-v" + r + padding;
                append(store, "k" + k, "w", value);
                expected.computeIfAbsent("k" + k, key -> new ArrayList<>()).add(value);
            }
            if (r == rounds / 2) {
                for (int k = 0; k < keys; k += 3) {
                    store.remove(b("k" + k), b("w"));
                    expected.get("k" + k).clear();
                }
            }
            if (r < rounds - 1) {
                store.flush();
            }
        }
        return expected;
    }

    /** Every (key, values) of window "w" as forEach visits them. */
    private Map<String, List<String>> forEachValues() throws IOException {
        Map<String, List<String>> seen = new java.util.TreeMap<>();
        store.forEach(
                (key, window, value, off, len) -> {
                    assertThat(new String(window)).isEqualTo("w");
                    seen.computeIfAbsent(new String(key), k -> new ArrayList<>())
                            .add(new String(value, off, len));
                });
        return seen;
    }

    @Test
    void shouldKeepSealedFilesUnchanged() throws IOException {
        open();
        for (int k = 0; k < 20; k++) {
            append(store, "k" + k, "w", "v" + k);
        }
        SealedStore sealed = store.seal();
        Map<Path, byte[]> before = new HashMap<>();
        for (SealedStore.SealedFile f : sealed.files()) {
            before.put(f.path(), Files.readAllBytes(f.path()));
            assertThat(f.length()).isEqualTo(Files.size(f.path()));
        }

        for (int k = 0; k < 20; k++) {
            append(store, "k" + k, "w", "after-seal");
        }
        store.remove(b("k1"), b("w"));
        store.flush();
        store.seal();

        for (Map.Entry<Path, byte[]> e : before.entrySet()) {
            assertThat(Files.readAllBytes(e.getKey())).as("%s", e.getKey()).isEqualTo(e.getValue());
        }
        assertThat(logFiles(dir)).hasSizeGreaterThan(before.size());
        assertThat(values(store, "k2", "w")).containsExactly("v2", "after-seal");
        assertThat(values(store, "k1", "w")).isEmpty();
    }

    @Test
    void shouldVisitEveryLiveValue() throws IOException {
        open();
        append(store, "a", "w1", "1");
        append(store, "b", "w1", "2");
        store.flush();
        append(store, "a", "w1", "3");
        append(store, "a", "w2", "4");
        store.remove(b("b"), b("w1"));

        List<String> seen = new ArrayList<>();
        store.forEach(
                (key, window, value, off, len) ->
                        seen.add(
                                new String(key)
                                        + "@"
                                        + new String(window)
                                        + "="
                                        + new String(value, off, len)));

        assertThat(seen).containsExactlyInAnyOrder("a@w1=1", "a@w1=3", "a@w2=4");
        assertThat(seen.indexOf("a@w1=1")).isLessThan(seen.indexOf("a@w1=3"));
    }

    @Test
    void shouldCountBytesInStats() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(1));
        append(store, "key", "w", "value"); // 3 + 5 bytes; 17 log bytes
        append(store, "key2", "w", "v2");
        assertThat(store.stats().bytesAppended()).isEqualTo(8 + 6);
        assertThat(store.stats().liveBytes()).isEqualTo(17 + 15);

        store.flush();
        assertThat(store.stats().flushes()).isEqualTo(1);
        assertThat(store.stats().bytesFlushed()).isGreaterThanOrEqualTo(17 + 15);
        assertThat(values(store, "key", "w")).containsExactly("value");
        assertThat(store.stats().bytesRead()).isPositive();

        store.remove(b("key"), b("w"));
        assertThat(store.stats().liveBytes()).isEqualTo(15);
        assertThat(store.stats().deadBytes()).isEqualTo(17);
        assertThat(store.memoryUsed()).isPositive().isLessThanOrEqualTo(budget.used());
    }

    @Test
    void shouldRejectADirectoryHoldingStoreFiles() throws IOException {
        open();
        append(store, "k", "w", "v");
        store.flush();

        assertThatThrownBy(() -> AarStore.open(options, budget))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("already holds AAR store files");
    }

    @Test
    void shouldRejectRestoreWithAnotherPartitionCount() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(2));
        append(store, "k", "w", "v");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        AarStoreOptions other = AarStoreOptions.builder(dir).partitions(3).fileIo(io).build();

        assertThatThrownBy(() -> AarStore.restore(other, budget, sealed.manifest()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("written with 2 partitions")
                .hasMessageContaining(sealed.manifest().toString());
    }

    @Test
    void shouldRejectUseAfterClose() throws IOException {
        open();
        store.close();

        assertThatThrownBy(() -> append(store, "k", "w", "v"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void shouldAcceptEmptyValuesAndKeys() throws IOException {
        open();
        append(store, "", "w", "");
        append(store, "", "w", "x");
        store.flush();
        append(store, "", "w", "");

        assertThat(values(store, "", "w")).containsExactly("", "x", "");
    }
}
