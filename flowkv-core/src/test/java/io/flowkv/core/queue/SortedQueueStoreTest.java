package io.flowkv.core.queue;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.TestSeeds;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static io.flowkv.core.queue.SortedQueueStore.RUNS_PER_TIER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SortedQueueStore} against a {@link TreeSet} model, with memtables so small that flushes
 * and merges happen every few operations, and elements removed, polled and added again so that ADD
 * and DEL records of one element lie in many runs. Replay a failure with {@code -Dflowkv.seed=N}.
 */
class SortedQueueStoreTest {
    private static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;
    private static final HexFormat HEX = HexFormat.of();
    private static final long STAGING_BYTES = 64 << 10;

    @TempDir Path dir;

    private final MemoryBudget budget = new MemoryBudget(64L << 20);
    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private SortedQueueStore store;

    @AfterEach
    void tearDown() throws IOException {
        if (store != null) {
            store.close();
            assertThat(store.memoryUsed()).as("store memory after close").isZero();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
    }

    private SortedQueueStore open(Path directory, long memtableBytes) throws IOException {
        return SortedQueueStore.open(directory, budget, memtableBytes, io);
    }

    // ---------------------------------------------------------------- model-based

    @Test
    void shouldMatchTreeSetModelUnderRandomOperations() throws IOException {
        for (long seed : seeds(4)) {
            runModel(seed, 20_000, false);
        }
    }

    /**
     * Writes of run files fail now and then: the add or remove that flushes (or merges) fails and
     * must leave the store as it was, the mutation not applied.
     */
    @Test
    void shouldMatchTreeSetModelWhenRunWritesFail() throws IOException {
        io.faultOnly(file -> file.getFileName().toString().startsWith("run-"));
        for (long seed : seeds(2)) {
            runModel(seed, 10_000, true);
        }
    }

    private static long[] seeds(int count) {
        Long replayed = TestSeeds.replayed();
        if (replayed != null) {
            return new long[] {replayed};
        }
        long base = TestSeeds.base();
        long[] seeds = new long[count];
        for (int i = 0; i < count; i++) {
            seeds[i] = base + i;
        }
        return seeds;
    }

    private void runModel(long seed, int operations, boolean faults) throws IOException {
        String replay = "seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        System.out.println("SortedQueueStoreTest " + replay + (faults ? " with write faults" : ""));
        SplittableRandom random = new SplittableRandom(seed);
        int timestamps = 8 + random.nextInt(256);
        long memtable = 1024 + random.nextInt(1025);
        store = open(dir.resolve("model-" + seed), memtable);
        TreeSet<byte[]> model = new TreeSet<>(ORDER);
        List<byte[]> gone = new ArrayList<>(); // polled or removed: candidates for a re-add
        int maxRuns = 0;
        int failedWrites = 0;
        for (int op = 0; op < operations; op++) {
            String at = replay + ", operation " + op;
            // Phases of growth and of draining, so the set is sometimes large, sometimes empty.
            boolean growing = (op / 1500) % 2 == 0;
            int dice = random.nextInt(100);
            if (faults && random.nextInt(50) == 0) {
                io.failWritesAfter(random.nextInt(4));
            } else if (faults && random.nextInt(10) == 0) {
                io.heal();
            }
            if (dice < (growing ? 45 : 20)) {
                byte[] e =
                        !gone.isEmpty() && random.nextInt(3) > 0
                                ? gone.get(random.nextInt(gone.size()))
                                : element(random, timestamps);
                boolean added;
                try {
                    added = store.add(e);
                } catch (IOException failure) {
                    assertThat(faults).as(at + ": unexpected failure " + failure).isTrue();
                    failedWrites++;
                    continue;
                }
                // "true unless known present": false must be right, true says nothing.
                boolean wasPresent = !model.add(e);
                if (!added) {
                    assertThat(wasPresent).as(at + ": add said present " + hex(e)).isTrue();
                }
            } else if (dice < (growing ? 60 : 35)) {
                byte[] e =
                        random.nextBoolean() && !model.isEmpty()
                                ? pickPresent(model, random)
                                : random.nextBoolean() && !gone.isEmpty()
                                        ? gone.get(random.nextInt(gone.size()))
                                        : element(random, timestamps);
                boolean removed;
                try {
                    removed = store.remove(e);
                } catch (IOException failure) {
                    assertThat(faults).as(at + ": unexpected failure " + failure).isTrue();
                    failedWrites++;
                    continue;
                }
                // "true if it may have been present": false must be right.
                boolean wasPresent = model.remove(e);
                if (!removed) {
                    assertThat(wasPresent).as(at + ": remove said absent " + hex(e)).isFalse();
                }
                if (wasPresent) {
                    gone.add(e);
                }
            } else if (dice < 75) { // polls: 15% while growing, 40% while draining
                byte[] polled = store.poll();
                byte[] expected = model.pollFirst();
                assertThat(hex(polled)).as(at + ": poll").isEqualTo(hex(expected));
                if (polled != null) {
                    gone.add(polled);
                }
            } else if (dice < 90) {
                assertThat(hex(store.peek())).as(at + ": peek").isEqualTo(hex(first(model)));
            } else if (dice < 99) {
                assertThat(store.size()).as(at + ": size").isEqualTo(model.size());
                assertThat(store.isEmpty()).as(at + ": isEmpty").isEqualTo(model.isEmpty());
            } else if (random.nextInt(20) == 0) {
                store.clear();
                model.clear();
                assertThat(runFiles(dir.resolve("model-" + seed)))
                        .as(at + ": after clear")
                        .isZero();
            } else {
                assertThat(visitAll()).as(at + ": forEach").isEqualTo(hexes(model));
            }
            if (gone.size() > 4096) {
                gone.subList(0, 2048).clear();
            }
            maxRuns = Math.max(maxRuns, store.runCount());
        }
        io.heal();
        assertThat(visitAll()).as(replay + ": forEach at the end").isEqualTo(hexes(model));
        while (!model.isEmpty()) {
            assertThat(hex(store.poll())).as(replay + ": drain").isEqualTo(hex(model.pollFirst()));
        }
        assertThat(store.poll()).as(replay + ": poll of an empty store").isNull();
        assertThat(store.peek()).as(replay + ": peek of an empty store").isNull();
        assertThat(store.size()).as(replay + ": size after drain").isZero();
        assertThat(store.runCount()).as(replay + ": every run consumed").isZero();
        assertThat(runFiles(dir.resolve("model-" + seed))).as(replay + ": run files").isZero();
        assertThat(maxRuns).as(replay + ": runs were written").isGreaterThan(1);
        if (faults) {
            assertThat(failedWrites).as(replay + ": faults were injected").isPositive();
        }
        store.close();
        store = null;
        assertThat(budget.used()).as(replay + ": budget after close").isZero();
    }

    /** A timestamp-like 8-byte big-endian prefix from a small range, then 0-2 random bytes. */
    private static byte[] element(SplittableRandom random, int timestamps) {
        byte[] e = new byte[8 + random.nextInt(3)];
        ByteBuffer.wrap(e).putLong(1_700_000_000_000L + random.nextInt(timestamps));
        for (int i = 8; i < e.length; i++) {
            e[i] = (byte) (random.nextBoolean() ? 0xFF : random.nextInt(3));
        }
        return e;
    }

    private static byte[] pickPresent(TreeSet<byte[]> model, SplittableRandom random) {
        byte[] probe = element(random, 256);
        byte[] e = model.ceiling(probe);
        return e != null ? e : model.first();
    }

    /** What forEach gives, in its order (ascending). */
    private List<String> visitAll() throws IOException {
        List<String> visited = new ArrayList<>();
        store.forEach(e -> visited.add(hex(e)));
        return visited;
    }

    private static List<String> hexes(TreeSet<byte[]> model) {
        List<String> all = new ArrayList<>(model.size());
        for (byte[] e : model) {
            all.add(hex(e));
        }
        return all;
    }

    private void assertMatches(TreeSet<byte[]> model, String at) throws IOException {
        assertThat(hex(store.peek())).as(at + ": peek").isEqualTo(hex(first(model)));
        assertThat(store.size()).as(at + ": size").isEqualTo(model.size());
        assertThat(store.isEmpty()).as(at + ": isEmpty").isEqualTo(model.isEmpty());
        assertThat(visitAll()).as(at + ": forEach").isEqualTo(hexes(model));
    }

    private static byte[] first(TreeSet<byte[]> model) {
        return model.isEmpty() ? null : model.first();
    }

    private static String hex(byte[] e) {
        return e == null ? "null" : HEX.formatHex(e);
    }

    // ---------------------------------------------------------------- bulk load

    /**
     * A sorted load is one run at the tier its size reaches, then the store behaves as if the
     * elements had been added: the same answers as the model under adds, removes (of loaded
     * elements too, whose records then lie in the loaded run and in newer runs) and polls.
     */
    @Test
    void shouldLoadAscendingAsOneRunThenMatchTheModel() throws IOException {
        long seed = TestSeeds.base();
        String replay = "seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        SplittableRandom random = new SplittableRandom(seed);
        store = open(dir.resolve("load"), 1024);
        TreeSet<byte[]> model = new TreeSet<>(ORDER);
        while (model.size() < 3_000) {
            model.add(element(random, 512));
        }
        store.loadAscending(new ArrayList<>(model).iterator());
        assertThat(store.runCount()).as(replay + ": runs after the load").isEqualTo(1);
        assertMatches(model, replay + ": after the load");
        for (int op = 0; op < 6_000; op++) {
            String at = replay + ", operation " + op;
            int dice = random.nextInt(10);
            if (dice < 4) {
                byte[] e = element(random, 512);
                store.add(e);
                model.add(e);
            } else if (dice < 7 && !model.isEmpty()) {
                byte[] e = pickPresent(model, random);
                store.remove(e);
                model.remove(e);
            } else {
                assertThat(hex(store.poll())).as(at + ": poll").isEqualTo(hex(model.pollFirst()));
            }
            if (op % 500 == 0) {
                assertMatches(model, at);
            }
        }
        assertMatches(model, replay + ": at the end");
    }

    @Test
    void shouldRefuseALoadOutOfOrderOrIntoAStoreWithElements() throws IOException {
        store = open(dir.resolve("refuse"), 1024);
        byte[] a = {1, 0, 0, 0, 0, 0, 0, 0};
        byte[] b = {2, 0, 0, 0, 0, 0, 0, 0};
        assertThatThrownBy(() -> store.loadAscending(List.of(b, a).iterator()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("element 1 is not above");
        assertThatThrownBy(() -> store.loadAscending(List.of(a, a).iterator()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store.isEmpty()).as("nothing loaded by a refused load").isTrue();
        try (Stream<Path> files = Files.list(dir.resolve("refuse"))) {
            assertThat(files).as("files left by refused loads").isEmpty();
        }
        store.loadAscending(List.<byte[]>of().iterator());
        assertThat(store.isEmpty()).isTrue();
        assertThat(store.isPristine()).as("pristine after an empty load").isTrue();
        store.add(a);
        assertThat(store.isPristine()).as("pristine holding an element").isFalse();
        assertThatThrownBy(() -> store.loadAscending(List.of(b).iterator()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs an empty store");
        assertThat(hex(store.poll())).isEqualTo(hex(a));
    }

    // ---------------------------------------------------------------- shape of the runs

    @Test
    void shouldKeepRunCountLogarithmicAndDrainInOrder() throws IOException {
        long seed = TestSeeds.base();
        String replay = "seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        SplittableRandom random = new SplittableRandom(seed);
        int n = 100_000;
        long memtable = 4096;
        store = open(dir, memtable);
        byte[][] expected = new byte[n][];
        int perMemtable = (int) (memtable / (12 + SortedQueueStore.ELEMENT_OVERHEAD));
        int maxRuns = 0;
        for (int i = 0; i < n; i++) {
            byte[] e = new byte[12];
            ByteBuffer.wrap(e).putLong(random.nextLong()).putInt(i); // distinct
            expected[i] = e;
            assertThat(store.add(e)).as(replay + ": add " + i).isTrue();
            long flushes = i / perMemtable;
            int tiers = 1;
            for (long f = flushes; f >= SortedQueueStore.RUNS_PER_TIER; f /= 4) {
                tiers++;
            }
            int bound = (SortedQueueStore.RUNS_PER_TIER - 1) * tiers;
            assertThat(store.runCount())
                    .as(replay + ": runs after " + (i + 1) + " adds (" + flushes + " flushes)")
                    .isLessThanOrEqualTo(bound);
            maxRuns = Math.max(maxRuns, store.runCount());
        }
        assertThat(maxRuns).as("runs were written and merged").isGreaterThanOrEqualTo(10);
        assertThat(runFiles(dir)).as("run files on disk").isEqualTo(store.runCount());
        assertThat(store.size()).isEqualTo(n);
        Arrays.sort(expected, ORDER);
        for (int i = 0; i < n; i++) {
            byte[] polled = store.poll();
            if (!Arrays.equals(polled, expected[i])) {
                assertThat(hex(polled)).as(replay + ": poll " + i).isEqualTo(hex(expected[i]));
            }
        }
        assertThat(store.poll()).isNull();
        assertThat(store.isEmpty()).isTrue();
        assertThat(store.runCount()).isZero();
        assertThat(runFiles(dir)).as("run files after drain").isZero();
    }

    @Test
    void shouldPollEveryPresentCopyOnceAfterRemoveAndReAdd() throws IOException {
        store = open(dir, 1024);
        byte[][] elements = new byte[200][];
        for (int i = 0; i < elements.length; i++) {
            elements[i] = new byte[] {(byte) (i >> 8), (byte) i};
        }
        // Three rounds of add, remove-half, re-add: copies of one element in many runs.
        for (int round = 0; round < 3; round++) {
            for (byte[] e : elements) {
                store.add(e);
            }
            for (int i = 0; i < elements.length; i += 2) {
                assertThat(store.remove(elements[i])).isTrue();
            }
        }
        for (int i = 0; i < elements.length; i += 4) {
            assertThat(store.add(elements[i])).isTrue();
        }
        assertThat(store.runCount()).as("copies spread over runs").isGreaterThan(1);
        List<String> polled = new ArrayList<>();
        for (byte[] e = store.poll(); e != null; e = store.poll()) {
            polled.add(hex(e));
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < elements.length; i++) {
            if (i % 2 == 1 || i % 4 == 0) {
                expected.add(hex(elements[i]));
            }
        }
        assertThat(polled).isEqualTo(expected);
    }

    /**
     * A window operator adds the same timer for every element of its window. An element added
     * lately and still present is known present even after its ADD went to a run: a repeated add
     * says so (false), writes nothing and keeps the size known. After a remove, a poll or a clear
     * it is not known any more: the next add is a real one.
     */
    @Test
    void shouldAnswerARepeatedAddOfARecentElementWithoutWritingIt() throws IOException {
        store = open(dir, 1024);
        // Elements of distinct slots: two in one slot would push each other out of the filter.
        byte[][] elements = new byte[300][];
        Set<Integer> slots = new HashSet<>();
        for (int i = 0, n = 0; n < elements.length; i++) {
            byte[] e = {(byte) (i >> 8), (byte) i, 7};
            if (slots.add(SortedQueueStore.recentSlot(e))) {
                elements[n++] = e;
            }
        }
        for (byte[] e : elements) {
            assertThat(store.add(e)).isTrue();
        }
        int runs = store.runCount();
        assertThat(runs).as("the first adds are in runs").isGreaterThan(0);
        for (int round = 0; round < 5; round++) {
            for (byte[] e : elements) {
                // A copy, as a timer queue encodes each add anew.
                assertThat(store.add(e.clone())).as("repeated add").isFalse();
            }
        }
        assertThat(store.runCount()).as("no records written for repeats").isEqualTo(runs);
        assertThat(store.size()).isEqualTo(elements.length);

        assertThat(store.remove(elements[5].clone())).isTrue();
        assertThat(store.add(elements[5].clone())).as("re-add after remove").isTrue();
        assertThat(store.poll()).isEqualTo(elements[0]);
        assertThat(store.add(elements[0].clone())).as("re-add after poll").isTrue();
        assertThat(store.size()).isEqualTo(elements.length);

        List<String> polled = new ArrayList<>();
        for (byte[] e = store.poll(); e != null; e = store.poll()) {
            polled.add(hex(e));
        }
        assertThat(polled).hasSize(elements.length).doesNotHaveDuplicates();
        assertThat(polled.get(0)).isEqualTo(hex(elements[0]));
        assertThat(store.add(elements[9])).as("re-add after draining").isTrue();
        store.clear();
        assertThat(store.add(elements[9])).as("re-add after clear").isTrue();
        assertThat(store.size()).isEqualTo(1);
    }

    /**
     * An element whose ADD went to a run is removed (its DEL in the memtable or a newer run), added
     * and removed again: absent. Added once more: present exactly once. With more and more filler
     * between the steps, the records of the element end up in the memtable, in one run, in
     * different runs and tiers, and in merged runs.
     */
    @Test
    void shouldKeepAnElementRemovedAndReAddedAcrossFlushesAndMergesOnce() throws IOException {
        long seed = TestSeeds.base();
        String replay = "seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        System.out.println("SortedQueueStoreTest re-add " + replay);
        SplittableRandom random = new SplittableRandom(seed);
        store = open(dir, 1024);
        TreeSet<byte[]> model = new TreeSet<>(ORDER);
        int maxRuns = 0;
        int round = 0;
        for (int gap : new int[] {0, 1, 15, 40, 200}) {
            // 0x00..: below every filler, so the element is the head whenever present.
            for (int prefix : new int[] {0x00, 0x80}) {
                byte[] x = {(byte) prefix, (byte) round++};
                String at = replay + ", gap " + gap + ", element " + hex(x);
                store.add(x);
                model.add(x);
                maxRuns = Math.max(maxRuns, fill(model, random, gap));
                if (random.nextBoolean()) {
                    store.peek(); // with the head known, and not
                }
                assertThat(store.remove(x)).as(at + ": first remove").isTrue();
                model.remove(x);
                maxRuns = Math.max(maxRuns, fill(model, random, gap));
                store.add(x);
                model.add(x);
                maxRuns = Math.max(maxRuns, fill(model, random, gap));
                assertThat(store.remove(x)).as(at + ": second remove").isTrue();
                model.remove(x);
                maxRuns = Math.max(maxRuns, fill(model, random, gap));
                assertMatches(model, at + ": removed twice");
                assertThat(occurrences(x)).as(at + ": removed twice").isZero();

                assertThat(store.add(x)).as(at + ": add after the removes").isTrue();
                model.add(x);
                maxRuns = Math.max(maxRuns, fill(model, random, gap));
                assertMatches(model, at + ": added again");
                assertThat(occurrences(x)).as(at + ": added again").isOne();
            }
        }
        assertThat(maxRuns).as("runs of more than one tier").isGreaterThan(RUNS_PER_TIER);
        while (!model.isEmpty()) {
            assertThat(hex(store.poll())).as(replay + ": drain").isEqualTo(hex(model.pollFirst()));
        }
        assertThat(store.poll()).isNull();
        assertThat(store.runCount()).isZero();
    }

    /** Adds {@code count} random 3-byte elements at or above 0x01; returns the runs then. */
    private int fill(TreeSet<byte[]> model, SplittableRandom random, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            byte[] e = {(byte) (1 + random.nextInt(254)), (byte) random.nextInt(), (byte) i};
            store.add(e);
            model.add(e);
        }
        return store.runCount();
    }

    private int occurrences(byte[] element) throws IOException {
        int[] n = new int[1];
        store.forEach(
                e -> {
                    if (Arrays.equals(e, element)) {
                        n[0]++;
                    }
                });
        return n[0];
    }

    /**
     * 200k timers through a 4 KiB memtable, half of them removed, then drained: every file the
     * store reads is one of its runs, and each is read front to back (no read goes back); there is
     * no index (no membership store, no other file) and the budget pays the staging buffer only.
     */
    @Test
    void shouldDrainInOrderWithoutRandomReadsOrAnIndex() throws IOException {
        long seed = TestSeeds.base();
        String replay = "seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        System.out.println("SortedQueueStoreTest sequential reads " + replay);
        SplittableRandom random = new SplittableRandom(seed);
        ReadTrackingFileIo tracking = new ReadTrackingFileIo();
        Path directory = dir.resolve("queue");
        store = SortedQueueStore.open(directory, budget, 4096, tracking);
        long memoryBound = STAGING_BYTES + 1024;
        int n = 200_000;
        byte[][] all = new byte[n][];
        for (int i = 0; i < n; i++) {
            byte[] e = new byte[12];
            ByteBuffer.wrap(e).putLong(random.nextLong()).putInt(i); // distinct
            all[i] = e;
            store.add(e);
            if (i % 10_000 == 0) {
                assertThat(budget.used())
                        .as(replay + ": budget at add " + i)
                        .isLessThanOrEqualTo(memoryBound);
            }
        }
        List<byte[]> kept = new ArrayList<>(n / 2);
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0) {
                assertThat(store.remove(all[i])).as(replay + ": remove " + i).isTrue();
            } else {
                kept.add(all[i]);
            }
        }
        assertThat(store.runCount()).as("runs").isGreaterThan(2 * (RUNS_PER_TIER - 1));
        assertThat(store.memoryUsed()).isLessThanOrEqualTo(memoryBound);
        assertThat(budget.used()).isLessThanOrEqualTo(memoryBound);
        assertThat(tracking.reads).as("reads before the drain (merges)").isPositive();

        kept.sort(ORDER);
        for (int i = 0; i < kept.size(); i++) {
            byte[] polled = store.poll();
            if (!Arrays.equals(polled, kept.get(i))) {
                assertThat(hex(polled)).as(replay + ": poll " + i).isEqualTo(hex(kept.get(i)));
            }
        }
        assertThat(store.poll()).as(replay + ": drained").isNull();
        assertThat(store.runCount()).isZero();
        assertThat(budget.used()).isLessThanOrEqualTo(memoryBound);
        assertThat(tracking.foreign).as("files read that are no runs").isEmpty();
        assertThat(tracking.backward).as("reads that went back in a file").isEmpty();
        assertThat(Files.exists(directory.resolve("members"))).as("membership store").isFalse();
        try (Stream<Path> files = Files.list(directory)) {
            assertThat(files.count()).as("files left after the drain").isZero();
        }
        store.close();
        store = null;
        assertThat(tracking.open).as("read channels left open").isZero();
    }

    /**
     * Every element of run A was removed: the DELs are in a newer run B (and the memtable), or all
     * in the memtable. Reading A fails while the heads skip them. The deciding DEL is consumed
     * last, so however far the skipping got, no removed element comes back once reads work again.
     */
    @Test
    void shouldNotResurrectARemovedElementWhenAReadFailsWhileSkippingIt() throws IOException {
        // 3 KiB elements: run A is ~60 KiB, read 16 KiB at a time, so skipping reads A midway.
        // 21 DELs fill a 64 KiB memtable (with the element added last): they flush B; 20 do not.
        for (int n : new int[] {21, 20}) {
            String at = n == 21 ? "DELs in run B" : "DELs in the memtable";
            ReadTrackingFileIo reading = new ReadTrackingFileIo();
            Path directory = dir.resolve("queue-" + n);
            store = SortedQueueStore.open(directory, budget, 64 << 10, reading);
            byte[][] removed = new byte[n][];
            for (int i = 0; i < n; i++) {
                removed[i] = new byte[3000];
                removed[i][0] = (byte) i;
                store.add(removed[i]);
            }
            List<byte[]> kept = new ArrayList<>();
            while (store.runCount() == 0) { // until the memtable is flushed as run A
                byte[] e = new byte[3000];
                e[0] = (byte) (0xFF - kept.size());
                store.add(e);
                kept.add(0, e);
            }
            for (byte[] e : removed) {
                store.remove(e);
            }
            assertThat(store.runCount()).as(at + ": runs").isEqualTo(n == 21 ? 2 : 1);
            Path runA = directory.resolve(SortedQueueStore.RUN_PREFIX + "00000000.log");
            assertThat(runA).exists();
            reading.failReads = runA::equals;
            int failures = 0;
            for (int attempt = 0; attempt < 3; attempt++) {
                try {
                    store.poll();
                    break;
                } catch (IOException expected) {
                    assertThat(expected).as(at).hasMessageContaining("injected");
                    failures++;
                }
            }
            assertThat(failures).as(at + ": reads of run A failed").isEqualTo(3);
            reading.failReads = file -> false;
            for (byte[] e : kept) {
                assertThat(hex(store.poll())).as(at + ": poll").isEqualTo(hex(e));
            }
            assertThat(store.poll()).as(at + ": poll").isNull();
            store.close();
            store = null;
            assertThat(reading.open).as(at + ": read channels left open").isZero();
        }
    }

    /**
     * Opens real files and watches the reads: every positioned read of a channel must start at or
     * after the end of its previous one. Reads of the files {@link #failReads} names fail.
     */
    private static final class ReadTrackingFileIo implements FileIo {
        final List<String> foreign = new ArrayList<>();
        final List<String> backward = new ArrayList<>();
        long reads;
        int open;
        Predicate<Path> failReads = file -> false;

        @Override
        public FileChannel openForRead(Path file) throws IOException {
            if (!isRunFile(file)) {
                foreign.add(file.toString());
            }
            FileChannel channel = FileIo.DEFAULT.openForRead(file);
            open++;
            return new ReadOnlyChannel(channel, file);
        }

        private final class ReadOnlyChannel extends FileChannel {
            private final FileChannel delegate;
            private final Path file;
            private long end;

            ReadOnlyChannel(FileChannel delegate, Path file) {
                this.delegate = delegate;
                this.file = file;
            }

            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                if (position < end && backward.size() < 10) {
                    backward.add(file.getFileName() + ": read at " + position + " after " + end);
                }
                if (failReads.test(file)) {
                    throw new IOException("injected: read of " + file + " at " + position);
                }
                reads++;
                int n = delegate.read(dst, position);
                end = position + Math.max(n, 0);
                return n;
            }

            @Override
            public long size() throws IOException {
                return delegate.size();
            }

            @Override
            protected void implCloseChannel() throws IOException {
                open--;
                delegate.close();
            }

            @Override
            public int read(ByteBuffer dst) {
                throw new UnsupportedOperationException("unpositioned read");
            }

            @Override
            public long read(ByteBuffer[] dsts, int offset, int length) {
                throw new UnsupportedOperationException("unpositioned read");
            }

            @Override
            public int write(ByteBuffer src) {
                throw new NonWritableChannelException();
            }

            @Override
            public long write(ByteBuffer[] srcs, int offset, int length) {
                throw new NonWritableChannelException();
            }

            @Override
            public int write(ByteBuffer src, long position) {
                throw new NonWritableChannelException();
            }

            @Override
            public long position() {
                throw new UnsupportedOperationException("position");
            }

            @Override
            public FileChannel position(long newPosition) {
                throw new UnsupportedOperationException("position");
            }

            @Override
            public FileChannel truncate(long size) {
                throw new NonWritableChannelException();
            }

            @Override
            public void force(boolean metaData) {
                throw new NonWritableChannelException();
            }

            @Override
            public long transferTo(long position, long count, WritableByteChannel target) {
                throw new UnsupportedOperationException("transferTo");
            }

            @Override
            public long transferFrom(ReadableByteChannel src, long position, long count) {
                throw new NonWritableChannelException();
            }

            @Override
            public MappedByteBuffer map(MapMode mode, long position, long size) {
                throw new UnsupportedOperationException("map");
            }

            @Override
            public FileLock lock(long position, long size, boolean shared) {
                throw new UnsupportedOperationException("lock");
            }

            @Override
            public FileLock tryLock(long position, long size, boolean shared) {
                throw new UnsupportedOperationException("lock");
            }
        }
    }

    // ---------------------------------------------------------------- failures

    @Test
    void shouldNameTheFileOfACorruptRun() throws IOException {
        store = open(dir, 64 << 10);
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 20_000; i++) {
            byte[] e = new byte[16];
            ByteBuffer.wrap(e).putLong(random.nextLong()).putLong(i);
            store.add(e);
        }
        Path largest;
        try (Stream<Path> files = Files.list(dir)) {
            largest =
                    files.filter(SortedQueueStoreTest::isRunFile)
                            .max(Comparator.comparingLong(SortedQueueStoreTest::sizeOf))
                            .orElseThrow();
        }
        long size = Files.size(largest);
        assertThat(size)
                .as("larger than a read buffer")
                .isGreaterThan(4L * RunCursor.MAX_READ_BUFFER);
        flipByte(largest, size / 2);

        String name = largest.getFileName().toString();
        assertThatThrownBy(
                        () -> {
                            byte[] previous = null;
                            for (byte[] e = store.poll(); e != null; e = store.poll()) {
                                if (previous != null) {
                                    assertThat(ORDER.compare(previous, e)).isNegative();
                                }
                                previous = e;
                            }
                        })
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(name);
        // The run does not skip its bad block: the next reader meets the same error.
        assertThatThrownBy(store::poll)
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(name);
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (FileChannel channel =
                FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            channel.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x5A)).rewind();
            channel.write(b, offset);
        }
    }

    @Test
    void shouldRejectBadSettingsAndForeignRunFiles() throws IOException {
        assertThatThrownBy(() -> open(dir, 1023))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("memtableBytes")
                .hasMessageContaining("1023");
        Files.createDirectories(dir.resolve("taken"));
        Files.write(dir.resolve("taken").resolve("run-00000003.log"), new byte[] {1});
        assertThatThrownBy(() -> open(dir.resolve("taken"), 4096))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("run-00000003.log");
        assertThat(budget.used()).isZero();
    }

    // ---------------------------------------------------------------- files and memory

    @Test
    void shouldDeleteFilesOnClearAndCloseAndReturnMemory() throws IOException {
        Path directory = dir.resolve("queue");
        store = open(directory, 1024);
        for (int i = 0; i < 5_000; i++) {
            store.add(ByteBuffer.allocate(8).putLong(Long.reverse(i)).array());
        }
        assertThat(runFiles(directory)).isPositive().isEqualTo(store.runCount());
        assertThat(files(directory)).as("nothing but runs").isEqualTo(store.runCount());
        assertThat(store.memoryUsed()).isEqualTo(STAGING_BYTES).isEqualTo(budget.used());

        store.clear();
        assertThat(store.size()).isZero();
        assertThat(store.peek()).isNull();
        assertThat(store.runCount()).isZero();
        assertThat(files(directory)).isZero();
        assertThat(store.memoryUsed()).isEqualTo(budget.used());

        // Still usable, and nothing of before comes back.
        assertThat(store.add(new byte[] {2})).isTrue();
        assertThat(store.add(new byte[] {1})).isTrue();
        assertThat(store.poll()).isEqualTo(new byte[] {1});
        assertThat(store.poll()).isEqualTo(new byte[] {2});
        assertThat(store.poll()).isNull();
        for (int i = 0; i < 2_000; i++) {
            store.add(ByteBuffer.allocate(8).putLong(i).array());
        }
        assertThat(store.runCount()).isPositive();

        store.close();
        assertThat(store.memoryUsed()).isZero();
        assertThat(budget.used()).isZero();
        assertThat(files(directory)).as("files left after close").isZero();
        assertThatThrownBy(() -> store.add(new byte[] {3}))
                .isInstanceOf(IllegalStateException.class);
        store = null;
    }

    private static boolean isRunFile(Path p) {
        String name = p.getFileName().toString();
        return name.startsWith(SortedQueueStore.RUN_PREFIX) && name.endsWith(".log");
    }

    private static long sizeOf(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long runFiles(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(SortedQueueStoreTest::isRunFile).count();
        }
    }

    /** Regular files under {@code directory}, at any depth; 0 if it does not exist. */
    private static long files(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(directory)) {
            return files.filter(Files::isRegularFile).count();
        }
    }
}
