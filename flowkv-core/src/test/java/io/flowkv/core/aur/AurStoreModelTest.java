package io.flowkv.core.aur;

import io.flowkv.core.SealedStore;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.read;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Session-window traces against an in-memory model: out-of-order elements, merging sessions (get +
 * append to the target + remove the sources, as Flink's mergeNamespaces does), windows fired in ETT
 * order, late elements after a fire, with flush, compaction and seal + restore interleaved. Every
 * read is compared with the model. Replay a failure with -Dflowkv.seed=N.
 */
class AurStoreModelTest {
    private static final int RUNS = 8;
    private static final int OPS = 4000;
    private static final long BOUND = 20;
    private static final byte[] GLOBAL = new byte[0];

    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private MemoryBudget budget = new MemoryBudget(64L << 20);
    private AurStore store;

    @AfterEach
    void shouldLeakNothing() throws IOException {
        if (store != null) {
            store.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    /** One session: its state window is fixed by its first element, the merged span grows. */
    private static final class Session {
        final String key;
        final long stateStart;
        final long gap;
        long minTs;
        long maxTs;
        boolean fired;
        final List<String> values = new ArrayList<>();

        Session(String key, long ts, long gap) {
            this.key = key;
            this.stateStart = ts;
            this.gap = gap;
            this.minTs = ts;
            this.maxTs = ts;
        }

        byte[] keyBytes() {
            return bytes(key);
        }

        byte[] window() {
            return timeWindow(stateStart, stateStart + gap);
        }

        long ett() {
            return maxTs + gap;
        }
    }

    @Test
    void shouldMatchModelOnSessionTracesWithFlushCompactionAndRestore() throws IOException {
        long base = AurTestSupport.seed();
        for (int run = 0; run < RUNS; run++) {
            long seed = base + run;
            System.out.println("AurStoreModelTest seed=" + seed + " (-Dflowkv.seed=" + seed + ")");
            runTrace(seed);
        }
    }

    private void runTrace(long seed) throws IOException {
        SplittableRandom rnd = new SplittableRandom(seed);
        String ctx = "seed=" + seed;
        double ratio = new double[] {0.0, 0.02, 0.1, 1.0}[rnd.nextInt(4)];
        long prefetchLimit = new long[] {0, 2048, 1 << 20}[rnd.nextInt(3)];
        AurStoreOptions options =
                AurStoreOptions.builder(dir.resolve("run-" + seed))
                        .readBatchRatio(ratio)
                        .maxSpaceAmplification(new double[] {1.1, 1.5, 4.0}[rnd.nextInt(3)])
                        .writeBufferBytes(new long[] {1024, 4096, 65536}[rnd.nextInt(3)])
                        .prefetchBufferLimit(prefetchLimit)
                        .segmentSize(rnd.nextBoolean() ? 4096 : 1 << 20)
                        .fileIo(io)
                        .jitterSeed(seed)
                        // Odd seeds page the stat table and frame chains through the least cache.
                        .statCacheBytes(
                                (seed & 1) != 0
                                        ? AurStoreOptions.MIN_STAT_CACHE_BYTES
                                        : AurStoreOptions.DEFAULT_STAT_CACHE_BYTES)
                        .build();
        // The logs' faults are recoverable; a scratch page that cannot be written fails the store
        // (AurChainReadTest covers that), so the random faults spare the scratch files.
        io.faultOnly(file -> !file.getFileName().toString().startsWith("scratch-"));
        // A tight budget makes appends and reads flush on refusal.
        budget = new MemoryBudget(rnd.nextInt(4) == 0 ? 520 * 1024 : 64L << 20);
        ctx += " ratio=" + ratio + " prefetchLimit=" + prefetchLimit + " budget=" + budget;
        store = AurStore.open(options, budget);

        Map<String, List<Session>> byKey = new HashMap<>();
        List<Session> fired = new ArrayList<>();
        int keys = 5 + rnd.nextInt(40);
        long t = 0;
        int counter = 0;
        int faults = 0;
        Map<String, List<String>> globals = new HashMap<>();
        for (int op = 0; op < OPS; op++) {
            int r = rnd.nextInt(1000);
            String at = ctx + " op=" + op;
            if (r < 50) {
                // A global (count-like) window: ETT unknown, never predicted, read on demand.
                String key = "g" + rnd.nextInt(5);
                String value = "g" + counter++;
                store.append(bytes(key), GLOBAL, bytes(value), t);
                globals.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
                if (rnd.nextInt(4) == 0) {
                    assertThat(read(store, bytes(key), GLOBAL))
                            .as(at + " global " + key)
                            .isEqualTo(globals.get(key));
                }
                if (rnd.nextInt(20) == 0) {
                    store.remove(bytes(key), GLOBAL);
                    globals.remove(key);
                }
            } else if (r < 650) {
                t += rnd.nextInt(6);
                int k = rnd.nextInt(keys);
                String key = "k" + k;
                long gap = 10 + (k % 4) * 15;
                long ts = t - rnd.nextLong(BOUND);
                String value = "v" + counter++ + "-" + "x".repeat(rnd.nextInt(40));
                boolean explicit = k % 2 == 0;
                appendEvent(byKey, fired, key, gap, ts, value, explicit, at);
            } else if (r < 800) {
                fire(byKey, fired, t - BOUND, rnd, at);
            } else if (r < 850) {
                List<Session> open = new ArrayList<>();
                byKey.values().forEach(open::addAll);
                if (!open.isEmpty()) {
                    check(open.get(rnd.nextInt(open.size())), at + " random get");
                }
            } else if (r < 880) {
                store.flush();
            } else if (r < 890) {
                store.compact();
                assertThat(store.stats().deadBytes()).as(at + " dead after compaction").isZero();
            } else if (r < 900) {
                // A disk that fails mid-operation: nothing acknowledged may be lost.
                io.failWritesAfter(rnd.nextInt(6));
                try {
                    switch (rnd.nextInt(3)) {
                        case 0 -> store.flush();
                        case 1 -> store.compact();
                        default -> store.seal();
                    }
                } catch (IOException expected) {
                    faults++;
                } finally {
                    io.heal();
                }
            } else if (r < 905) {
                SealedStore sealed = store.seal();
                assertThat(store.stats().files())
                        .as(at + " files in the stats vs sealed")
                        .isEqualTo(sealed.files().size());
                store.close();
                assertThat(budget.used()).as(at + " budget between close and restore").isZero();
                store = AurStore.restore(options, budget, sealed.manifest());
                assertThat(store.stats().files())
                        .as(at + " files in the stats after restore")
                        .isEqualTo(sealed.files().size());
            } else if (r < 960) {
                if (!fired.isEmpty()) {
                    Session s = fired.get(rnd.nextInt(fired.size()));
                    String value = "late" + counter++;
                    store.append(s.keyBytes(), s.window(), bytes(value), s.maxTs - rnd.nextInt(5));
                    s.values.add(value);
                    check(s, at + " late fire");
                }
            } else {
                if (!fired.isEmpty()) {
                    Session s = fired.remove(rnd.nextInt(fired.size()));
                    store.remove(s.keyBytes(), s.window());
                    assertThat(read(store, s.keyBytes(), s.window())).as(at).isNull();
                }
            }
            assertThat(store.prefetchBufferBytes())
                    .as(at + " prefetch buffer bound")
                    .isLessThanOrEqualTo(prefetchLimit);
            assertThat(store.stats().liveBytes()).as(at).isGreaterThanOrEqualTo(0);
            assertThat(store.stats().entries())
                    .as(at + " windows in the stats")
                    .isEqualTo(store.liveWindows());
            assertThat(store.memoryUsed())
                    .as(at + " every byte held is charged to the budget")
                    .isEqualTo(budget.used());
        }

        List<Session> all = new ArrayList<>(fired);
        byKey.values().forEach(all::addAll);
        for (Session s : all) {
            check(s, ctx + " final");
        }
        for (Map.Entry<String, List<String>> g : globals.entrySet()) {
            assertThat(read(store, bytes(g.getKey()), GLOBAL))
                    .as(ctx + " final global")
                    .isEqualTo(g.getValue());
        }
        Map<String, List<String>> visited = new HashMap<>();
        store.forEach(
                (key, window, buf, off, len) ->
                        visited.computeIfAbsent(
                                        new String(key, StandardCharsets.UTF_8)
                                                + "@"
                                                + java.util.Arrays.toString(window),
                                        x -> new ArrayList<>())
                                .add(new String(buf, off, len, StandardCharsets.UTF_8)));
        Map<String, List<String>> expected = new HashMap<>();
        for (Session s : all) {
            expected.put(s.key + "@" + java.util.Arrays.toString(s.window()), s.values);
        }
        globals.forEach((key, values) -> expected.put(key + "@[]", values));
        assertThat(visited).as(ctx + " forEach").isEqualTo(expected);
        System.out.println(
                "  "
                        + ctx
                        + " windows="
                        + all.size()
                        + " injectedFaults="
                        + faults
                        + " hitRatio="
                        + store.hitRatio()
                        + " readAmplification="
                        + store.readAmplification()
                        + " "
                        + store.stats());
        store.close();
        assertThat(budget.used()).as(ctx + " budget after close").isZero();
        store = null;
    }

    private void appendEvent(
            Map<String, List<Session>> byKey,
            List<Session> fired,
            String key,
            long gap,
            long ts,
            String value,
            boolean explicit,
            String at)
            throws IOException {
        List<Session> sessions = byKey.computeIfAbsent(key, x -> new ArrayList<>());
        List<Session> overlapping = new ArrayList<>();
        for (Session s : sessions) {
            if (ts < s.maxTs + gap && s.minTs < ts + gap) {
                overlapping.add(s);
            }
        }
        Session target;
        if (overlapping.isEmpty()) {
            for (Session s : fired) {
                if (s.key.equals(key) && s.stateStart == ts) {
                    return; // the fired session still owns this state window
                }
            }
            for (Session s : sessions) {
                if (s.stateStart == ts) {
                    return;
                }
            }
            target = new Session(key, ts, gap);
            sessions.add(target);
        } else {
            overlapping.sort(Comparator.comparingLong(s -> s.stateStart));
            target = overlapping.get(0);
            for (Session source : overlapping.subList(1, overlapping.size())) {
                List<String> moved = read(store, source.keyBytes(), source.window());
                assertThat(moved)
                        .as(at + " merge source")
                        .isEqualTo(source.values.isEmpty() ? null : source.values);
                for (String v : source.values) {
                    store.append(target.keyBytes(), target.window(), bytes(v), source.maxTs);
                }
                store.remove(source.keyBytes(), source.window());
                target.values.addAll(source.values);
                target.minTs = Math.min(target.minTs, source.minTs);
                target.maxTs = Math.max(target.maxTs, source.maxTs);
                sessions.remove(source);
            }
        }
        store.append(target.keyBytes(), target.window(), bytes(value), ts);
        target.values.add(value);
        target.minTs = Math.min(target.minTs, ts);
        target.maxTs = Math.max(target.maxTs, ts);
        if (explicit) {
            store.setTriggerTime(target.keyBytes(), target.window(), target.ett());
        }
        assertThat(store.triggerTime(target.keyBytes(), target.window()))
                .as(at + " ETT")
                .isEqualTo(target.ett());
    }

    private void fire(
            Map<String, List<Session>> byKey,
            List<Session> fired,
            long watermark,
            SplittableRandom rnd,
            String at)
            throws IOException {
        List<Session> due = new ArrayList<>();
        for (List<Session> sessions : byKey.values()) {
            for (Session s : sessions) {
                if (s.ett() <= watermark) {
                    due.add(s);
                }
            }
        }
        due.sort(Comparator.comparingLong(Session::ett).thenComparing(s -> s.key));
        for (Session s : due) {
            check(s, at + " fire");
            byKey.get(s.key).remove(s);
            s.fired = true;
            if (rnd.nextInt(10) < 7) {
                store.remove(s.keyBytes(), s.window());
            } else {
                fired.add(s);
            }
        }
    }

    private void check(Session s, String at) throws IOException {
        assertThat(read(store, s.keyBytes(), s.window()))
                .as(at + " key=" + s.key + " window=" + s.stateStart)
                .isEqualTo(s.values.isEmpty() ? null : s.values);
    }
}
