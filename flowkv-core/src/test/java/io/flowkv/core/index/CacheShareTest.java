package io.flowkv.core.index;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapBuffer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CacheShareTest {

    private static final long CHUNK = 1024;

    @Test
    void shouldGrowWithinTheOwnCapWithoutTakingFromTheShare() {
        MemoryBudget budget = new MemoryBudget(4 * CHUNK);
        CacheShare share = new CacheShare(2 * CHUNK);
        CacheShare.Account account = share.account();
        try (OffHeapBuffer c =
                CacheShare.growChunk(
                        account,
                        0,
                        1,
                        100,
                        CHUNK,
                        () -> OffHeapBuffer.tryAllocate(budget, CHUNK))) {
            assertThat(c).isNotNull();
            assertThat(share.taken()).isZero();
        }
    }

    @Test
    void shouldGrowBeyondTheOwnCapOnlyWithBytesOfTheShare() {
        MemoryBudget budget = new MemoryBudget(8 * CHUNK);
        CacheShare share = new CacheShare(CHUNK);
        CacheShare.Account account = share.account();
        try (OffHeapBuffer c =
                CacheShare.growChunk(
                        account,
                        1,
                        1,
                        100,
                        CHUNK,
                        () -> OffHeapBuffer.tryAllocate(budget, CHUNK))) {
            assertThat(c).isNotNull();
            assertThat(share.taken()).isEqualTo(CHUNK);
            // the share is spent: no further chunk beyond the cap, and nothing allocated
            assertThat(
                            CacheShare.growChunk(
                                    account,
                                    2,
                                    1,
                                    100,
                                    CHUNK,
                                    () -> {
                                        throw new AssertionError("allocated without a share");
                                    }))
                    .isNull();
        }
        // without a share, or with the frame numbers used up, a cache at its cap gets nothing
        assertThat(CacheShare.growChunk(null, 1, 1, 100, CHUNK, () -> null)).isNull();
        CacheShare roomy = new CacheShare(4 * CHUNK);
        assertThat(CacheShare.growChunk(roomy.account(), 100, 1, 100, CHUNK, () -> null)).isNull();
        assertThat(roomy.taken()).isZero();
    }

    @Test
    void shouldGiveTheShareBackWhenTheBudgetRefusesTheChunk() {
        CacheShare share = new CacheShare(2 * CHUNK);
        assertThat(CacheShare.growChunk(share.account(), 3, 1, 100, CHUNK, () -> null)).isNull();
        assertThat(share.taken()).isZero();
    }
}
