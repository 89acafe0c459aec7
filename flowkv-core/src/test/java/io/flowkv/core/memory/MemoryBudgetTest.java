package io.flowkv.core.memory;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemoryBudgetTest {

    @Test
    void shouldLeaveCachesOutOfTheHeadroom() {
        MemoryBudget budget = new MemoryBudget(1600);
        long headroom = 1600 / MemoryBudget.CACHE_HEADROOM_DIVISOR;

        assertThat(budget.tryReserveForCache(1600 - headroom)).isTrue();
        assertThat(budget.tryReserveForCache(1)).as("a cache byte into the headroom").isFalse();
        assertThat(budget.used()).isEqualTo(1600 - headroom);
        // What cannot give way still gets the headroom, and no more than the capacity.
        assertThat(budget.tryReserve(headroom)).isTrue();
        assertThat(budget.tryReserve(1)).isFalse();
        assertThatThrownBy(() -> budget.reserve(1, "a page table"))
                .isInstanceOf(MemoryBudgetExceededException.class)
                .hasMessageContaining("a page table");

        budget.release(headroom + 10);
        assertThat(budget.tryReserveForCache(10)).isTrue();
        assertThat(budget.tryReserveForCache(1)).isFalse();
        assertThatThrownBy(() -> budget.tryReserveForCache(-1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldGiveCacheBuffersOnlyBelowTheHeadroom() {
        MemoryBudget budget = new MemoryBudget(16 * 1024);
        OffHeapBuffer cache = OffHeapBuffer.tryAllocateForCache(budget, 15 * 1024);
        assertThat(cache).isNotNull();
        assertThat(OffHeapBuffer.tryAllocateForCache(budget, 1)).isNull();
        OffHeapBuffer table = OffHeapBuffer.allocate(budget, 1024, "a page table");
        assertThat(budget.available()).isZero();
        table.close();
        cache.close();
        assertThat(budget.used()).isZero();
    }
}
