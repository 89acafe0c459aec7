package io.flowkv.core;

import io.flowkv.core.aar.AarStore;
import io.flowkv.core.aar.AarStoreOptions;
import io.flowkv.core.aur.AurStore;
import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract ({@link Store}, {@link ListStore}, {@link ValueStore}), checked the same way
 * on every store: each list store against a model of lists, each value store against a model of
 * values. Write buffers and logs are a few KiB, so every test crosses flushes, log rolls and (where
 * a store compacts) compactions.
 */
class StoreContractTest {
    private static final long BUDGET = 8L << 20;

    @TempDir Path dir;

    interface Opener<S extends Store> {
        S open(Path dir, MemoryBudget budget) throws IOException;
    }

    interface Restorer<S extends Store> {
        S restore(Path dir, MemoryBudget budget, Path manifest) throws IOException;
    }

    /** How to open a store of one kind in a directory, and to restore it from a manifest. */
    record Named<S extends Store>(String name, Opener<S> opener, Restorer<S> restorer) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Named<ListStore>> listStores() {
        return Stream.of(
                new Named<ListStore>(
                        "AAR",
                        (dir, budget) -> AarStore.open(aar(dir), budget),
                        (dir, budget, manifest) -> AarStore.restore(aar(dir), budget, manifest)),
                new Named<ListStore>(
                        "AUR",
                        (dir, budget) -> AurStore.open(aur(dir), budget),
                        (dir, budget, manifest) -> AurStore.restore(aur(dir), budget, manifest)));
    }

    static Stream<Named<ValueStore>> valueStores() {
        return Stream.of(
                new Named<ValueStore>(
                        "RMW",
                        (dir, budget) -> RmwStore.open(rmw(dir), budget),
                        (dir, budget, manifest) -> RmwStore.restore(rmw(dir), budget, manifest)));
    }

    private static AarStoreOptions aar(Path dir) {
        return AarStoreOptions.builder(dir).writeBufferBytes(4096).jitterSpread(0).build();
    }

    private static AurStoreOptions aur(Path dir) {
        return AurStoreOptions.builder(dir)
                .writeBufferBytes(4096)
                .segmentSize(8192)
                .maxSpaceAmplification(1.2)
                .jitterSpread(0)
                .build();
    }

    private static RmwStoreOptions rmw(Path dir) {
        return RmwStoreOptions.builder(dir)
                .writeBufferBytes(4096)
                .segmentRollBytes(8192)
                .maxSpaceAmplification(1.2)
                .jitterSpread(0)
                .build();
    }

    // ------------------------------------------------------------------ list stores

