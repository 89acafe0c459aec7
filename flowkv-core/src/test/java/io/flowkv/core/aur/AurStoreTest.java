package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.SealedStore;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.log.ManifestFile;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.read;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** API, ETT, compaction, restore, fault and parameter behaviour of the AUR store. */
class AurStoreTest {
    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private final MemoryBudget budget = new MemoryBudget(32L << 20);
    private AurStore store;

    @AfterEach
    void shouldLeakNothing() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    private AurStoreOptions.Builder options() {
        return AurStoreOptions.builder(dir).fileIo(io).writeBufferBytes(4096).jitterSeed(7);
    }

    private AurStore open(AurStoreOptions.Builder builder) throws IOException {
        store = AurStore.open(builder.build(), budget);
        return store;
    }

    private AurStore reopen(AurStoreOptions.Builder builder, SealedStore sealed)
            throws IOException {
        store.close();
        store = null;
        assertThat(budget.used()).isZero();
        store = AurStore.restore(builder.build(), budget, sealed.manifest());
        return store;
    }

    private List<String> storeFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    /**
     * A flush keeps the write buffer's chunks for the appends that follow; a read gives back those
     * no append has taken again, so that prefetched copies have the budget while windows fire.
     */
    @Test
    void shouldKeepWriteBufferChunksAcrossFlushesUntilARead() throws IOException {
        open(options().writeBufferBytes(64 * 1024));
        byte[] value = new byte[1000];
        for (int i = 0; i < 60; i++) {
            store.append(bytes("k" + (i % 5)), timeWindow(0, 10), value, i);
        }
        long filled = store.writeBufferBytes();
        long used = budget.used();
        assertThat(filled).isGreaterThan(48 * 1024);
        store.flush();
        assertThat(store.writeBufferBytes()).as("chunks kept by the flush").isEqualTo(filled);
        for (int i = 0; i < 60; i++) {
            store.append(bytes("k" + (i % 5)), timeWindow(0, 10), value, 100 + i);
        }
        assertThat(store.writeBufferBytes()).as("refilled in the same chunks").isEqualTo(filled);
        assertThat(budget.used()).as("no new charge").isEqualTo(used);
        store.flush();

        assertThat(read(store, bytes("k0"), timeWindow(0, 10))).hasSize(24);
        assertThat(store.writeBufferBytes()).as("after a read").isLessThan(filled - 32 * 1024);
    }

    @Test
    void shouldReturnFlushedValuesThenBufferedValuesInAppendOrder() throws IOException {
        open(options());
        byte[] key = bytes("k");
        byte[] window = timeWindow(0, 10);
        store.append(key, window, bytes("a"), 1);
        store.append(key, window, bytes("b"), 2);
        store.flush();
        store.append(key, window, bytes("c"), 3);
        store.flush();
        store.append(key, window, bytes("d"), 4);
        assertThat(read(store, key, window)).containsExactly("a", "b", "c", "d");
        assertThat(read(store, key, timeWindow(0, 11))).isNull();
        assertThat(read(store, bytes("other"), window)).isNull();
        store.remove(key, window);
        assertThat(read(store, key, window)).isNull();
    }

    @Test
    void shouldEstimateEttAsMaxTimestampPlusSessionGap() throws IOException {
        open(options());
        byte[] key = bytes("k");
        byte[] window = timeWindow(1000, 1300); // gap 300
        store.append(key, window, bytes("a"), 1000);
        assertThat(store.triggerTime(key, window)).isEqualTo(1300);
        store.append(key, window, bytes("b"), 1200);
        assertThat(store.triggerTime(key, window)).isEqualTo(1500);
        store.append(key, window, bytes("late"), 1100);
        assertThat(store.triggerTime(key, window)).isEqualTo(1500);
        store.setTriggerTime(key, window, 1499);
        store.append(key, window, bytes("c"), 1400);
        assertThat(store.triggerTime(key, window)).as("explicit wins").isEqualTo(1499);
        store.setTriggerTime(key, window, 1699);
        assertThat(store.triggerTime(key, window)).isEqualTo(1699);
    }

