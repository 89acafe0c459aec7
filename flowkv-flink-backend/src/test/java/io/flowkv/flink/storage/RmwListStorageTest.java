package io.flowkv.flink.storage;

import io.flowkv.core.SealedStore;
import io.flowkv.core.TestSeeds;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.config.FlowKVSettings;

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * List state on the general store: appends cost O(tail), not O(list), and every read, iteration and
 * restore gives each list whole and in append order.
 */
class RmwListStorageTest {
    private static final int KEY_GROUP_PREFIX = 1;

    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(16L << 20);

    private RmwListStorage open(List<Path> manifests) throws IOException {
        return new RmwListStorage(
                StorePattern.GENERIC,
                dir,
                budget,
                FlowKVSettings.from(new Configuration()),
                FileIo.DEFAULT,
                7,
                manifests);
    }

    @Test
    void shouldAppendWithoutRewritingTheList() throws IOException {
        try (RmwListStorage storage = open(null)) {
            byte[] key = key(1);
            byte[] ns = bytes("ns");
            byte[] element = new byte[100];
            long firstThousand = 0;
            for (int i = 0; i < 20_000; i++) {
                long before = appended(storage);
                storage.append(keyGroup(1), key, ns, element);
                if (i < 1_000) {
                    firstThousand += appended(storage) - before;
                }
            }
            long before = appended(storage);
            for (int i = 0; i < 1_000; i++) {
                storage.append(keyGroup(1), key, ns, element);
            }
            long lastThousand = appended(storage) - before;
            // A rewritten list would write ~20x more for the last thousand than for the first.
            assertThat(lastThousand)
                    .as("bytes written by 1,000 appends to a 20k-element list vs to a new one")
                    .isLessThan(2 * firstThousand);
            int[] count = {0};
            storage.getElements(keyGroup(1), key, ns, (buf, off, len) -> count[0]++);
            assertThat(count[0]).isEqualTo(21_000);
        }
    }

    @Test
    void shouldKeepEveryListInOrderThroughRemovesIterationAndRestore() throws IOException {
        long seed = TestSeeds.base();
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, List<String>> model = new HashMap<>();
        List<Path> manifests = new ArrayList<>();
        try (RmwListStorage storage = open(null)) {
            for (int op = 0; op < 60_000; op++) {
                int k = rnd.nextInt(40);
                String ns = "n" + rnd.nextInt(3);
                String id = k + "/" + ns;
                if (rnd.nextInt(500) == 0) {
                    storage.remove(keyGroup(k), key(k), bytes(ns));
                    model.remove(id);
                    continue;
                }
                // Mostly small elements, now and then one larger than a whole tail.
                int length = rnd.nextInt(50) == 0 ? 5_000 + rnd.nextInt(3_000) : rnd.nextInt(60);
                String value = op + ":" + "x".repeat(length);
                storage.append(keyGroup(k), key(k), bytes(ns), bytes(value));
                model.computeIfAbsent(id, x -> new ArrayList<>()).add(value);
            }
            assertMatches(storage, model, "seed=" + seed);
            assertThat(iterate(storage)).as("forEach, seed=%d", seed).isEqualTo(model);
            for (SealedStore sealed : storage.seal()) {
                manifests.add(sealed.manifest());
            }
        }
        try (RmwListStorage restored = open(manifests)) {
            assertMatches(restored, model, "restored, seed=" + seed);
            assertThat(iterate(restored)).isEqualTo(model);
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    private static void assertMatches(
            RmwListStorage storage, Map<String, List<String>> model, String label)
            throws IOException {
        for (int k = 0; k < 40; k++) {
            for (int n = 0; n < 3; n++) {
                String id = k + "/n" + n;
                List<String> got = new ArrayList<>();
                boolean found =
                        storage.getElements(
                                keyGroup(k),
                                key(k),
                                bytes("n" + n),
                                (buf, off, len) ->
                                        got.add(new String(buf, off, len, StandardCharsets.UTF_8)));
                assertThat(found ? got : null).as("%s list %s", label, id).isEqualTo(model.get(id));
            }
        }
    }

    private static Map<String, List<String>> iterate(RmwListStorage storage) throws IOException {
        Map<String, List<String>> seen = new HashMap<>();
        List<String> order = new ArrayList<>();
        storage.forEach(
                (key, namespace, value, offset, length) -> {
                    String id = (key[KEY_GROUP_PREFIX] & 0xFF) + "/" + str(namespace);
                    if (order.isEmpty() || !order.get(order.size() - 1).equals(id)) {
                        order.add(id);
                    }
                    seen.computeIfAbsent(id, x -> new ArrayList<>())
                            .add(new String(value, offset, length, StandardCharsets.UTF_8));
                });
        assertThat(order)
                .as("each list's elements come together")
                .doesNotHaveDuplicates()
                .hasSameSizeAs(seen.keySet());
        return seen.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    private static long appended(RmwListStorage storage) {
        return storage.stats().stream().mapToLong(s -> s.bytesAppended()).sum();
    }

    /** Key {@code k}'s key group: keys spread over the storage's instances. */
    private static int keyGroup(int k) {
        return k % 8;
    }

    /** A store key: key-group prefix byte, then the key. */
    private static byte[] key(int k) {
        return new byte[] {(byte) keyGroup(k), (byte) k};
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
