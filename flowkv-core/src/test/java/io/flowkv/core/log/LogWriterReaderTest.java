package io.flowkv.core.log;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LogWriterReaderTest {
    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(1 << 20);
    private final FaultInjectingFileIo io = new FaultInjectingFileIo();

    @AfterEach
    void noLeaks() {
        assertThat(budget.used()).as("budget after test").isZero();
        assertThat(io.openChannels()).as("open channels after test").isZero();
    }

    @Test
    void shouldReadBackFramesOfAnySizeIncludingLargerThanStaging() throws IOException {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        Path file = dir.resolve("frames.log");
        List<byte[]> payloads = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        try (IoBuffer staging = IoBuffer.allocate(budget, 256, "staging");
                LogWriter writer = LogWriter.create(io, file, FileType.RMW_VALUE_LOG, 7, staging)) {
            for (int i = 0; i < 200; i++) {
                byte[] payload = new byte[random.nextInt(i % 10 == 0 ? 2000 : 40)];
                random.nextBytes(payload);
                payloads.add(payload);
                // Build some frames piecewise, some in one call.
                if (i % 2 == 0) {
                    offsets.add(writer.appendFrame(payload, 0, payload.length));
                } else {
                    offsets.add(writer.beginFrame());
                    int half = payload.length / 2;
                    writer.putBytes(payload, 0, half);
                    writer.putBytes(payload, half, payload.length - half);
                    assertThat(writer.endFrame()).isEqualTo(payload.length);
                }
            }
            writer.sync();
            assertThat(writer.size()).isEqualTo(Files.size(file));
        }
        try (LogReader reader = LogReader.open(io, file, FileType.RMW_VALUE_LOG, -1)) {
            assertThat(reader.fileId()).isEqualTo(7);
            for (int i = 0; i < payloads.size(); i++) {
                assertThat(reader.readFrame(offsets.get(i)))
                        .as("frame %d, seed %d", i, seed)
                        .containsExactly(payloads.get(i));
            }
            FrameScanner scanner = reader.scanAll(100);
            int i = 0;
            while (scanner.next()) {
                byte[] got = new byte[scanner.payloadLength()];
                System.arraycopy(scanner.array(), scanner.payloadOffset(), got, 0, got.length);
                assertThat(scanner.frameOffset()).isEqualTo(offsets.get(i));
                assertThat(got)
                        .as("scanned frame %d, seed %d", i, seed)
                        .containsExactly(payloads.get(i));
                i++;
            }
            assertThat(i).isEqualTo(payloads.size());
        }
    }

    @Test
    void shouldWriteFramesFromOffHeapMemory() throws IOException {
        Path file = dir.resolve("offheap.log");
        byte[] data = new byte[1000];
        new SplittableRandom(1).nextBytes(data);
        long at;
        try (OffHeapBuffer src = OffHeapBuffer.allocate(budget, 1000, "src");
                IoBuffer staging = IoBuffer.allocate(budget, 128, "staging");
                LogWriter writer = LogWriter.create(io, file, FileType.AUR_DATA_LOG, 1, staging)) {
            src.putBytes(0, data, 0, data.length);
            at = writer.beginFrame();
            writer.putInt(data.length);
            writer.putBytes(src, 0, data.length);
            writer.endFrame();
        }
        try (LogReader reader = LogReader.open(io, file, FileType.AUR_DATA_LOG, -1)) {
            byte[] payload = reader.readFrame(at);
            assertThat(FrameDescriptor.readIntLE(payload, 0)).isEqualTo(1000);
            assertThat(java.util.Arrays.copyOfRange(payload, 4, payload.length))
                    .containsExactly(data);
        }
    }

    @Test
    void shouldNameFileAndOffsetOfACorruptFrame() throws IOException {
        Path file = dir.resolve("corrupt.log");
        long second;
        try (IoBuffer staging = IoBuffer.allocate(budget, 4096, "staging");
                LogWriter writer = LogWriter.create(io, file, FileType.AAR_WINDOW, 1, staging)) {
            writer.appendFrame(new byte[] {1, 2, 3}, 0, 3);
            second = writer.appendFrame(new byte[] {4, 5, 6, 7}, 0, 4);
        }
        flipByte(file, second + FrameDescriptor.HEADER_LENGTH + 2);
        try (LogReader reader = LogReader.open(io, file, FileType.AAR_WINDOW, -1)) {
            assertThatThrownBy(() -> reader.readFrame(second))
                    .isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining(file.toString())
                    .hasMessageContaining("offset " + second)
                    .hasMessageContaining("checksum");
            FrameScanner scanner = reader.scanAll(64);
            assertThat(scanner.next()).isTrue();
            assertThatThrownBy(scanner::next)
                    .isInstanceOf(CorruptLogException.class)
                    .hasMessageContaining("offset " + second);
        }
    }

    @Test
    void shouldRejectWrongHeadersAndTruncatedFiles() throws IOException {
        Path file = dir.resolve("typed.log");
        long end;
        try (IoBuffer staging = IoBuffer.allocate(budget, 4096, "staging");
                LogWriter writer = LogWriter.create(io, file, FileType.AUR_INDEX_LOG, 1, staging)) {
            writer.appendFrame(new byte[100], 0, 100);
            end = writer.size();
        }
        assertThatThrownBy(() -> LogReader.open(io, file, FileType.AUR_DATA_LOG, -1))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("expected AUR_DATA_LOG");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(end - 10);
        }
        assertThatThrownBy(() -> LogReader.open(io, file, FileType.AUR_INDEX_LOG, end))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("truncated");
        try (LogReader reader = LogReader.open(io, file, FileType.AUR_INDEX_LOG, -1)) {
            FrameScanner scanner = reader.scanAll(64);
            assertThatThrownBy(scanner::next).isInstanceOf(CorruptLogException.class);
        }
        flipByte(file, 2);
        assertThatThrownBy(() -> LogReader.open(io, file, FileType.AUR_INDEX_LOG, -1))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("magic");
    }

    /**
     * A scan whose read fails can be retried: the frames after it come out intact. (The scanner
     * used to keep the old buffer length across a failed refill, so the retry verified stale bytes
     * and reported a checksum mismatch for a healthy file.)
     */
    @Test
    void shouldContinueAScanAfterAFailedRead() throws IOException {
        Path file = dir.resolve("read-fault.log");
        SplittableRandom random = new SplittableRandom(5);
        List<byte[]> written = new ArrayList<>();
        try (IoBuffer staging = IoBuffer.allocate(budget, 256, "staging");
                LogWriter writer = LogWriter.create(io, file, FileType.RMW_VALUE_LOG, 1, staging)) {
            for (int i = 0; i < 60; i++) {
                byte[] payload = new byte[1 + random.nextInt(90)];
                random.nextBytes(payload);
                writer.appendFrame(payload, 0, payload.length);
                written.add(payload);
            }
            writer.flush();
        }
        try (LogReader reader = LogReader.open(io, file, FileType.RMW_VALUE_LOG, -1)) {
            FrameScanner scanner = reader.scanAll(128);
            List<byte[]> read = new ArrayList<>();
            io.failReadsAfter(3);
            boolean failed = false;
            while (true) {
                try {
                    if (!scanner.next()) {
                        break;
                    }
                } catch (IOException e) {
                    assertThat(failed).as("only the injected read fails").isFalse();
                    assertThat(e).hasMessageContaining("injected read fault");
                    failed = true;
                    io.heal();
                    continue;
                }
                read.add(
                        Arrays.copyOfRange(
                                scanner.array(),
                                scanner.payloadOffset(),
                                scanner.payloadOffset() + scanner.payloadLength()));
            }
            assertThat(failed).as("a read failed during the scan").isTrue();
            assertThat(read).hasSize(written.size());
            for (int i = 0; i < written.size(); i++) {
                assertThat(read.get(i)).as("frame %d", i).containsExactly(written.get(i));
            }
        }
    }

    @Test
    void shouldRollBackAFailedWriteAndContinue() throws IOException {
        Path file = dir.resolve("full-disk.log");
        long good;
        long afterRetry;
        byte[] big = new byte[3000];
        new SplittableRandom(3).nextBytes(big);
        try (IoBuffer staging = IoBuffer.allocate(budget, 256, "staging");
                LogWriter writer = LogWriter.create(io, file, FileType.RMW_VALUE_LOG, 1, staging)) {
            writer.appendFrame(new byte[] {9}, 0, 1);
            writer.flush();
            good = writer.size();
            io.failWritesAfter(2);
            assertThatThrownBy(() -> writer.appendFrame(big, 0, big.length))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file.toString());
            assertThatThrownBy(() -> writer.appendFrame(big, 0, 1))
                    .hasMessageContaining("failed earlier");
            io.heal();
            writer.truncate(good);
            afterRetry = writer.appendFrame(big, 0, big.length);
            writer.sync();
        }
        assertThat(afterRetry).isEqualTo(good);
        try (LogReader reader = LogReader.open(io, file, FileType.RMW_VALUE_LOG, -1)) {
            assertThat(reader.readFrame(good)).containsExactly(big);
            FrameScanner scanner = reader.scanAll(512);
            int frames = 0;
            while (scanner.next()) {
                frames++;
            }
            assertThat(frames).isEqualTo(2);
        }
    }

    @Test
    void shouldTransferRangesWithoutCopyingThroughUserSpace() throws IOException {
        Path src = dir.resolve("src.log");
        Path dst = dir.resolve("dst.log");
        long second;
        long end;
        try (IoBuffer staging = IoBuffer.allocate(budget, 4096, "staging");
                LogWriter writer = LogWriter.create(io, src, FileType.AUR_DATA_LOG, 1, staging)) {
            writer.appendFrame(new byte[] {1}, 0, 1);
            second = writer.appendFrame(new byte[] {2, 2}, 0, 2);
            writer.appendFrame(new byte[] {3, 3, 3}, 0, 3);
            end = writer.size();
        }
        long copied;
        try (IoBuffer staging = IoBuffer.allocate(budget, 4096, "staging");
                LogWriter writer = LogWriter.create(io, dst, FileType.AUR_DATA_LOG, 2, staging)) {
            writer.flush();
            copied = writer.size();
        }
        try (LogReader reader = LogReader.open(io, src, FileType.AUR_DATA_LOG, -1);
                FileChannel target =
                        FileChannel.open(
                                dst, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            reader.transferTo(second, end - second, target);
        }
        try (LogReader reader = LogReader.open(io, dst, FileType.AUR_DATA_LOG, -1)) {
            assertThat(reader.readFrame(copied)).containsExactly(2, 2);
            assertThat(reader.readFrame(copied + FrameDescriptor.HEADER_LENGTH + 2))
                    .containsExactly(3, 3, 3);
        }
    }

    @Test
    void shouldWriteManifestsAtomically() throws IOException {
        Path manifest = dir.resolve("MANIFEST");
        ManifestFile.write(io, manifest, 1, new byte[] {1, 2, 3});
        ManifestFile.write(io, manifest, 2, new byte[] {4, 5});
        assertThat(ManifestFile.read(io, manifest)).containsExactly(4, 5);
        assertThat(Files.exists(dir.resolve("MANIFEST.tmp"))).isFalse();
        flipByte(manifest, LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH);
        assertThatThrownBy(() -> ManifestFile.read(io, manifest))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(manifest.toString());
    }

    static void flipByte(Path file, long offset) throws IOException {
        try (FileChannel ch =
                FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, offset);
            one.flip();
            byte b = one.get();
            ch.write(ByteBuffer.wrap(new byte[] {(byte) (b ^ 0x5A)}), offset);
        }
    }
}
