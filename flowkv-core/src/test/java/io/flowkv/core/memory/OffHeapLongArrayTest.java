package io.flowkv.core.memory;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffHeapLongArrayTest {

    @Test
    void shouldKeepTheFirstElementsWhenGrowingAndChargeWhatItHolds() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        try (OffHeapLongArray array = OffHeapLongArray.allocate(budget, 4, "list")) {
            for (int i = 0; i < 4; i++) {
                array.set(i, -i * 1_000_000_007L);
            }
            assertThat(array.tryGrow(5, 3)).isTrue();
            assertThat(array.capacity()).isEqualTo(8);
            assertThat(budget.used()).isEqualTo(array.memoryBytes()).isEqualTo(64);
            for (int i = 0; i < 3; i++) {
                assertThat(array.get(i)).isEqualTo(-i * 1_000_000_007L);
            }
            assertThat(array.tryGrow(100, 8)).isTrue();
            assertThat(array.capacity()).isEqualTo(100);
            assertThat(array.get(2)).isEqualTo(-2 * 1_000_000_007L);
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldStayAsItWasWhenTheBudgetRefusesToGrowIt() {
        MemoryBudget budget = new MemoryBudget(90);
        try (OffHeapLongArray array = OffHeapLongArray.allocate(budget, 4, "list")) {
            array.set(3, 42);
            assertThat(array.tryGrow(8, 4)).isFalse();
            assertThat(array.capacity()).isEqualTo(4);
            assertThat(array.get(3)).isEqualTo(42);
            assertThat(budget.used()).isEqualTo(32);
        }
        assertThat(OffHeapLongArray.tryAllocate(budget, 20)).isNull();
        assertThatThrownBy(() -> OffHeapLongArray.allocate(budget, 20, "RMW record list"))
                .isInstanceOf(MemoryBudgetExceededException.class)
                .hasMessageContaining("RMW record list");
        assertThat(budget.used()).isZero();
    }
}
