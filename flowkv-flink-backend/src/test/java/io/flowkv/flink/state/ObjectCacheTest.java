package io.flowkv.flink.state;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The object cache's bound, eviction order and write-backs. */
class ObjectCacheTest {
    private final List<String> written = new ArrayList<>();

    /** Three entries at the size an entry is guessed to have before any measurement. */
    private final ObjectCache<String, Integer, Long> cache =
            new ObjectCache<>(
                    3 * (ObjectCache.ENTRY_OVERHEAD + 2 * 64),
                    e -> written.add(e.key + "@" + e.namespace + "=" + e.value));

    @Test
    void shouldGiveUsedEntriesASecondChanceAndWriteOnlyChangedOnes() throws Exception {
        cache.add("a", 0, 1, 10L, true, false);
        cache.add("b", 0, 1, 20L, false, true);
        cache.add("c", 0, 1, 30L, true, false);
        // New entries start flagged: one sweep clears every flag, then the oldest, a, leaves.
        cache.add("d", 0, 1, 40L, true, false);
        assertThat(written).containsExactly("a@1=10");

        assertThat(cache.get("b", 1).value).isEqualTo(20L); // flagged again
        cache.add("e", 0, 1, 50L, true, false); // b is passed over, c leaves
        assertThat(written).containsExactly("a@1=10", "c@1=30");
        assertThat(cache.get("c", 1)).isNull();
        assertThat(cache.get("b", 1)).as("used, so kept").isNotNull();

        cache.add("f", 0, 1, 60L, true, false); // d, never used since the sweep, leaves
        assertThat(written).containsExactly("a@1=10", "c@1=30", "d@1=40");
        cache.add("g", 0, 1, 70L, true, false); // all flagged: a sweep, then e leaves
        cache.add("h", 0, 1, 80L, true, false); // b leaves: unchanged, so not written
        assertThat(cache.get("b", 1)).isNull();
        assertThat(written).containsExactly("a@1=10", "c@1=30", "d@1=40", "e@1=50");
        assertThat(cache.size()).isEqualTo(3);
        assertThat(cache.stats()).contains("evictions=5", "writes=4");
    }

    @Test
    void shouldKeepANewEntryForItsNextUseWhenEveryOtherIsInUse() throws Exception {
        cache.add("a", 0, 1, 10L, true, false);
        cache.add("b", 0, 1, 20L, true, false);
        cache.add("c", 0, 1, 30L, true, false);
        for (int i = 0; i < 10; i++) {
            String key = "n" + i;
            cache.get("a", 1);
            cache.get("b", 1);
            cache.get("c", 1);
            cache.add(key, 0, 1, (long) i, true, false);
            assertThat(cache.get(key, 1)).as("%s right after it came in", key).isNotNull();
        }
    }

    @Test
    void shouldTellNamespacesApart() throws Exception {
        cache.add("a", 0, 1, 10L, true, false);
        cache.add("a", 0, 2, 20L, true, false);
        assertThat(cache.get("a", 1).value).isEqualTo(10L);
        assertThat(cache.get("a", 2).value).isEqualTo(20L);
        assertThat(cache.get("a", 3)).isNull();
    }

    @Test
    void shouldWriteBackChangedEntriesOnceAndKeepThem() throws Exception {
        cache.add("a", 0, 1, 10L, true, false);
        cache.add("b", 0, 1, 20L, false, true);
        cache.writeBack();
        assertThat(written).containsExactly("a@1=10");
        ObjectCache.Entry<String, Integer, Long> a = cache.get("a", 1);
        assertThat(a.dirty).isFalse();
        assertThat(a.stored).as("a clear must now remove it from the store").isTrue();

        cache.writeBack();
        assertThat(written).hasSize(1);
    }

    @Test
    void shouldRemoveWithoutWriting() throws Exception {
        cache.add("a", 0, 1, 10L, true, false);
        ObjectCache.Entry<String, Integer, Long> removed = cache.remove("a", 1);
        assertThat(removed.value).isEqualTo(10L);
        assertThat(cache.remove("a", 1)).isNull();
        cache.writeBack();
        assertThat(written).isEmpty();
    }

    /** A key whose hash code is chosen: many of them share a chain of the table. */
    private record Colliding(int id, int hash) {
        @Override
        public int hashCode() {
            return hash;
        }
    }

