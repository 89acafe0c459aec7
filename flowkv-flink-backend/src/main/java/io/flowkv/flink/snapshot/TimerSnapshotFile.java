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

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
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
        try (Reader reader = open(file)) {
            while (reader.next()) {
                visitor.accept(reader.keyGroup(), reader.timer());
            }
        }
    }

    /** Opens {@code file} for reading its timers one at a time, in the order they were written. */
    public static Reader open(Path file) throws IOException {
        return new Reader(LogReader.open(FileIo.DEFAULT, file, FileType.TIMER_SNAPSHOT, -1));
    }

    /**
     * The timers of a snapshot file, one at a time, checksums verified. A stored queue writes them
     * in its own order, ascending by timestamp, key group, then the rest of the timer's bytes.
     */
    public static final class Reader implements Closeable {
        private final LogReader log;
        private final FrameScanner frames;
        private int keyGroup;

        /** Where the current timer's bytes start in the frame array, or -1 at the end. */
        private int timerOffset = -1;

        private Reader(LogReader log) {
            this.log = log;
            this.frames = log.scanAll(STAGING_BYTES);
        }

        /** Moves to the next timer; false at the end of the file. */
        public boolean next() throws IOException {
            if (!frames.next()) {
                timerOffset = -1;
                return false;
            }
            keyGroup = FrameDescriptor.readIntLE(frames.array(), frames.payloadOffset());
            timerOffset = frames.payloadOffset() + Integer.BYTES;
            return true;
        }

        /** The key group of the current timer. */
        public int keyGroup() {
            return keyGroup;
        }

        /** The current timer as the queue's serializer wrote it (a fresh array). */
        public byte[] timer() {
            return Arrays.copyOfRange(frames.array(), timerOffset, timerOffset + timerLength());
        }

        /**
         * The current timer as a stored queue keeps it ({@link FlowKVTimerQueue#storedForm}), made
         * from the frame in one copy.
         */
        public byte[] storedForm() {
            return FlowKVTimerQueue.storedForm(
                    keyGroup, frames.array(), timerOffset, timerLength());
        }

        private int timerLength() {
            if (timerOffset < 0) {
                throw new IllegalStateException("no current timer: next() returned false");
            }
            return frames.payloadLength() - Integer.BYTES;
        }

        @Override
        public void close() throws IOException {
            log.close();
        }
    }
}
