package io.flowkv.core.aar;

import io.flowkv.core.SealedStore;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.flowkv.core.aar.AarTesting.append;
import static io.flowkv.core.aar.AarTesting.b;
import static io.flowkv.core.aar.AarTesting.logFiles;
import static io.flowkv.core.aar.AarTesting.sealAndRestore;
import static io.flowkv.core.aar.AarTesting.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AarStoreTest {
    @TempDir Path dir;

    private final TrackingFileIo io = new TrackingFileIo();
    private MemoryBudget budget = new MemoryBudget(1 << 20);
    private AarStoreOptions options;
    private AarStore store;

    private AarStore open(AarStoreOptions.Builder builder) throws IOException {
        options = builder.fileIo(io).ioBufferBytes(4096).build();
        store = AarStore.open(options, budget);
        return store;
    }

    private AarStore open() throws IOException {
        return open(AarStoreOptions.builder(dir));
    }

    @AfterEach
    void shouldReleaseEveryByteAndFileOnClose() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.open).as("open channels after close").isEmpty();
    }

    @Test
    void shouldReturnValuesInAppendOrderAcrossFlushesAndTheBuffer() throws IOException {
        open();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            append(store, "k", "w", "v" + i);
            expected.add("v" + i);
            if (i == 3 || i == 6) {
                store.flush();
            }
        }

        assertThat(values(store, "k", "w")).isEqualTo(expected);
        assertThat(values(store, "k", "other-window")).isEmpty();
        assertThat(values(store, "other-key", "w")).isEmpty();
    }

    @Test
    void shouldReturnLateAppendsAfterARead() throws IOException {
        open();
        append(store, "k", "w", "a");
        store.flush();
        assertThat(values(store, "k", "w")).containsExactly("a");

        append(store, "k", "w", "late-1");
        assertThat(values(store, "k", "w")).containsExactly("a", "late-1");
        store.flush();
        append(store, "k", "w", "late-2");
        assertThat(values(store, "k", "w")).containsExactly("a", "late-1", "late-2");

        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k", "w")).containsExactly("a", "late-1", "late-2");
    }

    @Test
    void shouldStartANewListAfterRemove() throws IOException {
        open();
        append(store, "k", "w", "a");
        append(store, "other", "w", "x");
        store.flush();
        append(store, "k", "w", "b");

        store.remove(b("k"), b("w"));
        assertThat(values(store, "k", "w")).isEmpty();

        append(store, "k", "w", "c");
        assertThat(values(store, "k", "w")).containsExactly("c");
        store.flush();
        assertThat(values(store, "k", "w")).containsExactly("c");
        store = sealAndRestore(store, options, budget);
        assertThat(values(store, "k", "w")).containsExactly("c");
        assertThat(values(store, "other", "w")).containsExactly("x");
    }

    @Test
    void shouldDeleteWindowFilesOnceEveryKeyIsRemoved() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(3));
        for (int k = 0; k < 30; k++) {
            append(store, "k" + k, "w", "v" + k);
            append(store, "k" + k, "kept", "v" + k);
        }
        store.flush();
        List<Path> keptFiles = new ArrayList<>(logFiles(dir));
        assertThat(keptFiles).hasSize(6);

        for (int k = 0; k < 30; k++) {
            assertThat(values(store, "k" + k, "w")).containsExactly("v" + k);
            store.remove(b("k" + k), b("w"));
        }

        assertThat(store.windowCount()).isEqualTo(1);
        assertThat(logFiles(dir)).hasSize(3);
        assertThat(values(store, "k0", "kept")).containsExactly("v0");
        assertThat(store.stats().deadBytes()).isZero();
    }

    @Test
    void shouldDropBufferedWindowOnceEveryKeyIsRemoved() throws IOException {
        open();
        append(store, "a", "w", "1");
        append(store, "b", "w", "2");
        store.remove(b("a"), b("w"));
        assertThat(store.windowCount()).isEqualTo(1);
        store.remove(b("b"), b("w"));

        assertThat(store.windowCount()).isZero();
        store.flush();
        assertThat(logFiles(dir)).isEmpty();
    }

    @Test
    void shouldFlushALongBufferedPartitionBeforeReadingIt() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(1));
        for (int k = 0; k <= AarStore.READ_FLUSH_THRESHOLD; k++) {
            append(store, "k" + k, "w", "v" + k);
        }
        assertThat(logFiles(dir)).isEmpty();

        assertThat(values(store, "k0", "w")).containsExactly("v0");

        assertThat(logFiles(dir)).hasSize(1);
        assertThat(store.loadedPartitions()).isEqualTo(1);
        append(store, "k1", "w", "late");
        assertThat(values(store, "k1", "w")).containsExactly("v1", "late");
    }

    @Test
    void shouldDeleteFilesOnRemoveWindow() throws IOException {
        open();
        for (int k = 0; k < 10; k++) {
            append(store, "k" + k, "w", "v");
        }
        store.flush();
        append(store, "k0", "w", "buffered");
        assertThat(values(store, "k0", "w")).containsExactly("v", "buffered");

        store.removeWindow(b("w"));

        assertThat(logFiles(dir)).isEmpty();
        assertThat(store.windowCount()).isZero();
        assertThat(values(store, "k0", "w")).isEmpty();
        assertThat(store.stats().liveBytes()).isZero();
        assertThat(store.stats().deadBytes()).isZero();
        store.flush();
        assertThat(logFiles(dir)).isEmpty();
    }

    @Test
    void shouldLoadOnePartitionAtATimeWhenTheBudgetIsTight() throws IOException {
        budget = new MemoryBudget(96 * 1024);
        open(AarStoreOptions.builder(dir).partitions(4).writeBufferBytes(8 * 1024));
        Map<String, String> expected = fill(2000);

        int maxLoaded = readAll(expected);

        assertThat(maxLoaded).isEqualTo(1);
        assertThat(store.stats().bytesRead()).isPositive();
    }

    @Test
    void shouldKeepSeveralPartitionsLoadedWhenTheBudgetAllows() throws IOException {
        budget = new MemoryBudget(4 << 20);
        open(AarStoreOptions.builder(dir).partitions(4).writeBufferBytes(8 * 1024));
        Map<String, String> expected = fill(400);

        int maxLoaded = readAll(expected);

        assertThat(maxLoaded).isEqualTo(4);
    }

    private Map<String, String> fill(int keys) throws IOException {
        Map<String, String> expected = new HashMap<>();
        for (int k = 0; k < keys; k++) {
            String value = "value-of-key-" + k + "-padded-to-some-length";
            append(store, "k" + k, "w", value);
            expected.put("k" + k, value);
        }
        store.flush();
        return expected;
    }

    private int readAll(Map<String, String> expected) throws IOException {
        int maxLoaded = 0;
        for (Map.Entry<String, String> e : expected.entrySet()) {
            assertThat(values(store, e.getKey(), "w")).containsExactly(e.getValue());
            maxLoaded = Math.max(maxLoaded, store.loadedPartitions());
        }
        return maxLoaded;
    }

    @Test
    void shouldKeepSealedFilesUnchanged() throws IOException {
        open();
        for (int k = 0; k < 20; k++) {
            append(store, "k" + k, "w", "v" + k);
        }
        SealedStore sealed = store.seal();
        Map<Path, byte[]> before = new HashMap<>();
        for (SealedStore.SealedFile f : sealed.files()) {
            before.put(f.path(), Files.readAllBytes(f.path()));
            assertThat(f.length()).isEqualTo(Files.size(f.path()));
        }

        for (int k = 0; k < 20; k++) {
            append(store, "k" + k, "w", "after-seal");
        }
        store.remove(b("k1"), b("w"));
        store.flush();
        store.seal();

        for (Map.Entry<Path, byte[]> e : before.entrySet()) {
            assertThat(Files.readAllBytes(e.getKey())).as("%s", e.getKey()).isEqualTo(e.getValue());
        }
        assertThat(logFiles(dir)).hasSizeGreaterThan(before.size());
        assertThat(values(store, "k2", "w")).containsExactly("v2", "after-seal");
        assertThat(values(store, "k1", "w")).isEmpty();
    }

    @Test
    void shouldVisitEveryLiveValue() throws IOException {
        open();
        append(store, "a", "w1", "1");
        append(store, "b", "w1", "2");
        store.flush();
        append(store, "a", "w1", "3");
        append(store, "a", "w2", "4");
        store.remove(b("b"), b("w1"));

        List<String> seen = new ArrayList<>();
        store.forEach(
                (key, window, value, off, len) ->
                        seen.add(
                                new String(key)
                                        + "@"
                                        + new String(window)
                                        + "="
                                        + new String(value, off, len)));

        assertThat(seen).containsExactlyInAnyOrder("a@w1=1", "a@w1=3", "a@w2=4");
        assertThat(seen.indexOf("a@w1=1")).isLessThan(seen.indexOf("a@w1=3"));
    }

    @Test
    void shouldCountBytesInStats() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(1));
        append(store, "key", "w", "value"); // 3 + 5 bytes; 17 log bytes
        append(store, "key2", "w", "v2");
        assertThat(store.stats().bytesAppended()).isEqualTo(8 + 6);
        assertThat(store.stats().liveBytes()).isEqualTo(17 + 15);

        store.flush();
        assertThat(store.stats().flushes()).isEqualTo(1);
        assertThat(store.stats().bytesFlushed()).isGreaterThanOrEqualTo(17 + 15);
        assertThat(values(store, "key", "w")).containsExactly("value");
        assertThat(store.stats().bytesRead()).isPositive();

        store.remove(b("key"), b("w"));
        assertThat(store.stats().liveBytes()).isEqualTo(15);
        assertThat(store.stats().deadBytes()).isEqualTo(17);
        assertThat(store.memoryUsed()).isPositive().isLessThanOrEqualTo(budget.used());
    }

    @Test
    void shouldRejectADirectoryHoldingStoreFiles() throws IOException {
        open();
        append(store, "k", "w", "v");
        store.flush();

        assertThatThrownBy(() -> AarStore.open(options, budget))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("already holds AAR store files");
    }

    @Test
    void shouldRejectRestoreWithAnotherPartitionCount() throws IOException {
        open(AarStoreOptions.builder(dir).partitions(2));
        append(store, "k", "w", "v");
        SealedStore sealed = store.seal();
        store.close();
        store = null;
        AarStoreOptions other = AarStoreOptions.builder(dir).partitions(3).fileIo(io).build();

        assertThatThrownBy(() -> AarStore.restore(other, budget, sealed.manifest()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("written with 2 partitions")
                .hasMessageContaining(sealed.manifest().toString());
    }

    @Test
    void shouldRejectUseAfterClose() throws IOException {
        open();
        store.close();

        assertThatThrownBy(() -> append(store, "k", "w", "v"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void shouldAcceptEmptyValuesAndKeys() throws IOException {
        open();
        append(store, "", "w", "");
        append(store, "", "w", "x");
        store.flush();
        append(store, "", "w", "");

        assertThat(values(store, "", "w")).containsExactly("", "x", "");
    }
}
