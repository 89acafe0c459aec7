package io.flowkv.core.log;

import io.flowkv.core.BackgroundWork;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;

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
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A {@link LogWriter} writing behind: queued bytes readable at once, failures kept and retried. */
class LogWriteBehindTest {
    private static final ExecutorService POOL = BackgroundWork.pool("log-write-behind-test-");
    private static final int STAGING = 256;

    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(1 << 20);
    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private final List<IoBuffer> buffers = new ArrayList<>();

    /** Names of the threads that made write calls. */
    private final Set<String> writers = ConcurrentHashMap.newKeySet();

    private final CountDownLatch gate = new CountDownLatch(1);

    @AfterEach
    void releaseEverything() {
        gate.countDown();
        buffers.forEach(IoBuffer::close);
        assertThat(budget.used()).as("budget after test").isZero();
        assertThat(io.openChannels()).as("open channels after test").isZero();
    }

    private LogWriter open(Path file) throws IOException {
        IoBuffer staging = buffer();
        List<IoBuffer> spares = List.of(buffer(), buffer(), buffer());
        LogWriter writer = LogWriter.create(io, file, FileType.AUR_DATA_LOG, 3, staging);
        writer.writeBehind(POOL, spares);
        return writer;
    }

    private IoBuffer buffer() {
        IoBuffer b = IoBuffer.allocate(budget, STAGING, "staging");
        buffers.add(b);
        return b;
    }

    /** From now on every write call waits for the gate and records its thread. */
    private void holdWrites() {
        io.faultOnly(
                file -> {
                    writers.add(Thread.currentThread().getName());
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return true;
                });
    }

    @Test
    void shouldServeQueuedBytesToReadersWhileTheDiskIsHeldAndWriteThemInOrder() throws IOException {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        Path file = dir.resolve("behind.log");
        List<byte[]> payloads = new ArrayList<>();
        List<Long> offsets = new ArrayList<>();
        try (LogWriter writer = open(file)) {
            holdWrites();
            try {
                writeWhileHeld(writer, file, random, payloads, offsets, seed);
            } finally {
                // Opened before the writer closes, which waits for the disk, even if a check fails.
                gate.countDown();
            }
            // Frames of every size, some larger than a buffer; each read as soon as flushed.
            for (int i = 0; i < 300; i++) {
                byte[] payload = new byte[random.nextInt(i % 25 == 0 ? 1000 : 120)];
                random.nextBytes(payload);
                payloads.add(payload);
                if (i % 2 == 0) {
                    offsets.add(writer.appendFrame(payload, 0, payload.length));
                } else {
                    offsets.add(writer.beginFrame());
                    int half = payload.length / 2;
                    writer.putBytes(payload, 0, half);
                    writer.putBytes(payload, half, payload.length - half);
                    writer.endFrame();
                }
                if (i % 7 == 0) {
                    writer.flush();
                    int k = random.nextInt(payloads.size());
                    try (LogReader reader =
                            LogReader.open(
                                    io, file, FileType.AUR_DATA_LOG, writer.size(), writer)) {
                        assertThat(reader.readFrame(offsets.get(k)))
                                .as("frame %d while writing, seed %d", k, seed)
                                .containsExactly(payloads.get(k));
                    }
                }
            }
            writer.sync();
            assertThat(Files.size(file)).isEqualTo(writer.size());
        }
        assertThat(writers)
                .as(
                        "threads that wrote (the header of a frame larger than a buffer is patched by"
                                + " the writer's own)")
                .anyMatch(t -> t.startsWith("log-write-behind-test-"));
        try (LogReader reader = LogReader.open(io, file, FileType.AUR_DATA_LOG, -1)) {
            FrameScanner scanner = reader.scanAll(100);
            int i = 0;
            while (scanner.next()) {
                byte[] got = new byte[scanner.payloadLength()];
                System.arraycopy(scanner.array(), scanner.payloadOffset(), got, 0, got.length);
                assertThat(scanner.frameOffset()).isEqualTo(offsets.get(i));
                assertThat(got).as("frame %d, seed %d", i, seed).containsExactly(payloads.get(i));
                i++;
            }
            assertThat(i).isEqualTo(payloads.size());
        }
    }

