package io.flowkv.core.aar;

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
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

import static io.flowkv.core.aar.AarTesting.append;
import static io.flowkv.core.aar.AarTesting.logFiles;
import static io.flowkv.core.aar.AarTesting.sealAndRestore;
import static io.flowkv.core.aar.AarTesting.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AarStoreFaultTest {
    /** A byte inside the first frame's payload. */
    private static final long PAYLOAD_BYTE =
            LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH + 3;

    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private final MemoryBudget budget = new MemoryBudget(1 << 20);
    private AarStoreOptions options;
    private AarStore store;

    private void open(long writeBufferBytes) throws IOException {
        options =
                AarStoreOptions.builder(dir)
                        .partitions(1)
                        .writeBufferBytes(writeBufferBytes)
                        .ioBufferBytes(4096)
                        .fileIo(io)
                        .build();
        store = AarStore.open(options, budget);
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
    void shouldNameFileAndOffsetWhenAFrameIsCorruptOnRead() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        store.flush();
        Path file = logFiles(dir).get(0);
        flipByte(file, PAYLOAD_BYTE);

        CorruptLogException e =
                catchThrowableOfType(CorruptLogException.class, () -> values(store, "k", "w"));

        assertThat(e.file()).isEqualTo(file);
        assertThat(e.offset()).isEqualTo(LogFileHeader.LENGTH);
        assertThat(e).hasMessageContaining(file.toString()).hasMessageContaining("checksum");
        assertThat(store.loadedPartitions()).isZero();
    }

    @Test
    void shouldSealForACheckpointWithoutFsyncAndRestoreTheSame() throws IOException {
        open(1 << 20);
        for (int i = 0; i < 20; i++) {
            append(store, "k" + (i % 3), "w", "value-" + i);
        }
        int before = io.forces();
        SealedStore sealed = store.seal(false);
        assertThat(io.forces()).as("fsyncs of a non-durable seal").isEqualTo(before);
        List<String> k0 = values(store, "k0", "w");
        store.close();
        store = AarStore.restore(options, budget, sealed.manifest());
        assertThat(values(store, "k0", "w")).isEqualTo(k0).hasSize(7);

        append(store, "k1", "w", "after");
        store.seal();
        assertThat(io.forces()).as("a durable seal fsyncs").isGreaterThan(before);
    }

    @Test
    void shouldNameFileAndOffsetWhenAFrameIsCorruptOnRestore() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path file = sealed.files().get(0).path();
        flipByte(file, PAYLOAD_BYTE);

        CorruptLogException e =
                catchThrowableOfType(
                        CorruptLogException.class,
                        () -> AarStore.restore(options, budget, sealed.manifest()));

        assertThat(e.file()).isEqualTo(file);
        assertThat(e.offset()).isEqualTo(LogFileHeader.LENGTH);
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldLeaveTheCheckToTheReadWhenTheCallerVerifiedTheFilesBeforeTheRestore()
            throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path file = sealed.files().get(0).path();
        flipByte(file, PAYLOAD_BYTE);
        AarStoreOptions unverified =
                AarStoreOptions.builder(dir)
                        .partitions(1)
                        .writeBufferBytes(1 << 20)
                        .ioBufferBytes(4096)
                        .fileIo(io)
                        .verifyOnRestore(false)
                        .build();

        store = AarStore.restore(unverified, budget, sealed.manifest());

        CorruptLogException e =
                catchThrowableOfType(CorruptLogException.class, () -> values(store, "k", "w"));
        assertThat(e.file()).isEqualTo(file);
        assertThat(e.offset()).isEqualTo(LogFileHeader.LENGTH);
    }

    @Test
    void shouldNameTheRecordWhenAFrameWithAValidChecksumHoldsABadRecord() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        append(store, "k2", "w", "value");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path file = sealed.files().get(0).path();
        // The second record's type byte: 9 header bytes + "k" + "value" into the payload.
        long secondRecord = LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH + 15;
        rewriteFramePayloadByte(file, secondRecord, (byte) 7);

        CorruptLogException e =
                catchThrowableOfType(
                        CorruptLogException.class,
                        () -> AarStore.restore(options, budget, sealed.manifest()));

        assertThat(e.file()).isEqualTo(file);
        assertThat(e.offset()).isEqualTo(secondRecord);
        assertThat(e).hasMessageContaining("unknown AAR record type 7");
    }

    /**
     * Changes one payload byte of the first frame and fixes its checksum, as a buggy writer would.
     */
    private static void rewriteFramePayloadByte(Path file, long offset, byte value)
            throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        bytes[(int) offset] = value;
        int payload = LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH;
        int length = FrameDescriptor.readIntLE(bytes, LogFileHeader.LENGTH);
        CRC32C crc = new CRC32C();
        crc.update(bytes, payload, length);
        FrameDescriptor.writeIntLE(bytes, LogFileHeader.LENGTH + 4, (int) crc.getValue());
        Files.write(file, bytes);
    }

    @Test
    void shouldDetectATruncatedFileOnRestore() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path file = sealed.files().get(0).path();
        long length = Files.size(file);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(length - 2);
        }

        assertThatThrownBy(() -> AarStore.restore(options, budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("truncated");
    }

    @Test
    void shouldNameAMissingFileOnRestore() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        Path file = sealed.files().get(0).path();
        Files.delete(file);

        assertThatThrownBy(() -> AarStore.restore(options, budget, sealed.manifest()))
                .isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining(file.toString());
    }

    @Test
    void shouldDetectACorruptManifest() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "value");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        flipByte(sealed.manifest(), PAYLOAD_BYTE);

        assertThatThrownBy(() -> AarStore.restore(options, budget, sealed.manifest()))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(sealed.manifest().toString());
    }

    @Test
    void shouldKeepBufferedValuesWhenAFlushFailsAndSucceedOnRetry() throws IOException {
        open(1 << 20);
        for (int i = 0; i < 50; i++) {
            append(store, "k" + (i % 5), "w" + (i % 3), "v" + i);
        }
        io.failWrites();

        assertThatThrownBy(() -> store.flush())
                .isInstanceOf(IOException.class)
                .hasMessageContaining(dir.toString());
        assertThat(values(store, "k0", "w0")).containsExactly("v0", "v15", "v30", "v45");

        io.heal();
        store.flush();
        assertThat(values(store, "k0", "w0")).containsExactly("v0", "v15", "v30", "v45");
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k0", "w0")).containsExactly("v0", "v15", "v30", "v45");
        assertThat(values(store, "k4", "w1")).containsExactly("v4", "v19", "v34", "v49");
    }

    @Test
    void shouldLoseNoAcknowledgedAppendWhenAnAutomaticFlushFails() throws IOException {
        open(2048);
        List<String> acknowledged = new ArrayList<>();
        // Some writes succeed first, so the failure hits the middle of a flush: one segment
        // holds a partial frame that must be rolled back.
        io.failWritesAfter(2);
        IOException failure = null;
        for (int i = 0; i < 2000 && failure == null; i++) {
            try {
                append(store, "k", "w" + (i % 4), "value-" + i);
                acknowledged.add("w" + (i % 4) + ":value-" + i);
            } catch (IOException e) {
                failure = e;
            }
        }
        assertThat(failure).as("an automatic flush failed").isNotNull();

        io.heal();
        for (int i = 2000; i < 2100; i++) {
            append(store, "k", "w" + (i % 4), "value-" + i);
            acknowledged.add("w" + (i % 4) + ":value-" + i);
        }
        assertThat(readAll()).isEqualTo(expectedByWindow(acknowledged));
        store = sealAndRestore(store, options, budget);
        assertThat(readAll()).isEqualTo(expectedByWindow(acknowledged));
    }

    @Test
    void shouldAbandonTheSegmentWhenEvenTheRollbackFails() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "before");
        store.flush();
        append(store, "k", "w", "during");
        io.failWrites();
        io.failTruncate();

        assertThatThrownBy(() -> store.flush()).isInstanceOf(IOException.class);

        io.heal();
        store.flush();
        assertThat(logFiles(dir)).hasSize(2);
        assertThat(values(store, "k", "w")).containsExactly("before", "during");
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k", "w")).containsExactly("before", "during");
    }

    @Test
    void shouldRetryWhenASegmentCannotBeCreated() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "v");
        io.failCreate();

        assertThatThrownBy(() -> store.flush()).hasMessageContaining("cannot create");
        assertThat(logFiles(dir)).isEmpty();

        io.heal();
        store.flush();
        assertThat(values(store, "k", "w")).containsExactly("v");
    }

    @Test
    void shouldFailSealWhenSyncFailsAndSealLater() throws IOException {
        open(1 << 20);
        append(store, "k", "w", "v");
        store.flush();
        io.failWrites();

        assertThatThrownBy(() -> store.seal()).isInstanceOf(IOException.class);

        io.heal();
        append(store, "k", "w", "v2");
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k", "w")).containsExactly("v", "v2");
    }

    private List<String> readAll() throws IOException {
        List<String> all = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            for (String v : values(store, "k", "w" + w)) {
                all.add("w" + w + ":" + v);
            }
        }
        return all;
    }

    private static List<String> expectedByWindow(List<String> acknowledged) {
        List<String> out = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            for (String v : acknowledged) {
                if (v.startsWith("w" + w + ":")) {
                    out.add(v);
                }
            }
        }
        return out;
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.seek(offset);
            int b = raf.read();
            raf.seek(offset);
            raf.write(b ^ 0x5A);
        }
    }
}
