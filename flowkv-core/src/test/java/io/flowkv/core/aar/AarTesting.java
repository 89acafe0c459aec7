package io.flowkv.core.aar;

import io.flowkv.core.ListReads;
import io.flowkv.core.SealedStore;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Small helpers shared by the AAR tests: string keys, windows and values. */
final class AarTesting {
    private AarTesting() {}

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void append(AarStore store, String key, String window, String value) throws IOException {
        store.append(b(key), b(window), b(value));
    }

    /** The values of (key, window) as strings; empty when get returned false. */
    static List<String> values(AarStore store, String key, String window) throws IOException {
        return ListReads.values(store, key, window);
    }

    static List<Path> logFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList();
        }
    }

    static AarStore sealAndRestore(AarStore store, AarStoreOptions options, MemoryBudget budget)
            throws IOException {
        SealedStore sealed = store.seal();
        store.close();
        return AarStore.restore(options, budget, sealed.manifest());
    }
}
