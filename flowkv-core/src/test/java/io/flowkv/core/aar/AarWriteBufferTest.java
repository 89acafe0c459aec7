package io.flowkv.core.aar;

import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The AAR write buffer's two arenas: a written generation's chunks serve the next one. */
class AarWriteBufferTest {
    private static final int CHUNK = 1024;
    private static final int RECORDS = 100;

    private final MemoryBudget budget = new MemoryBudget(1 << 20);
    private final WriteBuffer buffer = new WriteBuffer(budget, CHUNK);
    private final AarPartition partition = new AarPartition(null, 0);

    @AfterEach
    void shouldGiveEveryByteBackOnClose() {
        buffer.close();
        assertThat(budget.used()).as("budget after close").isZero();
    }

    @Test
    void shouldFillAWrittenGenerationsChunksWithoutAskingTheBudgetAgain() {
        fillAndFlush(0);
        fillAndFlush(1);
        long used = budget.used();
        assertThat(buffer.spareBytes()).as("chunks kept for the next generation").isPositive();

        fill(2);

        assertThat(budget.used()).as("budget while the kept chunks refill").isEqualTo(used);
        assertThat(buffer.usedBytes()).isPositive();
    }

    @Test
    void shouldGiveTheSpareBackOnlyWhenNoFlushWritesFromIt() {
        fill(0);
        partition.detachChain();
        buffer.detachGeneration();
        assertThat(buffer.releaseSpare()).as("a flush still writes from it").isFalse();
        assertThat(buffer.spareBytes()).isZero();

        buffer.releaseGeneration();
        long spare = buffer.spareBytes();
        long used = budget.used();
        assertThat(spare).isPositive();

        assertThat(buffer.releaseSpare()).isTrue();
        assertThat(budget.used()).isEqualTo(used - spare);
        assertThat(buffer.spareBytes()).isZero();
        assertThat(buffer.releaseSpare()).as("nothing left to give").isFalse();
    }

    @Test
    void shouldGiveTheSpareBackToIndexAFiringWindowsChain() {
        fillAndFlush(0, 3 * RECORDS);
        fill(1, 3 * RECORDS);
        long spare = buffer.spareBytes();
        assertThat(spare).isPositive();
        // Everything else is taken: the chain's index fits only in what the spare gives back.
        long hog = budget.available() - 1024;
        assertThat(budget.tryReserve(hog)).isTrue();
        try {
            assertThat(buffer.indexChain(partition, 0)).as("chain indexed").isTrue();
            assertThat(buffer.spareBytes()).as("spare given back").isZero();
        } finally {
            buffer.dropIndex(partition);
            budget.release(hog);
        }
    }

    /** Appends a generation, hands it to a flush and settles that flush. */
    private void fillAndFlush(int generation) {
        fillAndFlush(generation, RECORDS);
    }

    private void fillAndFlush(int generation, int records) {
        fill(generation, records);
        partition.detachChain();
        buffer.detachGeneration();
        buffer.releaseGeneration();
    }

    private void fill(int generation) {
        fill(generation, RECORDS);
    }

    private void fill(int generation, int records) {
        byte[] key = "key".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < records; i++) {
            byte[] value =
                    (generation + "-" + i + "-" + "v".repeat(80)).getBytes(StandardCharsets.UTF_8);
            long pos = buffer.tryAppend(partition, AarRecordDescriptor.APPEND, 42L, key, value);
            assertThat(pos).as("append %d of generation %d", i, generation).isNotNegative();
        }
    }
}
