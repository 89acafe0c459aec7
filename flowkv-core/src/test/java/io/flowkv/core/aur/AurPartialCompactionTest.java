package io.flowkv.core.aur;

import io.flowkv.core.SealedStore;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.read;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compaction that empties only the data logs whose windows have mostly died: a session-like trace
 * (each window takes values over many flushes, windows fire in the order they opened) over data
 * logs of 4 KiB, so that every window's frames span several logs and a compaction leaves some of
 * them in place.
 */
class AurPartialCompactionTest {
    private static final int LIFETIME = 100;
    private static final int APPENDS_PER_STEP = 10;

    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(32L << 20);
    private AurStore store;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).isZero();
    }

    private AurStoreOptions.Builder options(double readBatchRatio) {
        return AurStoreOptions.builder(dir)
                .segmentSize(4096)
                .writeBufferBytes(1 << 20)
                .maxSpaceAmplification(1.5)
                .readBatchRatio(readBatchRatio)
                .jitterSpread(0.0);
    }

    @Test
    void shouldServeEveryWindowInOrderAndRewriteFarLessThanItFlushes() throws IOException {
        // Bets on (ratio 0.2): misses scan the index or follow the chains of several windows.
        Trace trace = run(options(0.2), 3000);
        // A full compaction rewrote every live byte whenever space amplification passed 1.5: 0.97x
        // the bytes flushed on this trace. Emptying the oldest logs moves 0.30x.
        assertThat(trace.compactions).isGreaterThan(20);
        assertThat(trace.written).isLessThan(trace.flushed / 2);
        // Bounded all the same (without compaction the logs would reach 27x the live bytes).
        assertThat(trace.maxAmplification).isLessThan(3.5);
    }

    @Test
    void shouldServeEveryWindowInOrderWhenEachMissReadsOneWindow() throws IOException {
        // No bets: every miss follows the requested window's chain, sorted by file order.
        Trace trace = run(options(0.0), 1500);
        assertThat(trace.compactions).isGreaterThan(10);
    }

    @Test
    void shouldRestoreAStoreWhoseLogsWerePartlyCompacted() throws IOException {
        AurStoreOptions.Builder options = options(0.2);
        Trace trace = run(options, 600);
        assertThat(trace.compactions).isPositive();
        SealedStore sealed = store.seal();
        store.close();
        store = AurStore.restore(options.build(), budget, sealed.manifest());
        for (Map.Entry<Integer, List<String>> open : trace.model.entrySet()) {
            int w = open.getKey();
            assertThat(read(store, key(w), timeWindow(w, w + 1)))
                    .as("window %d after restore", w)
                    .isEqualTo(open.getValue().isEmpty() ? null : open.getValue());
        }
        // Fire the rest after restore: compaction keeps working on the restored logs.
        runSteps(trace, 600, 900);
    }

    private static byte[] key(int w) {
        return bytes("k" + w);
    }

    private Trace run(AurStoreOptions.Builder options, int steps) throws IOException {
        store = AurStore.open(options.build(), budget);
        Trace trace = new Trace();
        runSteps(trace, 0, steps);
        return trace;
    }

    /**
     * Step t opens window t, appends {@value #APPENDS_PER_STEP} values to random open windows,
     * flushes, and fires (reads, checks, removes) window t - {@value #LIFETIME}.
     */
    private void runSteps(Trace trace, int from, int to) throws IOException {
        for (int t = from; t < to; t++) {
            trace.model.put(t, new ArrayList<>());
            for (int i = 0; i < APPENDS_PER_STEP; i++) {
                int w =
                        Math.max(0, t - LIFETIME + 1)
                                + trace.random.nextInt(Math.min(t + 1, LIFETIME));
                String value = "v" + t + "-" + i + "-xxxxxxxx";
                trace.model.get(w).add(value);
                store.append(key(w), timeWindow(w, w + 1), bytes(value), t);
            }
            store.flush();
            int fired = t - LIFETIME;
            if (fired >= 0) {
                List<String> expected = trace.model.remove(fired);
                assertThat(read(store, key(fired), timeWindow(fired, fired + 1)))
                        .as("window %d at step %d", fired, t)
                        .isEqualTo(expected.isEmpty() ? null : expected);
                store.remove(key(fired), timeWindow(fired, fired + 1));
            }
            trace.maxAmplification =
                    Math.max(trace.maxAmplification, store.stats().spaceAmplification());
        }
        trace.compactions = store.stats().compactions();
        trace.written = store.stats().bytesCompactionWritten();
        trace.flushed = store.stats().bytesFlushed();
    }

    private static final class Trace {
        final Random random = new Random(42);
        final Map<Integer, List<String>> model = new HashMap<>();
        long compactions;
        long written;
        long flushed;
        double maxAmplification;
    }
}