    /** Frames that fit the staging buffer and its spares, flushed and read while writes wait. */
    private void writeWhileHeld(
            LogWriter writer,
            Path file,
            SplittableRandom random,
            List<byte[]> payloads,
            List<Long> offsets,
            long seed)
            throws IOException {
        for (int i = 0; i < 12; i++) {
            byte[] payload = new byte[random.nextInt(40)];
            random.nextBytes(payload);
            payloads.add(payload);
            offsets.add(writer.appendFrame(payload, 0, payload.length));
        }
        writer.flush();
        assertThat(Files.size(file)).as("nothing written yet").isEqualTo(LogFileHeader.LENGTH);
        try (LogReader reader =
                LogReader.open(io, file, FileType.AUR_DATA_LOG, writer.size(), writer)) {
            for (int i = 0; i < payloads.size(); i++) {
                assertThat(reader.readFrame(offsets.get(i)))
                        .as("frame %d from memory, seed %d", i, seed)
                        .containsExactly(payloads.get(i));
            }
        }
    }

    @Test
    void shouldKeepTheBytesOfAFailedBackgroundWriteUntilAWriteSucceeds() throws IOException {
        Path file = dir.resolve("full-disk.log");
        byte[] first = {1, 2, 3};
        byte[] second = new byte[100];
        new SplittableRandom(5).nextBytes(second);
        long good;
        long firstAt;
        long secondAt;
        try (LogWriter writer = open(file)) {
            firstAt = writer.appendFrame(first, 0, first.length);
            io.failWrites();
            secondAt = writer.appendFrame(second, 0, second.length);
            writer.flush();
            good = writer.size();
            try (LogReader reader = LogReader.open(io, file, FileType.AUR_DATA_LOG, good, writer)) {
                // The failed bytes are read from memory; the kernel cannot copy them.
                assertThat(reader.readFrame(firstAt)).containsExactly(first);
                assertThat(reader.readFrame(secondAt)).containsExactly(second);
                try (FileChannel target =
                        FileChannel.open(
                                dir.resolve("copy"),
                                StandardOpenOption.CREATE,
                                StandardOpenOption.WRITE)) {
                    assertThatThrownBy(() -> reader.transferTo(firstAt, good - firstAt, target))
                            .isInstanceOf(IOException.class)
                            .hasMessageContaining(file.toString())
                            .hasMessageContaining("background write failed");
                }
            }
            assertThatThrownBy(writer::settle)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file.toString());
            assertThatThrownBy(() -> writer.appendFrame(first, 0, 1))
                    .hasMessageContaining("failed earlier");
            io.heal();
            // Rolling back to a size the writer reported writes what it still held below it.
            writer.truncate(good);
            writer.appendFrame(first, 0, 2);
            writer.sync();
        }
        try (LogReader reader = LogReader.open(io, file, FileType.AUR_DATA_LOG, -1)) {
            assertThat(reader.readFrame(firstAt)).containsExactly(first);
            assertThat(reader.readFrame(secondAt)).containsExactly(second);
            assertThat(reader.readFrame(good)).containsExactly(1, 2);
            ByteBuffer all = ByteBuffer.allocate((int) (reader.size() - firstAt));
            reader.readFully(firstAt, all);
            assertThat(all.hasRemaining()).isFalse();
        }
    }

    @Test
    void shouldDropQueuedBytesPastATruncationAndStaySynchronousWithoutSpares() throws IOException {
        Path file = dir.resolve("rolled-back.log");
        long good;
        try (LogWriter writer = open(file)) {
            writer.appendFrame(new byte[] {7}, 0, 1);
            writer.flush();
            good = writer.size();
            io.failWrites();
            writer.appendFrame(new byte[100], 0, 100);
            writer.flush();
            io.heal();
            writer.truncate(good);
            writer.sync();
        }
        assertThat(Files.size(file)).isEqualTo(good);
        Path plain = dir.resolve("plain.log");
        try (IoBuffer staging = IoBuffer.allocate(budget, STAGING, "staging");
                LogWriter writer = LogWriter.create(io, plain, FileType.AUR_DATA_LOG, 4, staging)) {
            writer.writeBehind(POOL, List.of());
            writer.appendFrame(new byte[] {1}, 0, 1);
            writer.flush();
            assertThat(Files.size(plain)).as("written by flush itself").isEqualTo(writer.size());
        }
    }
}
