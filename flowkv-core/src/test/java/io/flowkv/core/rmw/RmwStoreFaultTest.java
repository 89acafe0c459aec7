package io.flowkv.core.rmw;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.SealedStore;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Corrupt, truncated and missing files, and writes that fail. */
class RmwStoreFaultTest {
    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(16L << 20);
    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private RmwStore store;

    @AfterEach
    void tearDown() throws IOException {
        io.heal();
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    private RmwStoreOptions options() {
        return RmwStoreOptions.builder(dir).fileIo(io).jitterSpread(0).build();
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int v = f.read();
            f.seek(offset);
            f.write(v ^ 0x5A);
        }
    }

    private List<Path> files(String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(suffix)).sorted().toList();
        }
    }

    @Test
    void shouldReportACorruptValueOnGetWithFileAndOffset() throws IOException {
        store = RmwStore.open(options(), budget);
        store.put(b("first"), b("w"), b("value-1"));
        store.put(b("second"), b("w"), b("value-2"));
        store.flush();
        Path segment = files(".log").get(0);
        int firstFrame = RmwRecordDescriptor.frameLength(5, 1, 7);
        long secondFrameAt = LogFileHeader.LENGTH + firstFrame;
        // Last value byte of the second frame.
        flipByte(segment, secondFrameAt + firstFrame);
        assertThat(store.get(b("first"), b("w"))).isEqualTo(b("value-1"));
        assertThatThrownBy(() -> store.get(b("second"), b("w")))
                .isInstanceOfSatisfying(
                        CorruptLogException.class,
                        e -> {
                            assertThat(e.file()).isEqualTo(segment);
                            assertThat(e.offset()).isEqualTo(secondFrameAt);
                        })
                .hasMessageContaining("checksum");
    }

    @Test
    void shouldReportACorruptSegmentOnRestoreWithFileAndOffset() throws IOException {
        store = RmwStore.open(options(), budget);
        for (int i = 0; i < 10; i++) {
            store.put(b("key" + i), b("w"), b("value" + i));
        }
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path segment = sealed.files().get(0).path();
        long thirdFrameAt = LogFileHeader.LENGTH + 2L * RmwRecordDescriptor.frameLength(4, 1, 6);
        flipByte(segment, thirdFrameAt + FrameDescriptor.HEADER_LENGTH + 3);
        assertThatThrownBy(() -> RmwStore.restore(options(), budget, sealed.manifest()))
                .isInstanceOfSatisfying(
                        CorruptLogException.class,
                        e -> {
                            assertThat(e.file()).isEqualTo(segment);
                            assertThat(e.offset()).isEqualTo(thirdFrameAt);
                        });
    }

    @Test
    void shouldReportATruncatedSegmentOnRestore() throws IOException {
        store = RmwStore.open(options(), budget);
        for (int i = 0; i < 10; i++) {
            store.put(b("key" + i), b("w"), b("value" + i));
        }
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path segment = sealed.files().get(0).path();
        long length = sealed.files().get(0).length();
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            f.setLength(length - 5);
        }
        assertThatThrownBy(() -> RmwStore.restore(options(), budget, sealed.manifest()))
                .isInstanceOfSatisfying(
                        CorruptLogException.class, e -> assertThat(e.file()).isEqualTo(segment))
                .hasMessageContaining("truncated");
    }

    @Test
    void shouldSealForACheckpointWithoutFsyncAndRestoreTheSame() throws IOException {
        store = RmwStore.open(options(), budget);
        for (int i = 0; i < 50; i++) {
            store.put(b("k" + i), b("w"), b("v" + i));
        }
        int before = io.forces();
        SealedStore sealed = store.seal(false);
        assertThat(io.forces()).as("fsyncs of a non-durable seal").isEqualTo(before);
        store.close();
        store = RmwStore.restore(options(), budget, sealed.manifest());
        assertThat(store.size()).isEqualTo(50);
        assertThat(store.get(b("k7"), b("w"))).isEqualTo(b("v7"));

        store.put(b("k50"), b("w"), b("v50"));
        store.seal();
        assertThat(io.forces()).as("a durable seal fsyncs").isGreaterThan(before);
    }

    @Test
    void shouldIgnoreBytesAppendedPastTheSealedLength() throws IOException {
        store = RmwStore.open(options(), budget);
        store.put(b("k"), b("w"), b("v"));
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        // A torn append after the seal: garbage past the length the manifest relies on.
        Files.write(
                sealed.files().get(0).path(),
                new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9},
                java.nio.file.StandardOpenOption.APPEND);
        store = RmwStore.restore(options(), budget, sealed.manifest());
        assertThat(store.get(b("k"), b("w"))).isEqualTo(b("v"));
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void shouldCountFramesOfAFlushThatMetCorruptionAsDeadAndRetry() throws IOException {
        store = RmwStore.open(options(), budget);
        store.put(b("a"), b("w"), b("1"));
        store.put(b("b"), b("w"), b("2"));
        store.flush();
        Path segment = files(".log").get(0);
        // Corrupt a's frame: the flush of a's new value must check the key stored there.
        flipByte(segment, LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH + 14);
        store.put(b("c"), b("w"), b("3"));
        store.put(b("a"), b("w"), b("new"));
        assertThatThrownBy(() -> store.flush()).isInstanceOf(CorruptLogException.class);
        long frames = 0;
        for (Path f : files(".log")) {
            frames += Files.size(f) - LogFileHeader.LENGTH;
        }
        assertThat(store.stats().liveBytes() + store.stats().deadBytes()).isEqualTo(frames);
        assertThat(store.get(b("a"), b("w"))).isEqualTo(b("new"));
        assertThat(store.get(b("b"), b("w"))).isEqualTo(b("2"));
        assertThat(store.get(b("c"), b("w"))).isEqualTo(b("3"));
    }

    @Test
    void shouldReportAMissingSegmentOnRestore() throws IOException {
        store = RmwStore.open(options(), budget);
        store.put(b("k"), b("w"), b("v"));
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Files.delete(sealed.files().get(0).path());
        assertThatThrownBy(() -> RmwStore.restore(options(), budget, sealed.manifest()))
                .isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining(sealed.files().get(0).path().getFileName().toString());
    }

    @Test
    void shouldReportACorruptManifest() throws IOException {
        store = RmwStore.open(options(), budget);
        store.put(b("k"), b("w"), b("v"));
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        flipByte(sealed.manifest(), LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH + 1);
        assertThatThrownBy(() -> RmwStore.restore(options(), budget, sealed.manifest()))
                .isInstanceOfSatisfying(
                        CorruptLogException.class,
                        e -> assertThat(e.file()).isEqualTo(sealed.manifest()));
    }

    @Test
    void shouldKeepEverythingWhenAFlushFailsAndSucceedOnRetry() throws IOException {
        store = RmwStore.open(options(), budget);
        for (int i = 0; i < 100; i++) {
            store.put(b("key" + i), b("w"), b("old" + i));
        }
        store.flush();
        long logged = Files.size(files(".log").get(0));
        for (int i = 0; i < 100; i += 2) {
            store.put(b("key" + i), b("w"), b("new" + i));
        }
        store.remove(b("key1"), b("w"));
        io.failWrites();
        assertThatThrownBy(() -> store.flush())
                .isInstanceOf(IOException.class)
                .hasStackTraceContaining("injected");
        assertThat(Files.size(files(".log").get(0)))
                .as("partial frames rolled back")
                .isEqualTo(logged);
        assertThatThrownBy(() -> store.flush()).isInstanceOf(IOException.class);
        for (int i = 0; i < 100; i++) {
            assertThat(store.get(b("key" + i), b("w")))
                    .isEqualTo(i == 1 ? null : b((i % 2 == 0 ? "new" : "old") + i));
        }
        io.heal();
        SealedStore sealed = store.seal();
        store.close();
        store = RmwStore.restore(options(), budget, sealed.manifest());
        for (int i = 0; i < 100; i++) {
            assertThat(store.get(b("key" + i), b("w")))
                    .isEqualTo(i == 1 ? null : b((i % 2 == 0 ? "new" : "old") + i));
        }
        assertThat(store.size()).isEqualTo(99);
    }

    @Test
    void shouldKeepEverythingWhenACompactionFailsCreatingItsOutput() throws IOException {
        failCompactionAndRetry(io::failWrites, 8, "Could not create");
    }

    @Test
    void shouldKeepEverythingWhenACompactionFailsCopyingShortRuns() throws IOException {
        // The output's header is written; appending the frames copied through memory fails.
        failCompactionAndRetry(() -> io.failWritesAfter(1), 8, "Error writing");
    }

    @Test
    void shouldKeepEverythingWhenACompactionFailsTransferringLongRuns() throws IOException {
        // Large values make runs long enough for transferTo, which fails after the header.
        failCompactionAndRetry(() -> io.failWritesAfter(1), 300, "Error transferring");
    }

    private static byte[] value(String prefix, int i, int size) {
        byte[] v = new byte[size];
        java.util.Arrays.fill(v, (byte) '.');
        byte[] p = b(prefix + i);
        System.arraycopy(p, 0, v, 0, p.length);
        return v;
    }

    private void failCompactionAndRetry(Runnable injectFailure, int valueSize, String failure)
            throws IOException {
        store = RmwStore.open(options(), budget);
        for (int i = 0; i < 100; i++) {
            store.put(b("key" + i), b("w"), value("old", i, valueSize));
        }
        store.flush();
        for (int i = 0; i < 30; i++) {
            store.put(b("key" + i), b("w"), value("new", i, valueSize));
        }
        store.flush();
        assertThat(store.stats().compactions()).isZero();
        List<Path> before = files(".log");
        injectFailure.run();
        assertThatThrownBy(() -> store.compact())
                .isInstanceOf(IOException.class)
                .hasMessageContaining(failure)
                .hasStackTraceContaining("injected");
        assertThat(files(".log")).as("failed output deleted, old segments kept").isEqualTo(before);
        assertThat(store.stats().compactions()).isZero();
        for (int i = 0; i < 100; i++) {
            assertThat(store.get(b("key" + i), b("w")))
                    .isEqualTo(value(i < 30 ? "new" : "old", i, valueSize));
        }
        io.heal();
        store.compact();
        assertThat(store.stats().compactions()).isEqualTo(1);
        assertThat(store.stats().deadBytes()).isZero();
        assertThat(files(".log")).doesNotContainAnyElementsOf(before);
        for (int i = 0; i < 100; i++) {
            assertThat(store.get(b("key" + i), b("w")))
                    .isEqualTo(value(i < 30 ? "new" : "old", i, valueSize));
        }
        store.put(b("after"), b("w"), b("x"));
        SealedStore sealed = store.seal();
        store.close();
        store = RmwStore.restore(options(), budget, sealed.manifest());
        assertThat(store.size()).isEqualTo(101);
        assertThat(store.get(b("key5"), b("w"))).isEqualTo(value("new", 5, valueSize));
    }

    @Test
    void shouldReportACorruptFrameFoundByCompactionAndKeepTheOldSegments() throws IOException {
        store = RmwStore.open(options(), budget);
        for (int i = 0; i < 10; i++) {
            store.put(b("key" + i), b("w"), b("value" + i));
        }
        store.flush();
        Path segment = files(".log").get(0);
        store.put(b("key0"), b("w"), b("changed"));
        store.flush();
        long secondFrameAt = LogFileHeader.LENGTH + RmwRecordDescriptor.frameLength(4, 1, 6);
        flipByte(segment, secondFrameAt + FrameDescriptor.HEADER_LENGTH + 2);
        List<Path> before = files(".log");
        assertThatThrownBy(() -> store.compact())
                .isInstanceOfSatisfying(
                        CorruptLogException.class,
                        e -> {
                            assertThat(e.file()).isEqualTo(segment);
                            assertThat(e.offset()).isEqualTo(secondFrameAt);
                        });
        assertThat(files(".log")).isEqualTo(before);
        assertThat(store.get(b("key0"), b("w"))).isEqualTo(b("changed"));
        assertThat(store.get(b("key9"), b("w"))).isEqualTo(b("value9"));
    }

    @Test
    void shouldReleaseTheBudgetWhenRestoreFails() throws IOException {
        store = RmwStore.open(options(), budget);
        store.put(b("k"), b("w"), b("v"));
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        flipByte(sealed.files().get(0).path(), LogFileHeader.LENGTH + 10);
        assertThatThrownBy(() -> RmwStore.restore(options(), budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class);
        assertThat(budget.used()).isZero();
    }
}
