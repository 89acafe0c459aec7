package io.flowkv.core.index;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LongHashIndexTest {

    /**
     * Keys are ints; the value stores the key in its low 32 bits, so the matcher can verify it. The
     * hash is deliberately weak (key % 64) to force long probe chains and exact-collision handling.
     */
    @Test
    void shouldBehaveLikeAHashMapUnderRandomOperations() {
        long seed = Long.getLong("flowkv.seed", new SplittableRandom().nextLong());
        SplittableRandom random = new SplittableRandom(seed);
        MemoryBudget budget = new MemoryBudget(64 << 20);
        LongHashIndex index = new LongHashIndex(budget, 16);
        Map<Integer, Long> model = new HashMap<>();
        for (int op = 0; op < 200_000; op++) {
            int key = random.nextInt(5000);
            long hash = key % 64;
            LongHashIndex.KeyMatcher matcher = v -> (int) v == key;
            int action = random.nextInt(10);
            if (action < 5) {
                long value = ((long) random.nextInt(1 << 20) << 32) | (key & 0xFFFFFFFFL);
                Long previous = model.put(key, value);
                assertThat(index.put(hash, value, matcher))
                        .as("put %d, seed %d", key, seed)
                        .isEqualTo(previous == null ? LongHashIndex.NONE : previous);
            } else if (action < 8) {
                Long previous = model.remove(key);
                assertThat(index.remove(hash, matcher))
                        .as("remove %d, seed %d", key, seed)
                        .isEqualTo(previous == null ? LongHashIndex.NONE : previous);
            } else {
                Long expected = model.get(key);
                assertThat(index.get(hash, matcher))
                        .as("get %d, seed %d", key, seed)
                        .isEqualTo(expected == null ? LongHashIndex.NONE : expected);
            }
            assertThat(index.size()).isEqualTo(model.size());
        }
        long[] sum = {0};
        index.forEachValue(v -> sum[0] += v);
        assertThat(sum[0]).isEqualTo(model.values().stream().mapToLong(Long::longValue).sum());
        assertThat(budget.used()).isEqualTo(index.memoryBytes());
        index.release();
        assertThat(budget.used()).isZero();
    }

    /**
     * Model test with values that say nothing about their key: the model remembers which key each
     * value belongs to and the matcher asks it. Keys below 64 all share one hash; every other hash
     * is shared by four keys, so 64-bit collisions are the rule. The key space changes by phase, so
     * the table grows from its initial size and entries come and go around every growth.
     */
    @Test
    void shouldMatchAHashMapModelThroughGrowthReplaceAndClear() {
        long seed = Long.getLong("flowkv.seed", new SplittableRandom().nextLong());
        System.out.println("LongHashIndexTest model seed: " + seed + " (rerun with -Dflowkv.seed)");
        SplittableRandom random = new SplittableRandom(seed);
        MemoryBudget budget = new MemoryBudget(64 << 20);
        LongHashIndex index = new LongHashIndex(budget, 16);
        long initialBytes = index.memoryBytes();
        Map<Long, Long> model = new HashMap<>();
        Map<Long, Long> keyOfValue = new HashMap<>();
        long nextValue = random.nextLong(1L << 40);
        int[] keySpaces = {100, 3_000, 40_000};
        int keySpace = keySpaces[0];
        int grows = 0;
        int replaces = 0;
        int clears = 0;
        for (int op = 0; op < 300_000; op++) {
            if (op % 20_000 == 0) {
                keySpace = keySpaces[random.nextInt(keySpaces.length)];
            }
            long key = random.nextLong(keySpace);
            long hash = key < 64 ? 0x5eedL : key >>> 2;
            LongHashIndex.KeyMatcher matcher =
                    v -> {
                        Long owner = keyOfValue.get(v);
                        if (owner == null) {
                            throw new AssertionError("value " + v + " unknown, seed " + seed);
                        }
                        return owner == key;
                    };
            // Rare clears and replaces, so that the table gets large between them; one clear
            // whatever the seed.
            int action = op == 150_000 ? 99_999 : random.nextInt(100_000);
            long bytesBefore = index.memoryBytes();
            if (action < 50_000) {
                long value = nextValue++;
                keyOfValue.put(value, key);
                Long previous = model.put(key, value);
                assertThat(index.put(hash, value, matcher))
                        .as("put %d, op %d, seed %d", key, op, seed)
                        .isEqualTo(previous == null ? LongHashIndex.NONE : previous);
                if (previous != null) {
                    keyOfValue.remove(previous);
                }
            } else if (action < 80_000) {
                Long previous = model.remove(key);
                assertThat(index.remove(hash, matcher))
                        .as("remove %d, op %d, seed %d", key, op, seed)
                        .isEqualTo(previous == null ? LongHashIndex.NONE : previous);
                if (previous != null) {
                    keyOfValue.remove(previous);
                }
            } else if (action < 99_978) {
                Long expected = model.get(key);
                assertThat(index.get(hash, matcher))
                        .as("get %d, op %d, seed %d", key, op, seed)
                        .isEqualTo(expected == null ? LongHashIndex.NONE : expected);
            } else if (action < 99_998) {
                long delta = 1 + random.nextLong(1 << 20);
                Set<Long> seen = new HashSet<>();
                index.replaceValues(
                        v -> {
                            assertThat(seen.add(v))
                                    .as("visited twice: %d, seed %d", v, seed)
                                    .isTrue();
                            return v + delta;
                        });
                assertThat(seen)
                        .as("replaceValues, seed %d", seed)
                        .isEqualTo(new HashSet<>(model.values()));
                keyOfValue.clear();
                model.replaceAll((k, v) -> v + delta);
                model.forEach((k, v) -> keyOfValue.put(v, k));
                nextValue += delta;
                replaces++;
            } else {
                index.clear();
                model.clear();
                keyOfValue.clear();
                assertThat(index.memoryBytes()).isEqualTo(bytesBefore);
                clears++;
            }
            if (index.memoryBytes() != bytesBefore) {
                assertThat(index.memoryBytes()).isEqualTo(2 * bytesBefore);
                grows++;
            }
            assertThat(index.size()).as("size, op %d, seed %d", op, seed).isEqualTo(model.size());
            assertThat(budget.used()).isEqualTo(index.memoryBytes());
        }
        List<Long> values = new ArrayList<>();
        index.forEachValue(values::add);
        assertThat(values)
                .as("forEachValue, seed %d", seed)
                .containsExactlyInAnyOrderElementsOf(model.values());
        for (Map.Entry<Long, Long> e : model.entrySet()) {
            long key = e.getKey();
            long hash = key < 64 ? 0x5eedL : key >>> 2;
            assertThat(index.get(hash, v -> keyOfValue.get(v) == key))
                    .as("final get %d, seed %d", key, seed)
                    .isEqualTo(e.getValue());
        }
        assertThat(index.memoryBytes()).isGreaterThan(initialBytes);
        assertThat(grows).as("seed %d", seed).isGreaterThan(3);
        System.out.printf(
                "LongHashIndexTest model: %d grows, %d replaceValues, %d clears, final size %d%n",
                grows, replaces, clears, index.size());
        index.release();
        assertThat(budget.used()).isZero();
        index.release();
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldStayIntactAndUsableWhenGrowthIsRefused() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        LongHashIndex index = new LongHashIndex(budget, 16);
        long tableBytes = index.memoryBytes();
        long slots = tableBytes / 16;
        // Leave room for the table but not for the doubled one beside it.
        long blocker = budget.available() - 2 * tableBytes + 1;
        budget.reserve(blocker, "test blocker");
        Map<Long, Long> model = new HashMap<>();
        long key = 0;
        MemoryBudgetExceededException refused = null;
        for (; key < slots; key++) {
            long k = key;
            try {
                // Four keys per hash, so the table holds exact collisions when growth fails.
                index.put(k >>> 2, 1000 + k, v -> v - 1000 == k);
                model.put(k, 1000 + k);
            } catch (MemoryBudgetExceededException e) {
                refused = e;
                break;
            }
        }
        assertThat(refused).isNotNull();
        assertThat(refused).hasMessageContaining("hash index of " + 2 * slots + " slots");
        long refusedKey = key;
        assertThat(index.size()).isEqualTo(model.size()).isEqualTo((int) (slots * 0.6));
        assertThat(index.memoryBytes()).isEqualTo(tableBytes);
        assertThat(budget.used()).isEqualTo(blocker + tableBytes);
        assertThat(index.get(refusedKey >>> 2, v -> v - 1000 == refusedKey))
                .isEqualTo(LongHashIndex.NONE);
        assertIndexHolds(index, model);

        // Still usable: overwrite, remove, and insert into the room a remove made.
        assertThat(index.put(0, 5000, v -> v == 1000 || v == 5000)).isEqualTo(1000);
        model.put(0L, 5000L);
        assertThat(index.remove(1 >>> 2, v -> v == 1001)).isEqualTo(1001);
        model.remove(1L);
        assertThat(index.put(refusedKey >>> 2, 1000 + refusedKey, v -> v - 1000 == refusedKey))
                .isEqualTo(LongHashIndex.NONE);
        model.put(refusedKey, 1000 + refusedKey);
        assertIndexHolds(index, model);

        // Once the budget has room again, the next insert grows the table.
        budget.release(blocker);
        long next = refusedKey + 1;
        assertThat(index.put(next >>> 2, 1000 + next, v -> v - 1000 == next))
                .isEqualTo(LongHashIndex.NONE);
        model.put(next, 1000 + next);
        assertThat(index.memoryBytes()).isEqualTo(2 * tableBytes);
        assertThat(budget.used()).isEqualTo(index.memoryBytes());
        assertIndexHolds(index, model);

        index.release();
        assertThat(budget.used()).isZero();
    }

    /**
     * Every model entry is found; nothing else is in the index. Values are 1000 + key (or 5000).
     */
    private static void assertIndexHolds(LongHashIndex index, Map<Long, Long> model) {
        assertThat(index.size()).isEqualTo(model.size());
        for (Map.Entry<Long, Long> e : model.entrySet()) {
            long expected = e.getValue();
            assertThat(index.get(e.getKey() >>> 2, v -> v == expected)).isEqualTo(expected);
        }
        List<Long> values = new ArrayList<>();
        index.forEachValue(values::add);
        assertThat(values).containsExactlyInAnyOrderElementsOf(model.values());
    }

    @Test
    void shouldFailClearlyWhenTheBudgetCannotHoldTheIndex() {
        MemoryBudget budget = new MemoryBudget(16 * 64);
        LongHashIndex index = new LongHashIndex(budget, 64);
        assertThatThrownBy(
                        () -> {
                            for (int i = 0; i < 1000; i++) {
                                int key = i;
                                index.put(
                                        Hashing.hash64(new byte[] {(byte) i, (byte) (i >> 8)}),
                                        i,
                                        v -> v == key);
                            }
                        })
                .isInstanceOf(MemoryBudgetExceededException.class)
                .hasMessageContaining("hash index");
        index.release();
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldHashPairsDifferentlyFromTheirConcatenation() {
        byte[] ab = {1, 2};
        assertThat(Hashing.hash64(new byte[] {1}, new byte[] {2}))
                .isNotEqualTo(Hashing.hash64(new byte[] {1, 2}, new byte[0]));
        assertThat(Hashing.hash64(ab)).isEqualTo(Hashing.hash64(new byte[] {1, 2}));
    }
}