    @ParameterizedTest
    @MethodSource("listStores")
    void listStoreReadsEachListInAppendOrderUntilRemoved(Named<ListStore> kind) throws IOException {
        MemoryBudget budget = new MemoryBudget(BUDGET);
        try (ListStore store = kind.opener().open(dir, budget)) {
            store.append(b("k1"), b("w1"), b("a"));
            store.append(b("k2"), b("w1"), b("x"));
            store.append(b("k1"), b("w1"), b("b"));
            store.append(b("k1"), b("w2"), b("other window"));
            store.flush();
            store.append(b("k1"), b("w1"), b("c"), 42);

            assertThat(list(store, "k1", "w1")).containsExactly("a", "b", "c");
            assertThat(list(store, "k1", "w2")).containsExactly("other window");
            assertThat(list(store, "k2", "w1")).containsExactly("x");
            assertThat(store.get(b("k3"), b("w1"), (buf, off, len) -> {})).isFalse();

            store.remove(b("k1"), b("w1"));
            store.remove(b("never"), b("w1"));
            assertThat(store.get(b("k1"), b("w1"), (buf, off, len) -> {})).isFalse();
            assertThat(list(store, "k1", "w2")).containsExactly("other window");
            assertThat(list(store, "k2", "w1")).containsExactly("x");
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    @ParameterizedTest
    @MethodSource("listStores")
    void listStoreMatchesAModelAcrossFlushesSealsAndRestores(Named<ListStore> kind)
            throws IOException {
        long seed = TestSeeds.base();
        Random rnd = new Random(seed);
        String at = kind + " seed " + seed;
        MemoryBudget budget = new MemoryBudget(BUDGET);
        Map<String, List<String>> model = new HashMap<>();
        ListStore store = kind.opener().open(dir, budget);
        try {
            for (int op = 0; op < 4000; op++) {
                String k = "key" + rnd.nextInt(40);
                String w = "w" + rnd.nextInt(6);
                String id = k + "|" + w;
                int r = rnd.nextInt(1000);
                if (r < 700) {
                    String v = "v" + op + "-" + "x".repeat(rnd.nextInt(40));
                    store.append(b(k), b(w), b(v), op);
                    model.computeIfAbsent(id, unused -> new ArrayList<>()).add(v);
                } else if (r < 850) {
                    List<String> expected = model.get(id);
                    if (expected == null) {
                        assertThat(store.get(b(k), b(w), (buf, off, len) -> {}))
                                .as(at + " op " + op + " absent " + id)
                                .isFalse();
                    } else {
                        assertThat(list(store, k, w)).as(at + " op " + op).isEqualTo(expected);
                    }
                } else if (r < 950) {
                    store.remove(b(k), b(w));
                    model.remove(id);
                } else if (r < 980) {
                    store.flush();
                } else {
                    store = sealAndRestore(kind, store, budget, at + " op " + op);
                }
                assertThat(store.memoryUsed()).as(at + " memory").isBetween(0L, BUDGET);
            }
            store = sealAndRestore(kind, store, budget, at + " end");
            for (Map.Entry<String, List<String>> e : model.entrySet()) {
                String[] kw = e.getKey().split("\\|");
                assertThat(list(store, kw[0], kw[1]))
                        .as(at + " " + e.getKey())
                        .isEqualTo(e.getValue());
            }
            assertThat(scanLists(store)).as(at + " forEach").isEqualTo(sorted(model));
        } finally {
            store.close();
        }
        assertThat(budget.used()).as(at + " budget after close").isZero();
    }

    /** Seals, closes (twice: close is idempotent) and restores the store, checking the budget. */
    private static <S extends Store> S sealAndRestore(
            Named<S> kind, S store, MemoryBudget budget, String at) throws IOException {
        SealedStore sealed = store.seal();
        for (SealedStore.SealedFile f : sealed.files()) {
            assertThat(Files.size(f.path()))
                    .as(at + " " + f.path())
                    .isGreaterThanOrEqualTo(f.length());
        }
        store.close();
        store.close();
        assertThat(budget.used()).as(at + " budget between close and restore").isZero();
        return kind.restorer().restore(sealed.manifest().getParent(), budget, sealed.manifest());
    }

    private static Map<String, List<String>> scanLists(ListStore store) throws IOException {
        Map<String, List<String>> seen = new HashMap<>();
        store.forEach(
                (key, window, value, offset, length) ->
                        seen.computeIfAbsent(s(key) + "|" + s(window), unused -> new ArrayList<>())
                                .add(new String(value, offset, length, StandardCharsets.UTF_8)));
        return sorted(seen);
    }

    private static Map<String, List<String>> sorted(Map<String, List<String>> lists) {
        Map<String, List<String>> out = new HashMap<>();
        lists.forEach(
                (id, values) -> {
                    List<String> copy = new ArrayList<>(values);
                    copy.sort(null);
                    out.put(id, copy);
                });
        return out;
    }

    private static List<String> list(ListStore store, String key, String window)
            throws IOException {
        List<String> out = ListReads.values(store, key, window);
        assertThat(out).as("list of " + key + "|" + window).isNotEmpty();
        return out;
    }

    // ------------------------------------------------------------------ value stores

    @ParameterizedTest
    @MethodSource("valueStores")
    void valueStoreKeepsTheLastPutUntilRemoved(Named<ValueStore> kind) throws IOException {
        MemoryBudget budget = new MemoryBudget(BUDGET);
        try (ValueStore store = kind.opener().open(dir, budget)) {
            store.put(b("k1"), b("n1"), b("first"));
            store.put(b("k1"), b("n2"), b("other namespace"));
            store.flush();
            store.put(b("k1"), b("n1"), b("second"));

            assertThat(value(store, "k1", "n1")).isEqualTo("second");
            assertThat(value(store, "k1", "n2")).isEqualTo("other namespace");
            assertThat(value(store, "k2", "n1")).isNull();

            assertThat(store.remove(b("k1"), b("n1"))).isTrue();
            assertThat(store.remove(b("k1"), b("n1"))).isFalse();
            assertThat(value(store, "k1", "n1")).isNull();
            assertThat(value(store, "k1", "n2")).isEqualTo("other namespace");
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    @ParameterizedTest
    @MethodSource("valueStores")
    void valueStoreMatchesAModelAcrossFlushesSealsAndRestores(Named<ValueStore> kind)
            throws IOException {
        long seed = TestSeeds.base();
        Random rnd = new Random(seed);
        String at = kind + " seed " + seed;
        MemoryBudget budget = new MemoryBudget(BUDGET);
        Map<String, String> model = new HashMap<>();
        ValueStore store = kind.opener().open(dir, budget);
        try {
            for (int op = 0; op < 4000; op++) {
                String k = "key" + rnd.nextInt(60);
                String n = "n" + rnd.nextInt(4);
                String id = k + "|" + n;
                int r = rnd.nextInt(1000);
                if (r < 600) {
                    String v = "v" + op + "-" + "x".repeat(rnd.nextInt(60));
                    store.put(b(k), b(n), b(v));
                    model.put(id, v);
                } else if (r < 850) {
                    assertThat(value(store, k, n)).as(at + " op " + op).isEqualTo(model.get(id));
                } else if (r < 950) {
                    assertThat(store.remove(b(k), b(n)))
                            .as(at + " op " + op + " remove " + id)
                            .isEqualTo(model.remove(id) != null);
                } else if (r < 980) {
                    store.flush();
                } else {
                    store = sealAndRestore(kind, store, budget, at + " op " + op);
                }
                assertThat(store.memoryUsed()).as(at + " memory").isBetween(0L, BUDGET);
            }
            store = sealAndRestore(kind, store, budget, at + " end");
            Map<String, String> seen = new HashMap<>();
            store.forEach(
                    (key, namespace, value, offset, length) ->
                            assertThat(
                                            seen.put(
                                                    s(key) + "|" + s(namespace),
                                                    new String(
                                                            value,
                                                            offset,
                                                            length,
                                                            StandardCharsets.UTF_8)))
                                    .as(at + " visited once")
                                    .isNull());
            assertThat(seen).as(at + " forEach").isEqualTo(model);
        } finally {
            store.close();
        }
        assertThat(budget.used()).as(at + " budget after close").isZero();
    }

    private static String value(ValueStore store, String key, String namespace) throws IOException {
        String[] out = new String[1];
        boolean found =
                store.get(
                        b(key),
                        b(namespace),
                        (buf, off, len) ->
                                out[0] = new String(buf, off, len, StandardCharsets.UTF_8));
        assertThat(found)
                .as("found vs value of " + key + "|" + namespace)
                .isEqualTo(out[0] != null);
        return out[0];
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