    @Test
    void shouldTreatWindowsThePredictorCannotDecodeAsUnknown() throws IOException {
        open(options());
        byte[] key = bytes("k");
        byte[] global = new byte[0];
        store.append(key, global, bytes("a"), 5);
        assertThat(store.triggerTime(key, global)).isEqualTo(TriggerTimePredictor.UNKNOWN);
        store.setTriggerTime(key, global, 77);
        assertThat(store.triggerTime(key, global)).isEqualTo(77);
        assertThat(TriggerTimePredictor.sessionGap().estimate(timeWindow(10, 10), 5))
                .isEqualTo(TriggerTimePredictor.UNKNOWN);
        assertThat(
                        TriggerTimePredictor.sessionGap()
                                .estimate(timeWindow(0, 10), Long.MAX_VALUE - 1))
                .isEqualTo(TriggerTimePredictor.UNKNOWN);
    }

    @Test
    void shouldUseACustomPredictor() throws IOException {
        open(options().predictor((window, maxTimestamp) -> maxTimestamp * 2));
        byte[] key = bytes("k");
        store.append(key, bytes("count-window"), bytes("a"), 21);
        assertThat(store.triggerTime(key, bytes("count-window"))).isEqualTo(42);
    }

    @Test
    void shouldTakeTheEarliestTimerOfAHeldWindowAsItsTriggerTime() throws IOException {
        open(options());
        byte[] global = {0};
        store.offerTriggerTime(bytes("absent"), global, 10);
        assertThat(store.liveWindows()).as("a timer alone creates no window").isZero();
        store.append(bytes("k"), global, bytes("v"), 1);
        assertThat(store.triggerTime(bytes("k"), global)).isEqualTo(TriggerTimePredictor.UNKNOWN);
        store.offerTriggerTime(bytes("k"), global, 105);
        store.offerTriggerTime(bytes("k"), global, 200);
        assertThat(store.triggerTime(bytes("k"), global)).as("a later timer").isEqualTo(105);
        store.offerTriggerTime(bytes("k"), global, 103);
        assertThat(store.triggerTime(bytes("k"), global)).as("an earlier timer").isEqualTo(103);
        store.withdrawTriggerTime(bytes("k"), global, 200);
        assertThat(store.triggerTime(bytes("k"), global)).isEqualTo(103);
        store.withdrawTriggerTime(bytes("k"), global, 103);
        assertThat(store.triggerTime(bytes("k"), global))
                .as("its timer deleted, a global window has no estimate")
                .isEqualTo(TriggerTimePredictor.UNKNOWN);
    }

