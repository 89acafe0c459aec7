package io.flowkv.core.index;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
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
