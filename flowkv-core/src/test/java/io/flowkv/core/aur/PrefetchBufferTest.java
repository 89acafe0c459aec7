package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class PrefetchBufferTest {
    @TempDir Path dir;

    /**
     * The bets of a miss are the windows nearest their trigger among those with flushed data, no
     * copy, not served since their last append and a known trigger time, as a pass over every
     * record finds them: windows inserted, given trigger times, removed and their ids reused, in a
     * table whose page caches are far smaller than it (so its records and its packed trigger times
     * both spill).
     */
    @Test
    void shouldBetOnTheEligibleWindowsNearestTheirTrigger() {
        long seed = System.nanoTime();
        SplittableRandom rnd = new SplittableRandom(seed);
        MemoryBudget budget = new MemoryBudget(32L << 20);
        WindowStatTable table =
                new WindowStatTable(
                        budget, FileIo.DEFAULT, dir, AurStoreOptions.MIN_STAT_CACHE_BYTES, null);
        PrefetchBuffer prefetch = new PrefetchBuffer(table, budget, 1L << 40, 0.05);
        try {
            List<byte[]> keys = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                byte[] key = ByteBuffer.allocate(8).putLong(i).array();
                int id = table.insert(key, key, i);
                keys.add(key);
                assertThat(id).isEqualTo(i);
                if (rnd.nextInt(10) != 0) {
                    table.setEtt(id, 1 + rnd.nextLong(1L << 40));
                }
                if (rnd.nextInt(8) != 0) {
                    table.setDiskBytes(id, 1 + rnd.nextInt(100));
                }
                if (rnd.nextInt(12) == 0) {
                    table.setFlags(id, WindowStatTable.SERVED);
                }
            }
            for (int round = 0; round < 5; round++) {
                // Remove some windows; insert new ones into the freed ids.
                for (int i = 0; i < 1_000; i++) {
                    int id = rnd.nextInt(keys.size());
                    if (keys.get(id) != null) {
                        table.remove(id, keys.get(id), keys.get(id));
                        keys.set(id, null);
                    }
                }
                for (int i = 0; i < 500; i++) {
                    byte[] key = ByteBuffer.allocate(12).putLong(round).putInt(i).array();
                    int id = table.insert(key, key, i);
                    keys.set(id, key);
                    if (rnd.nextBoolean()) {
                        table.setEtt(id, 1 + rnd.nextLong(1L << 40));
                        table.setDiskBytes(id, 1 + rnd.nextInt(100));
                    }
                }
                int requested = rnd.nextInt(table.highWater());
                while (!table.inUse(requested)) {
                    requested = rnd.nextInt(table.highWater());
                }
                // Before every trigger time, which are distinct: no two bets rank equal.
                long now = 0;
                List<Integer> expected = expectedBets(table, requested, now);
                prefetch.plan(requested, round + 1, now);
                List<Integer> bets = new ArrayList<>();
                for (int i = 0; i < prefetch.betCount(); i++) {
                    bets.add(prefetch.betId(i));
                }
                assertThat(bets).as("bets of round %d, seed %d", round, seed).isEqualTo(expected);
                prefetch.dropBets();
                for (int id : expected) {
                    table.setBatchStamp(id, 0);
                }
                table.setBatchStamp(requested, 0);
            }
        } finally {
            prefetch.close();
            table.release();
        }
        assertThat(budget.used()).isZero();
    }

    /** The full pass: every record, the bet count of {@link PrefetchBuffer} and its order. */
    private static List<Integer> expectedBets(WindowStatTable table, int requested, long now) {
        List<long[]> candidates = new ArrayList<>();
        for (int id = 0; id < table.highWater(); id++) {
            if (!table.inUse(id)
                    || id == requested
                    || table.diskBytes(id) == 0
                    || table.prefetched(id) != null
                    || (table.flags(id) & WindowStatTable.SERVED) != 0
                    || table.ett(id) == TriggerTimePredictor.UNKNOWN) {
                continue;
            }
            candidates.add(new long[] {Math.max(table.ett(id), now), id});
        }
        int n = (int) Math.ceil(0.05 * table.size());
        candidates.sort(Comparator.comparingLong(c -> c[0]));
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < Math.min(n, candidates.size()); i++) {
            ids.add((int) candidates.get(i)[1]);
        }
        return ids;
    }
}
