package io.flowkv.core.rmw;

import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CompactionBatchTest {

    @Test
    void shouldListEveryEntryOnceInPlacementOrder() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        try (CompactionBatch batch = CompactionBatch.allocate(budget, 64 << 10)) {
            Random random = new Random(7);
            int n = batch.capacity();
            for (int i = 0; i < n; i++) {
                batch.add(random.nextLong(), Positions.pack(1, 100 + i));
            }
            assertThat(batch.isFull()).isTrue();
            batch.sortByPlacement();
            boolean[] seen = new boolean[n];
            long previousBucket = -1;
            int bucketShift = 64 - CompactionBatch.bucketBits(n);
            for (int k = 0; k < n; k++) {
                int i = batch.inPlacementOrder(k);
                assertThat(seen[i]).as("entry %d listed twice", i).isFalse();
                seen[i] = true;
                long bucket = PagedHashIndex.placementOrder(batch.hash(i)) >>> bucketShift;
                assertThat(bucket).isGreaterThanOrEqualTo(previousBucket);
                previousBucket = bucket;
            }
            batch.markDead(3);
            batch.setMoved(4, 77);
            assertThat(batch.position(3)).isEqualTo(Positions.NONE);
            assertThat(batch.position(4)).isEqualTo(Positions.pack(1, 104));
            assertThat(batch.moved(4)).isEqualTo(77);
            batch.clear();
            assertThat(batch.size()).isZero();
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldShrinkToWhatTheBudgetGives() {
        MemoryBudget budget = new MemoryBudget(100 << 10);
        try (CompactionBatch batch = CompactionBatch.allocate(budget, 8 << 20)) {
            assertThat(batch.memoryBytes()).isLessThanOrEqualTo(100 << 10);
            assertThat(batch.capacity()).isGreaterThan(CompactionBatch.MIN_ENTRIES);
        }
        MemoryBudget none = new MemoryBudget(1024);
        assertThatThrownBy(() -> CompactionBatch.allocate(none, 8 << 20))
                .isInstanceOf(MemoryBudgetExceededException.class)
                .hasMessageContaining("RMW compaction batch");
    }
}
