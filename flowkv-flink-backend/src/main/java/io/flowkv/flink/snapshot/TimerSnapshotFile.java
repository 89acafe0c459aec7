package io.flowkv.flink.snapshot;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.timers.FlowKVTimerQueue;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiConsumer;

/**
 * The timers of one queue FlowKV stores, written by an incremental checkpoint's synchronous part
 * and uploaded with the checkpoint's files, so that neither the checkpoint nor the restore holds
 * them in memory. One frame per timer:
 *
 * <pre>
 *   file:   [LogFileHeader, type TIMER_SNAPSHOT, file id = queue index][frame][frame]...
 *   frame payload: [key group:int, little-endian][timer, serialized by the queue's serializer]
 * </pre>
 *
 * Frames carry their CRC32C ({@link LogWriter}); the file's CRC32C and length are also in the
 * checkpoint metadata's file list. Layout described in docs/FORMAT.md.
 */
@Internal
public final class TimerSnapshotFile {
    private static final int STAGING_BYTES = 64 * 1024;

    private TimerSnapshotFile() {}

    /** Writes every timer of {@code queue} to {@code file}; returns the file's length. */
    static long write(FlowKVTimerQueue<?> queue, Path file, int id) throws IOException {
        Files.createDirectories(file.getParent());
        MemoryBudget staging = new MemoryBudget(STAGING_BYTES);
        try (IoBuffer buffer = IoBuffer.allocate(staging, STAGING_BYTES, "timer snapshot staging");
                LogWriter writer =
                        LogWriter.create(
                                FileIo.DEFAULT, file, FileType.TIMER_SNAPSHOT, id, buffer)) {
            try {
                queue.forEachSerialized(
                        (keyGroup, timer) -> {
                            try {
                                writer.beginFrame();
                                writer.putInt(keyGroup);
                                writer.putBytes(timer, 0, timer.length);
                                writer.endFrame();
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        });
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
            writer.flush();
            return writer.size();
        }
    }

    /** Visits every (key group, serialized timer) of {@code file}, checksums verified. */
    public static void read(Path file, BiConsumer<Integer, byte[]> visitor) throws IOException {
        try (LogReader reader = LogReader.open(FileIo.DEFAULT, file, FileType.TIMER_SNAPSHOT, -1)) {
            FrameScanner frames = reader.scanAll(STAGING_BYTES);
            while (frames.next()) {
                byte[] b = frames.array();
                int p = frames.payloadOffset();
                int keyGroup = FrameDescriptor.readIntLE(b, p);
                byte[] timer = new byte[frames.payloadLength() - Integer.BYTES];
                System.arraycopy(b, p + Integer.BYTES, timer, 0, timer.length);
                visitor.accept(keyGroup, timer);
            }
        }
    }
}