    @Test
    void shouldRejectBadParametersNamingTheParameterAndRange() {
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).readBatchRatio(1.5).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("readBatchRatio")
                .hasMessageContaining("[0.0, 1.0]")
                .hasMessageContaining("1.5");
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).readBatchRatio(-0.01).build())
                .hasMessageContaining("readBatchRatio");
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).readBatchRatio(Double.NaN).build())
                .hasMessageContaining("readBatchRatio");
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).maxSpaceAmplification(1.0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxSpaceAmplification must be in (1.0, 1000.0], was 1.0");
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).writeBufferBytes(0).build())
                .hasMessageContaining("writeBufferBytes");
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).prefetchBufferLimit(-1).build())
                .hasMessageContaining("prefetchBufferLimit");
        assertThatThrownBy(() -> AurStoreOptions.builder(dir).predictor(null).build())
                .hasMessageContaining("predictor");
        assertThatThrownBy(() -> AurStoreOptions.builder(null).build())
                .hasMessageContaining("directory");
    }

    @Test
    void shouldRefuseToOpenOverAnotherStoresFiles() throws IOException {
        open(options());
        store.append(bytes("k"), timeWindow(0, 1), bytes("v"), 0);
        store.flush();
        assertThatThrownBy(() -> AurStore.open(options().build(), budget))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("already holds AUR store file aur-");
    }

    @Test
    void shouldCompactOnAMissWhenSpaceAmplificationExceedsMsaAndDeleteOldFiles()
            throws IOException {
        open(options().maxSpaceAmplification(1.5).jitterSpread(0.0));
        byte[] window = timeWindow(0, 100);
        for (int i = 0; i < 100; i++) {
            store.append(bytes("k" + i), window, bytes("value-" + i), i);
            if (i % 30 == 29) {
                store.flush();
            }
        }
        store.flush();
        List<String> before = storeFiles();
        for (int i = 0; i < 30; i++) {
            store.remove(bytes("k" + i), window);
        }
        assertThat(store.stats().spaceAmplification()).isLessThan(1.5);
        store.compact();
        assertThat(io.transfers()).as("live frames moved with transferTo").isPositive();
        assertThat(store.stats().compactions()).isEqualTo(1);
        assertThat(store.stats().deadBytes()).isZero();
        assertThat(storeFiles()).doesNotContainAnyElementsOf(before).hasSize(2);

        long compactions = store.stats().compactions();
        for (int i = 30; i < 80; i++) {
            store.remove(bytes("k" + i), window);
        }
        assertThat(store.stats().spaceAmplification()).isGreaterThan(1.5);
        assertThat(read(store, bytes("k90"), window)).containsExactly("value-90");
        assertThat(store.stats().compactions())
                .as("a store that only drains is not compacted")
                .isEqualTo(compactions);

        // It grows again: the next miss's index scan compacts.
        long flushedBefore = store.stats().bytesFlushed();
        for (int i = 100; i < 130; i++) {
            store.append(bytes("k" + i), window, bytes("value-" + i), i);
        }
        store.flush();
        List<String> grown = storeFiles();
        long newFrames = store.stats().bytesFlushed() - flushedBefore;
        long written = store.stats().bytesCompactionWritten();
        assertThat(store.stats().spaceAmplification()).isGreaterThan(1.5);
        assertThat(read(store, bytes("k95"), window)).containsExactly("value-95");
        assertThat(store.stats().compactions())
                .as("the miss's index scan compacted")
                .isEqualTo(compactions + 1);
        assertThat(store.stats().deadBytes()).isZero();
        assertThat(store.stats().bytesCompactionWritten()).isPositive();
        for (int i = 0; i < 130; i++) {
            assertThat(read(store, bytes("k" + i), window))
                    .isEqualTo(i < 80 ? null : List.of("value-" + i));
        }
        // Only the log with dead frames was emptied: its 20 live frames moved, the log of
        // k100..k129 (all live) stayed as it was, and the index log was rewritten.
        assertThat(store.stats().bytesCompactionWritten() - written)
                .isEqualTo(store.stats().liveBytes() - newFrames);
        List<String> after = storeFiles();
        assertThat(after).hasSize(3);
        assertThat(after.stream().filter(grown::contains))
                .singleElement()
                .asString()
                .startsWith(AurStore.DATA_PREFIX);
    }

    @Test
    void shouldNotRewriteTheWindowsOfAStoreThatOnlyDrains() throws IOException {
        open(options().maxSpaceAmplification(1.5).jitterSpread(0.0));
        int windows = 400;
        for (int i = 0; i < windows; i++) {
            store.append(bytes("k" + i), timeWindow(i, i + 1), bytes("value-" + i), i);
            if (i % 40 == 39) {
                store.flush();
            }
        }
        store.flush();
        long onDisk = store.stats().liveBytes();

        // Every window fires and is removed, in trigger order, with nothing new arriving.
        for (int i = 0; i < windows; i++) {
            assertThat(read(store, bytes("k" + i), timeWindow(i, i + 1)))
                    .containsExactly("value-" + i);
            store.remove(bytes("k" + i), timeWindow(i, i + 1));
            assertThat(store.stats().liveBytes() + store.stats().deadBytes())
                    .as("a drain takes no more disk than the store had")
                    .isLessThanOrEqualTo(onDisk);
        }
        assertThat(store.stats().compactions()).isZero();
        assertThat(store.stats().bytesCompactionWritten()).isZero();

        // Once the last window is gone, the next flush reclaims everything.
        store.append(bytes("new"), timeWindow(0, 1), bytes("v"), 0);
        store.flush();
        assertThat(store.stats().compactions()).isEqualTo(1);
        assertThat(store.stats().deadBytes()).isZero();
        assertThat(read(store, bytes("new"), timeWindow(0, 1))).containsExactly("v");
    }

    @Test
    void shouldJitterTheCompactionThresholdPerInstanceNeverAboveTheMsa() throws IOException {
        java.util.Set<Double> thresholds = new java.util.HashSet<>();
        for (int seed = 0; seed < 8; seed++) {
            AurStore s =
                    AurStore.open(
                            AurStoreOptions.builder(dir.resolve("j" + seed))
                                    .maxSpaceAmplification(1.5)
                                    .jitterSeed(seed)
                                    .build(),
                            budget);
            assertThat(s.compactionThreshold()).isGreaterThan(1.0).isLessThanOrEqualTo(1.5);
            thresholds.add(s.compactionThreshold());
            s.close();
        }
        assertThat(thresholds).as("instances do not compact in lockstep").hasSizeGreaterThan(1);
    }

    @Test
    void shouldFlushWhenTheBudgetRefusesMoreWriteBuffer() throws IOException {
        MemoryBudget small = new MemoryBudget(512 * 1024);
        AurStore s = AurStore.open(options().writeBufferBytes(64L << 20).build(), small);
        try {
            byte[] window = timeWindow(0, 10);
            String value = "x".repeat(1000);
            for (int i = 0; i < 2000; i++) {
                s.append(bytes("k" + (i % 10)), window, bytes(value), i);
                assertThat(small.used()).isLessThanOrEqualTo(small.capacity());
            }
            assertThat(s.stats().flushes()).as("flushed on budget refusal").isPositive();
            assertThat(read(s, bytes("k3"), window)).hasSize(200);
        } finally {
            s.close();
        }
        assertThat(small.used()).isZero();
    }

    @Test
    void shouldNotResurrectRemovedWindowsAfterRestore() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        byte[] key = bytes("k");
        byte[] window = timeWindow(0, 10);
        store.append(key, window, bytes("old"), 1);
        store.append(bytes("keep"), window, bytes("kept"), 1);
        store.flush();
        store.remove(key, window);
        store.append(key, window, bytes("new"), 2); // same (key, window) again: a new incarnation
        store.setTriggerTime(bytes("keep"), window, 1234);
        SealedStore sealed = store.seal();
        for (SealedStore.SealedFile file : sealed.files()) {
            assertThat(Files.size(file.path())).isEqualTo(file.length());
        }
        reopen(options, sealed);
        assertThat(read(store, key, window)).containsExactly("new");
        assertThat(read(store, bytes("keep"), window)).containsExactly("kept");
        assertThat(store.triggerTime(bytes("keep"), window)).isEqualTo(1234);
        store.compact();
        assertThat(read(store, key, window)).containsExactly("new");
    }

    @Test
    void shouldKeepSealedFilesImmutable() throws IOException {
        open(options());
        byte[] window = timeWindow(0, 10);
        store.append(bytes("a"), window, bytes("1"), 1);
        SealedStore sealed = store.seal();
        store.append(bytes("a"), window, bytes("2"), 2);
        store.flush();
        for (SealedStore.SealedFile file : sealed.files()) {
            assertThat(Files.size(file.path())).isEqualTo(file.length());
        }
        assertThat(read(store, bytes("a"), window)).containsExactly("1", "2");
    }

    @Test
    void shouldSealForACheckpointWithoutFsyncAndRestoreTheSame() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("a"), window, bytes("1"), 1);
        store.flush();
        store.append(bytes("a"), window, bytes("2"), 2);
        int before = io.forces();
        SealedStore sealed = store.seal(false);
        assertThat(io.forces()).as("fsyncs of a non-durable seal").isEqualTo(before);
        reopen(options, sealed);
        assertThat(read(store, bytes("a"), window)).containsExactly("1", "2");

        store.append(bytes("a"), window, bytes("3"), 3);
        store.seal();
        assertThat(io.forces()).as("a durable seal fsyncs").isGreaterThan(before);
    }

    @Test
    void shouldReportACorruptDataFrameWithFileAndOffset() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("k"), window, bytes("some value"), 1);
        SealedStore sealed = store.seal();
        Path data = dir.resolve(sealed.files().get(0).path().getFileName());
        assertThat(data.getFileName().toString()).startsWith("aur-data-");
        flipByte(data, 32 + 8 + 6);
        reopen(options, sealed);
        assertThatThrownBy(() -> read(store, bytes("k"), window))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(data.getFileName().toString())
                .hasMessageContaining("offset 32")
                .hasMessageContaining("checksum");
    }

    @Test
    void shouldServeARequestedWindowWhenOnlyAPredictedWindowIsCorrupt() throws IOException {
        AurStoreOptions.Builder options = options().readBatchRatio(1.0);
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("bad"), window, bytes("corrupted soon"), 1);
        store.append(bytes("good"), window, bytes("fine"), 1);
        SealedStore sealed = store.seal();
        Path data = sealed.files().get(0).path();
        reopen(options, sealed);
        // Frames are written in window-creation order: "bad" is the first frame of the log.
        flipByte(data, 32 + 8 + 6);
        assertThat(read(store, bytes("good"), window)).containsExactly("fine");
        assertThatThrownBy(() -> read(store, bytes("bad"), window))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(data.getFileName().toString());
    }

    @Test
    void shouldCompactOnFlushWhenWindowsAreRemovedWithoutBeingRead() throws IOException {
        open(options().maxSpaceAmplification(1.5));
        byte[] window = timeWindow(0, 10);
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 20; i++) {
                store.append(bytes("r" + round + "k" + i), window, bytes("v" + i), i);
            }
            store.flush();
            for (int i = 0; i < 20; i++) {
                store.remove(bytes("r" + round + "k" + i), window);
            }
        }
        assertThat(store.stats().compactions()).isPositive();
        assertThat(storeFiles().size()).isLessThanOrEqualTo(3);
    }

    @Test
    void shouldRejectACorruptIndexLogOnRestore() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        store.append(bytes("k"), timeWindow(0, 10), bytes("v"), 1);
        SealedStore sealed = store.seal();
        Path index =
                sealed.files().stream()
                        .map(SealedStore.SealedFile::path)
                        .filter(p -> p.getFileName().toString().startsWith("aur-index-"))
                        .findFirst()
                        .orElseThrow();
        flipByte(index, 32 + 8 + 3);
        store.close();
        store = null;
        assertThatThrownBy(() -> AurStore.restore(options.build(), budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(index.getFileName().toString())
                .hasMessageContaining("offset 32");
    }

    @Test
    void shouldRejectAManifestWhoseWindowBytesTheIndexLogsDoNotHold() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        store.append(bytes("k"), timeWindow(0, 10), bytes("value"), 1);
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        // One data log and one index log: the window's data bytes follow 24 bytes of counters,
        // the two lists (a count and 12 bytes per log each), the window count and three longs.
        byte[] payload = ManifestFile.read(io, sealed.manifest());
        ByteBuffer fields = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(fields.getInt(24)).as("data logs").isEqualTo(1);
        assertThat(fields.getInt(40)).as("index logs").isEqualTo(1);
        assertThat(fields.getInt(56)).as("windows").isEqualTo(1);
        long recorded = fields.getLong(84);
        assertThat(recorded).isPositive();
        fields.putLong(84, recorded + 1);
        ManifestFile.write(io, sealed.manifest(), 99, payload);
        assertThatThrownBy(() -> AurStore.restore(options.build(), budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(
                        "the index logs hold "
                                + recorded
                                + " data bytes of a window the manifest records with "
                                + (recorded + 1));
    }

    @Test
    void shouldRestoreManyWindowsWhoseBytesAgreeWithTheIndexAcrossFlushes() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        for (int round = 0; round < 5; round++) {
            for (int w = 0; w < 40; w++) {
                store.append(bytes("k" + w), timeWindow(0, 10), bytes("v" + round), round);
            }
            store.flush();
        }
        SealedStore sealed = store.seal();
        reopen(options, sealed);
        assertThat(store.liveWindows()).isEqualTo(40);
        assertThat(read(store, bytes("k7"), timeWindow(0, 10)))
                .containsExactly("v0", "v1", "v2", "v3", "v4");
    }

    @Test
    void shouldRejectATruncatedDataLogOnRestore() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        store.append(bytes("k"), timeWindow(0, 10), bytes("value"), 1);
        SealedStore sealed = store.seal();
        Path data = sealed.files().get(0).path();
        try (RandomAccessFile file = new RandomAccessFile(data.toFile(), "rw")) {
            file.setLength(file.length() - 3);
        }
        store.close();
        store = null;
        assertThatThrownBy(() -> AurStore.restore(options.build(), budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(data.getFileName().toString())
                .hasMessageContaining("truncated");
    }

    @Test
    void shouldOpenDataLogsAtTheirFirstReadWhenAskedTo() throws IOException {
        AurStoreOptions.Builder options = options().openDataLogsOnRestore(false);
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("k"), window, bytes("value"), 1);
        store.append(bytes("other"), window, bytes("kept"), 1);
        SealedStore sealed = store.seal();
        Path data = sealed.files().get(0).path();
        assertThat(data.getFileName().toString()).startsWith("aur-data-");
        Path aside = data.resolveSibling("aside");
        Files.move(data, aside);
        store.close();
        // The data log is missing, yet the restore succeeds: nothing opened it.
        store = AurStore.restore(options.build(), budget, sealed.manifest());
        assertThatThrownBy(() -> read(store, bytes("k"), window))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(data.getFileName().toString());
        // Once it is there, the read that opens it succeeds; the failed read's batch had admitted
        // this window's prefetched copy, which must not be served unfilled.
        Files.move(aside, data);
        assertThat(read(store, bytes("other"), window)).containsExactly("kept");

        store.close();
        try (RandomAccessFile file = new RandomAccessFile(data.toFile(), "rw")) {
            file.setLength(file.length() - 3);
        }
        store = AurStore.restore(options.build(), budget, sealed.manifest());
        assertThatThrownBy(() -> read(store, bytes("k"), window))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(data.getFileName().toString())
                .hasMessageContaining("truncated");
    }

    @Test
    void shouldRejectACorruptManifest() throws IOException {
        AurStoreOptions.Builder options = options();
        open(options);
        store.append(bytes("k"), timeWindow(0, 10), bytes("value"), 1);
        SealedStore sealed = store.seal();
        flipByte(sealed.manifest(), 32 + 8 + 2);
        store.close();
        store = null;
        assertThatThrownBy(() -> AurStore.restore(options.build(), budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(sealed.manifest().getFileName().toString());
    }

    @Test
    void shouldLoseNothingAcknowledgedWhenAFlushFailsAndSucceedOnRetry() throws IOException {
        AurStoreOptions.Builder options =
                options().writeBufferBytes(1 << 20).backgroundFlush(false);
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("a"), window, bytes("1"), 1);
        store.flush();
        appendRoundRobin(window);
        io.failWritesAfter(1);
        assertThatThrownBy(store::flush)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("aur-");
        io.heal();
        assertThat(read(store, bytes("k3"), window)).contains("v3", "v183").hasSize(10);
        store.flush();
        store.append(bytes("a"), window, bytes("2"), 2);
        SealedStore sealed = store.seal();
        reopen(options, sealed);
        assertThat(read(store, bytes("a"), window)).containsExactly("1", "2");
        assertRoundRobinReads(window);
    }

    @Test
    void shouldWriteTheFramesOfABackgroundFlushAgainWhenTheirWriteFailed() throws IOException {
        AurStoreOptions.Builder options = options().writeBufferBytes(1 << 20);
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("a"), window, bytes("1"), 1);
        store.flush();
        appendRoundRobin(window);
        io.failWritesAfter(1); // the index entries are written, the data frames are not
        store.flush(); // returns: the frames are written on a flush thread
        store.append(bytes("k3"), window, bytes("after"), 300);
        assertThatThrownBy(() -> read(store, bytes("k3"), window))
                .as("the read waits for the write, whose retry fails on the full disk too")
                .isInstanceOf(IOException.class)
                .hasMessageContaining("their values stay in memory");
        io.heal();
        assertThat(read(store, bytes("k3"), window)).contains("v3", "v183", "after").hasSize(11);
        store.append(bytes("a"), window, bytes("2"), 2);
        SealedStore sealed = store.seal();
        reopen(options, sealed);
        assertThat(read(store, bytes("a"), window)).containsExactly("1", "2");
        assertRoundRobinReads(window, "after");
    }

    @Test
    void shouldGoOnWithoutTheLogsAndWaitWhereTheyAreNeededWhileAFlushWrites() throws Exception {
        AurStoreOptions.Builder options = options().writeBufferBytes(1 << 20);
        open(options);
        byte[] window = timeWindow(0, 10);
        store.append(bytes("a"), window, bytes("a1"), 1);
        store.append(bytes("b"), window, bytes("b1"), 1);
        io.holdWrites("flowkv-aur-flush-");
        // A call that waited for the held write too early would wait for ever: after 30 s the
        // write goes on, and the checks that it is still held fail instead.
        Thread safety = releaseWritesAfter(30_000);
        try {
            whileAFlushIsHeld(options, window);
        } finally {
            // A failed check must not leave the flush thread (and close) waiting.
            io.releaseWrites();
            safety.interrupt();
        }
    }

    private Thread releaseWritesAfter(long millis) {
        Thread releaser =
                new Thread(
                        () -> {
                            try {
                                Thread.sleep(millis);
                                io.releaseWrites();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        });
        releaser.setDaemon(true);
        releaser.start();
        return releaser;
    }

    private void whileAFlushIsHeld(AurStoreOptions.Builder options, byte[] window)
            throws Exception {
        // The index entries are written here, the data frames wait on the flush thread.
        store.flush();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (io.heldWrites() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(io.heldWrites()).as("the data frames' write, held").isEqualTo(1);

        store.append(bytes("a"), window, bytes("a2"), 2);
        store.append(bytes("c"), window, bytes("c1"), 3);
        store.remove(bytes("b"), window);
        assertThat(read(store, bytes("c"), window)).containsExactly("c1");
        assertThat(read(store, bytes("b"), window)).as("removed").isNull();
        assertThat(io.heldWrites()).as("nothing so far waited for the write").isEqualTo(1);

        Thread releaser = releaseWritesAfter(200);
        // "a" has a frame in the write held: its read waits for it, then reads it whole.
        assertThat(read(store, bytes("a"), window)).containsExactly("a1", "a2");
        releaser.join();

        SealedStore sealed = store.seal();
        reopen(options, sealed);
        assertThat(read(store, bytes("a"), window)).containsExactly("a1", "a2");
        assertThat(read(store, bytes("b"), window)).as("removed").isNull();
        assertThat(read(store, bytes("c"), window)).containsExactly("c1");
    }

    /** Appends v0 to v199 to keys k0 to k19 of {@code window}, v(i) to k(i mod 20). */
    private void appendRoundRobin(byte[] window) throws IOException {
        for (int i = 0; i < 200; i++) {
            store.append(bytes("k" + (i % 20)), window, bytes("v" + i), i);
        }
    }

    /** Each key of {@link #appendRoundRobin} reads its values in order, k3 then {@code k3More}. */
    private void assertRoundRobinReads(byte[] window, String... k3More) throws IOException {
        for (int k = 0; k < 20; k++) {
            List<String> expected = new ArrayList<>();
            for (int i = k; i < 200; i += 20) {
                expected.add("v" + i);
            }
            if (k == 3) {
                expected.addAll(List.of(k3More));
            }
            assertThat(read(store, bytes("k" + k), window)).isEqualTo(expected);
        }
    }

    @Test
    void shouldLoseNothingWhenACompactionFailsAndSucceedOnRetry() throws IOException {
        open(options().maxSpaceAmplification(1000));
        byte[] window = timeWindow(0, 10);
        for (int i = 0; i < 50; i++) {
            store.append(bytes("k" + i), window, bytes("v" + i), i);
        }
        store.flush();
        for (int i = 0; i < 25; i++) {
            store.remove(bytes("k" + i), window);
        }
        store.append(bytes("k30"), window, bytes("buffered"), 30);
        List<String> before = storeFiles();
        io.failWritesAfter(3);
        assertThatThrownBy(store::compact).isInstanceOf(IOException.class);
        io.heal();
        assertThat(storeFiles()).as("a failed compaction leaves no files").isEqualTo(before);
        for (int i = 25; i < 50; i++) {
            assertThat(read(store, bytes("k" + i), window))
                    .isEqualTo(i == 30 ? List.of("v30", "buffered") : List.of("v" + i));
        }
        store.compact();
        assertThat(storeFiles()).doesNotContainAnyElementsOf(before);
        assertThat(store.stats().deadBytes()).isZero();
        for (int i = 0; i < 50; i++) {
            assertThat(read(store, bytes("k" + i), window))
                    .isEqualTo(
                            i < 25
                                    ? null
                                    : i == 30 ? List.of("v30", "buffered") : List.of("v" + i));
        }
    }

    @Test
    void shouldBoundThePrefetchBufferAndStreamWindowsLargerThanIt() throws IOException {
        long limit = 600;
        open(options().readBatchRatio(1.0).prefetchBufferLimit(limit));
        byte[] window = timeWindow(0, 10);
        for (int i = 0; i < 30; i++) {
            store.append(bytes("k" + i), window, bytes("v".repeat(20) + i), i);
        }
        List<String> big = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            big.add("big" + i);
            store.append(bytes("big"), window, bytes("big" + i), i);
        }
        store.flush();
        assertThat(read(store, bytes("big"), window)).isEqualTo(big);
        assertThat(store.prefetchBufferBytes()).isLessThanOrEqualTo(limit);
        for (int i = 0; i < 30; i++) {
            assertThat(read(store, bytes("k" + i), window)).containsExactly("v".repeat(20) + i);
            assertThat(store.prefetchBufferBytes()).isLessThanOrEqualTo(limit);
        }
        assertThat(store.stats().prefetchHits()).as("smaller batches still hit").isPositive();
        assertThat(store.memoryUsed()).isPositive();
    }

    @Test
    void shouldVisitEveryLiveValueWithForEach() throws IOException {
        open(options());
        byte[] window = timeWindow(0, 10);
        store.append(bytes("a"), window, bytes("1"), 1);
        store.append(bytes("b"), window, bytes("x"), 1);
        store.flush();
        store.remove(bytes("b"), window);
        store.append(bytes("a"), window, bytes("2"), 2);
        List<String> seen = new ArrayList<>();
        store.forEach(
                (key, w, buf, off, len) ->
                        seen.add(new String(key) + "=" + new String(buf, off, len)));
        assertThat(seen).containsExactly("a=1", "a=2");
    }

    @Test
    void shouldFailUseAfterClose() throws IOException {
        open(options());
        store.close();
        assertThatThrownBy(() -> store.append(bytes("k"), new byte[0], bytes("v"), 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        store = null;
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0x5A);
        }
    }
}
