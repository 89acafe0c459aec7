package io.flowkv.core.log;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Every file operation of the stores goes through this seam, so tests can inject failures (a full
 * disk, a failing fsync) without root or special mounts.
 */
public interface FileIo {
    FileIo DEFAULT = new FileIo() {};

    default FileChannel openForAppend(Path file) throws IOException {
        return FileChannel.open(
                file,
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE);
    }

    default FileChannel openForRead(Path file) throws IOException {
        return FileChannel.open(file, StandardOpenOption.READ);
    }

    default void delete(Path file) throws IOException {
        Files.deleteIfExists(file);
    }

    default void moveAtomically(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
