package io.flowkv.core.log;

import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A manifest: a {@link LogFileHeader} of type {@link FileType#MANIFEST} and exactly one frame whose
 * payload is the store's metadata record. Written to a temporary name, synced (when durable), then
 * renamed, so a reader sees the old manifest or the new one, never half of one.
 */
public final class ManifestFile {
    private ManifestFile() {}

    public static void write(FileIo io, Path file, long manifestId, byte[] payload)
            throws IOException {
        write(io, file, manifestId, payload, true);
    }

    /** {@link #write(FileIo, Path, long, byte[])}, without the fsync when not {@code durable}. */
    public static void write(FileIo io, Path file, long manifestId, byte[] payload, boolean durable)
            throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        io.delete(tmp);
        // The staging buffer is transient and small; it is not charged to a store's budget.
        MemoryBudget scratch = new MemoryBudget(64 * 1024);
        try (IoBuffer staging = IoBuffer.allocate(scratch, 64 * 1024, "manifest staging");
                LogWriter writer =
                        LogWriter.create(io, tmp, FileType.MANIFEST, manifestId, staging)) {
            writer.appendFrame(payload, 0, payload.length);
            writer.flush(durable);
        }
        io.moveAtomically(tmp, file);
    }

    public static byte[] read(FileIo io, Path file) throws IOException {
        try (LogReader reader = LogReader.open(io, file, FileType.MANIFEST, -1)) {
            return reader.readFrame(LogFileHeader.LENGTH);
        }
    }
}
