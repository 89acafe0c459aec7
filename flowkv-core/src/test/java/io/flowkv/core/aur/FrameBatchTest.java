package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class FrameBatchTest {
    @TempDir Path dir;

    @Test
    void shouldCollectChainsOldestFirstSortInLogOrderAndKeepOneWindow() throws Exception {
        MemoryBudget budget = new MemoryBudget(8L << 20);
        WindowStatTable table = new WindowStatTable(budget, FileIo.DEFAULT, dir, 1L << 20, null);
        PrefetchBuffer prefetch = new PrefetchBuffer(table, budget, 1L << 20, 0.0);
        try (FrameChains chains =
                        new FrameChains(
                                budget, FileIo.DEFAULT, dir.resolve("chains"), 1L << 20, null);
                FrameBatch batch = new FrameBatch(budget, prefetch)) {
            // Window 1 wrote to log 5 then log 9; log 9 (compacted) sits before log 5 in log order.
            long head = chains.extend(FrameChains.END, Positions.pack(5, 100), 10);
            head = chains.extend(head, Positions.pack(9, 40), 12);
            assertThat(batch.addChain(1, chains, head, 2, true)).isTrue();
            assertThat(batch.position(0)).as("oldest first").isEqualTo(Positions.pack(5, 100));
            assertThat(batch.position(1)).isEqualTo(Positions.pack(9, 40));
            batch.add(2, Positions.pack(9, 0), 40);

            DataLogs logs = new DataLogs(dir);
            logs.replaceAll(
                    List.of(
                            new LogSegment(9, dir.resolve("9"), FileType.AUR_DATA_LOG, 0),
                            new LogSegment(5, dir.resolve("5"), FileType.AUR_DATA_LOG, 0)));
            batch.sortInFileOrder(logs);
            assertThat(new long[] {batch.position(0), batch.position(1), batch.position(2)})
                    .containsExactly(
                            Positions.pack(9, 0), Positions.pack(9, 40), Positions.pack(5, 100));
            assertThat(new int[] {batch.id(0), batch.length(0)}).containsExactly(2, 40);

            batch.keepOnly(1);
            assertThat(batch.size()).isEqualTo(2);
            assertThat(batch.id(0)).isEqualTo(1);
            assertThat(batch.id(1)).isEqualTo(1);
        } finally {
            prefetch.close();
            table.release();
        }
        assertThat(budget.used()).as("budget after close").isZero();
    }

    @Test
    void shouldRefuseAFrameTheBudgetHasNoRoomFor() throws Exception {
        MemoryBudget budget = new MemoryBudget(8L << 20);
        WindowStatTable table = new WindowStatTable(budget, FileIo.DEFAULT, dir, 1L << 20, null);
        PrefetchBuffer prefetch = new PrefetchBuffer(table, budget, 1L << 20, 0.0);
        try (FrameBatch batch = new FrameBatch(budget, prefetch)) {
            long rest = budget.available();
            assertThat(budget.tryReserve(rest)).isTrue();
            assertThat(batch.tryAdd(1, Positions.pack(1, 0), 10)).isFalse();
            assertThat(batch.size()).isZero();
            budget.release(rest);
            assertThat(batch.tryAdd(1, Positions.pack(1, 0), 10)).isTrue();
            assertThat(batch.size()).isEqualTo(1);
        } finally {
            prefetch.close();
            table.release();
        }
    }
}
