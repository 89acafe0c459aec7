package io.flowkv.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Comparator;
import java.util.stream.Stream;

/** Directory size and cleanup for the per-run store directories. */
final class Directories {
    private Directories() {}

    /** Sum of file sizes under {@code dir}; files a background compaction deletes count 0. */
    static long sizeOf(Path dir) throws IOException {
        long total = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                try {
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                    total += a.isDirectory() ? sizeOf(p) : a.size();
                } catch (NoSuchFileException e) {
                    // deleted while we listed it
                }
            }
        } catch (NoSuchFileException e) {
            return total;
        }
        return total;
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