    @Test
    void shouldFindEveryEntryThroughGrowthCollisionsRemovalsAndClear() throws Exception {
        List<String> writes = new ArrayList<>();
        ObjectCache<Colliding, Integer, Long> big =
                new ObjectCache<>(1L << 30, e -> writes.add(e.key.id() + "@" + e.namespace));
        int n = 5000;
        for (int i = 0; i < n; i++) {
            // A hundred keys per hash code, and the same key under two namespaces.
            big.add(new Colliding(i, i % 50), 0, i % 2, (long) i, true, false);
        }
        assertThat(big.size()).isEqualTo(n);
        for (int i = 0; i < n; i++) {
            assertThat(big.get(new Colliding(i, i % 50), i % 2).value).isEqualTo(i);
            assertThat(big.get(new Colliding(i, i % 50), 1 - i % 2)).isNull();
        }
        for (int i = 0; i < n; i += 3) {
            assertThat(big.remove(new Colliding(i, i % 50), i % 2).value).isEqualTo(i);
        }
        for (int i = 0; i < n; i++) {
            boolean kept = i % 3 != 0;
            assertThat(big.peek(new Colliding(i, i % 50), i % 2) != null)
                    .as("entry %d", i)
                    .isEqualTo(kept);
        }
        assertThat(big.size()).isEqualTo(n - (n + 2) / 3);
        big.writeBack(); // every entry changed: all written, in the order they came in
        assertThat(writes).hasSize(big.size());
        assertThat(writes.get(0)).isEqualTo("1@1");
        assertThat(writes.get(writes.size() - 1)).isEqualTo((n - 1) + "@1");
        big.clear();
        assertThat(big.size()).isZero();
        assertThat(big.peek(new Colliding(1, 1), 1)).isNull();
        big.add(new Colliding(1, 1), 0, 1, 7L, false, true);
        assertThat(big.get(new Colliding(1, 1), 1).value).isEqualTo(7L);
    }

    @Test
    void shouldHoldFewerEntriesOnceTheyMeasureLarger() throws Exception {
        assertThat(cache.capacity()).isEqualTo(3);
        cache.add("a", 0, 1, 10L, true, false);
        cache.add("b", 0, 1, 20L, true, false);
        cache.add("c", 0, 1, 30L, true, false);

        cache.measured(500); // 64 + 2 x 500 bytes: at least one entry, in a budget of 576
        assertThat(cache.capacity()).isEqualTo(1);
        cache.add("d", 0, 1, 40L, true, false);
        assertThat(cache.size()).isEqualTo(1);
        assertThat(written).containsExactly("a@1=10", "b@1=20", "c@1=30");

        for (int i = 0; i < 200; i++) {
            cache.measured(10); // small again: the average follows
        }
        assertThat(cache.capacity()).isEqualTo(6); // 576 / (64 + 2 x 10), rounded down
    }

    @Test
    void shouldShareABudgetGivingEachCacheWhatOthersLeaveAndAtLeastAnEqualShare() throws Exception {
        long entry = ObjectCache.ENTRY_OVERHEAD + 2 * 64; // the size guessed before measurements
        ObjectCacheBudget budget = new ObjectCacheBudget(6 * entry);
        ObjectCache<String, Integer, Long> first = new ObjectCache<>(budget, e -> {});
        ObjectCache<String, Integer, Long> second = new ObjectCache<>(budget, e -> {});
        for (int i = 0; i < 6; i++) {
            first.add("f" + i, 0, 1, (long) i, true, false);
        }
        assertThat(first.size()).as("alone, the whole budget").isEqualTo(6);
        assertThat(budget.usedBytes()).isEqualTo(6 * entry);

        for (int i = 0; i < 4; i++) {
            second.add("s" + i, 0, 1, (long) i, true, false);
        }
        assertThat(budget.holders()).isEqualTo(2);
        assertThat(second.size()).as("nothing left free: an equal share").isEqualTo(3);
        assertThat(first.size()).as("shrinks on its next insertion only").isEqualTo(6);
        first.add("f6", 0, 1, 6L, true, false);
        assertThat(first.size()).as("down to its share").isEqualTo(3);
        assertThat(budget.usedBytes()).isEqualTo(6 * entry);

        second.clear();
        assertThat(budget.holders()).isEqualTo(1);
        assertThat(first.capacity()).as("what the other left").isEqualTo(6);
        first.clear();
        assertThat(budget.usedBytes()).isZero();
        assertThat(budget.holders()).isZero();
    }

    @Test
    void shouldSampleTheFirstAccessAndThenOneInSampleEvery() {
        int due = 0;
        for (int i = 0; i < 3 * ObjectCache.SAMPLE_EVERY; i++) {
            if (cache.sampleDue()) {
                assertThat(i % ObjectCache.SAMPLE_EVERY).isZero();
                due++;
            }
        }
        assertThat(due).isEqualTo(3);
    }

    @Test
    void shouldRefuseANonPositiveSize() {
        assertThatThrownBy(() -> new ObjectCache<String, Integer, Long>(0, e -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("object cache budget 0 bytes");
    }
}
