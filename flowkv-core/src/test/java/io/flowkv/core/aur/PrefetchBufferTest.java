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
        WindowStatTable table = newTable(budget);
        PrefetchBuffer prefetch = new PrefetchBuffer(table, budget, 1L << 40, 0.05);
        try {
            List<byte[]> keys = insertWindows(table, 20_000);
            for (int id = 0; id < keys.size(); id++) {
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
                List<Integer> expected = expectedBets(table, 0.05, requested, now);
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

    /**
     * Reads ahead while windows fire back to back reuse one ranking, from where the last read ahead
     * stopped, and bet on what a fresh pass would: the windows nearest their trigger that fit the
     * room. Between reads ahead the bets are read (served), and now and then a window is removed,
     * gets a new trigger time, its first flushed bytes, an append after its read, a copy that is
     * then dropped unread, or a read ahead's bets are dropped; every change that can make a window
     * a candidate again, or move it up, makes the next read ahead rank again.
     */
    @Test
    void readsAheadFromOneRankingWhileNothingChanges() {
        // Room for about twenty windows of 1 to 100 bytes, under the batch ratio's fifty: the room
        // binds, and a ranking (eight reads of fifty) lasts about twenty reads ahead.
        readAheadScenario(1_000, 0.0025);
        // Room for all: the batch ratio binds, twenty windows a read, eight reads a ranking.
        readAheadScenario(1L << 40, 0.001);
    }

    private void readAheadScenario(long limit, double ratio) {
        long seed = System.nanoTime();
        SplittableRandom rnd = new SplittableRandom(seed);
        MemoryBudget budget = new MemoryBudget(32L << 20);
        WindowStatTable table = newTable(budget);
        PrefetchBuffer prefetch = new PrefetchBuffer(table, budget, limit, ratio);
        try {
            List<byte[]> keys = insertWindows(table, 20_000);
            for (int id = 0; id < keys.size(); id++) {
                // Distinct trigger times: no two windows rank equal.
                table.setEtt(id, FIRST_ETT + 20_000L * id + rnd.nextInt(20_000));
                if (rnd.nextInt(8) != 0) {
                    table.setDiskBytes(id, 1 + rnd.nextInt(100));
                }
            }
            shuffleTriggerTimes(table, rnd);
            long front = FIRST_ETT - 1;
            int held = WindowStatTable.NO_ID;
            long quiet = 0;
            long passesWhenQuiet = 0;
            for (int step = 1; step <= 400; step++) {
                boolean changed = false;
                int id = rnd.nextInt(table.highWater());
                switch (rnd.nextInt(48)) {
                    case 0:
                        if (keys.get(id) != null) {
                            table.remove(id, keys.get(id), keys.get(id));
                            keys.set(id, null);
                        }
                        break;
                    case 1:
                        // Nearer than every other window: the next read ahead must bet on it.
                        if (keys.get(id) != null) {
                            table.setEtt(id, front--);
                            changed = true;
                        }
                        break;
                    case 2:
                        // The nearest window without flushed bytes gets its first.
                        id = nearest(table, 0, false);
                        if (id != WindowStatTable.NO_ID) {
                            table.setDiskBytes(id, 1 + rnd.nextInt(100));
                            changed = true;
                        }
                        break;
                    case 3:
                        // The nearest window read so far takes an append.
                        id = nearest(table, 1, true);
                        if (id != WindowStatTable.NO_ID) {
                            table.setFlags(id, table.flags(id) & ~WindowStatTable.SERVED);
                            changed = true;
                        }
                        break;
                    case 4:
                        // The nearest candidate is read ahead, and its copy held unread.
                        id = nearest(table, 1, false);
                        if (held == WindowStatTable.NO_ID && id != WindowStatTable.NO_ID) {
                            assertThat(prefetch.admit(id, table.diskBytes(id))).isTrue();
                            held = id;
                        }
                        break;
                    case 5:
                        // The copy is dropped unread: its window is a candidate again.
                        if (held != WindowStatTable.NO_ID) {
                            prefetch.evict(held);
                            held = WindowStatTable.NO_ID;
                            changed = true;
                        }
                        break;
                    default:
                        break;
                }
                List<Integer> expected = expectedBets(table, ratio, limit - prefetch.used());
                long passesBefore = prefetch.passes();
                prefetch.planAhead(step, 0);
                List<Integer> bets = new ArrayList<>();
                for (int i = 0; i < prefetch.betCount(); i++) {
                    bets.add(prefetch.betId(i));
                }
                assertThat(bets).as("bets of step %d, seed %d", step, seed).isEqualTo(expected);
                if (changed) {
                    assertThat(prefetch.passes())
                            .as("a pass after a change, step %d, seed %d", step, seed)
                            .isEqualTo(passesBefore + 1);
                } else if (step > 1) {
                    quiet++;
                    passesWhenQuiet += prefetch.passes() - passesBefore;
                }
                if (rnd.nextInt(50) == 0) {
                    prefetch.dropBets();
                    continue;
                }
                for (int bet : bets) {
                    // Read: a copy would be served now, and then never bet on again.
                    table.setBatchStamp(bet, 0);
                    table.setFlags(bet, table.flags(bet) | WindowStatTable.SERVED);
                }
            }
            // A ranking serves eight reads ahead or more unless a change or a drop ends it first.
            assertThat(passesWhenQuiet)
                    .as("passes in %d quiet steps, seed %d", quiet, seed)
                    .isLessThan(quiet / 4);
        } finally {
            prefetch.close();
            table.release();
        }
        assertThat(budget.used()).isZero();
    }

    private WindowStatTable newTable(MemoryBudget budget) {
        return new WindowStatTable(
                budget, FileIo.DEFAULT, dir, AurStoreOptions.MIN_STAT_CACHE_BYTES, null);
    }

    /** Windows with ids 0 to {@code n - 1}, each its 8-byte key also as its window; their keys. */
    private static List<byte[]> insertWindows(WindowStatTable table, int n) {
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] key = ByteBuffer.allocate(8).putLong(i).array();
            assertThat(table.insert(key, key, i)).isEqualTo(i);
            keys.add(key);
        }
        return keys;
    }

    /** Above it, the trigger times the windows start with; below it, those moved to the front. */
    private static final long FIRST_ETT = 1L << 30;

    /**
     * The in-use window with a known trigger time nearest its trigger among those with ({@code
     * diskBytes != 0}) or without ({@code 0}) flushed bytes, read ({@code served}) or not.
     */
    private static int nearest(WindowStatTable table, long diskBytes, boolean served) {
        int nearest = WindowStatTable.NO_ID;
        for (int id = 0; id < table.highWater(); id++) {
            if (table.inUse(id)
                    && table.ett(id) != TriggerTimePredictor.UNKNOWN
                    && (table.diskBytes(id) != 0) == (diskBytes != 0)
                    && ((table.flags(id) & WindowStatTable.SERVED) != 0) == served
                    && (nearest == WindowStatTable.NO_ID || table.ett(id) < table.ett(nearest))) {
                nearest = id;
            }
        }
        return nearest;
    }

    /** Trigger times in random order of id, still distinct. */
    private static void shuffleTriggerTimes(WindowStatTable table, SplittableRandom rnd) {
        for (int i = table.highWater() - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            long a = table.ett(i);
            long b = table.ett(j);
            table.setEtt(i, b);
            table.setEtt(j, a);
        }
    }

    /** What a fresh pass bets on ahead of any miss: the nearest candidates that fit the room. */
    private static List<Integer> expectedBets(WindowStatTable table, double ratio, long room) {
        List<Integer> ids = new ArrayList<>();
        for (int id : expectedBets(table, ratio, WindowStatTable.NO_ID, 0)) {
            long bytes = table.diskBytes(id);
            if (bytes > room) {
                break;
            }
            room -= bytes;
            ids.add(id);
        }
        return ids;
    }

    /** The full pass: every record, the bet count of {@link PrefetchBuffer} and its order. */
    private static List<Integer> expectedBets(
            WindowStatTable table, double ratio, int requested, long now) {
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
        int n = (int) Math.ceil(ratio * table.size());
        candidates.sort(Comparator.comparingLong(c -> c[0]));
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < Math.min(n, candidates.size()); i++) {
            ids.add((int) candidates.get(i)[1]);
        }
        return ids;
    }
}
