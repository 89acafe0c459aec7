package io.flowkv.core.queue;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.TestSeeds;
import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SortedQueueStore} against a {@link TreeSet} model, with memtables so small that flushes
 * and merges happen every few operations. Replay a failure with {@code -Dflowkv.seed=N}.
 */
class SortedQueueStoreTest {
    private static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;
    private static final HexFormat HEX = HexFormat.of();

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

    private SortedQueueStore open(Path directory, long memtableBytes, long writeBufferBytes)
            throws IOException {
        return SortedQueueStore.open(directory, budget, memtableBytes, 0, writeBufferBytes, io);
    }

    // ---------------------------------------------------------------- model-based

    @Test
    void shouldMatchTreeSetModelUnderRandomOperations() throws IOException {
        for (long seed : seeds(4)) {
            runModel(seed, 20_000, false);
        }
    }

    /**
     * Writes of run files fail now and then: the add that flushes (or merges) fails and must leave
     * the store as it was, the element not added.
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
        long writeBuffer = 1024 + random.nextInt(64 << 10);
        store = open(dir.resolve("model-" + seed), memtable, writeBuffer);
        TreeSet<byte[]> model = new TreeSet<>(ORDER);
        List<byte[]> gone = new ArrayList<>(); // polled or removed: candidates for a re-add
        int maxRuns = 0;
        int failedAdds = 0;
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
                    failedAdds++;
                    continue;
                }
                assertThat(added).as(at + ": add " + hex(e)).isEqualTo(model.add(e));
            } else if (dice < (growing ? 60 : 35)) {
                byte[] e =
                        random.nextBoolean() && !model.isEmpty()
                                ? pickPresent(model, random)
                                : element(random, timestamps);
                boolean removed = store.remove(e);
                assertThat(removed).as(at + ": remove " + hex(e)).isEqualTo(model.remove(e));
                if (removed) {
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
            assertThat(failedAdds).as(replay + ": faults were injected").isPositive();
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

    private List<String> visitAll() throws IOException {
        List<String> visited = new ArrayList<>();
        store.forEach(e -> visited.add(hex(e)));
        visited.sort(null); // any order from the store: compare as sorted lists
        return visited;
    }

    private static List<String> hexes(TreeSet<byte[]> model) {
        List<String> all = new ArrayList<>(model.size());
        for (byte[] e : model) {
            all.add(hex(e));
        }
        all.sort(null);
        return all;
    }

    private static byte[] first(TreeSet<byte[]> model) {
        return model.isEmpty() ? null : model.first();
    }

    private static String hex(byte[] e) {
        return e == null ? "null" : HEX.formatHex(e);
    }

    // ---------------------------------------------------------------- shape of the runs

    @Test
    void shouldKeepRunCountLogarithmicAndDrainInOrder() throws IOException {
        long seed = TestSeeds.base();
        String replay = "seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        SplittableRandom random = new SplittableRandom(seed);
        int n = 100_000;
        long memtable = 4096;
        store = open(dir, memtable, 1 << 20);
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
        store = open(dir, 1024, 4096);
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

    // ---------------------------------------------------------------- failures

    @Test
    void shouldNameTheFileOfACorruptRun() throws IOException {
        store = open(dir, 64 << 10, 1 << 20);
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
        assertThatThrownBy(() -> open(dir, 1023, 4096))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("memtableBytes")
                .hasMessageContaining("1023");
        Files.createDirectories(dir.resolve("taken"));
        Files.write(dir.resolve("taken").resolve("run-00000003.log"), new byte[] {1});
        assertThatThrownBy(() -> open(dir.resolve("taken"), 4096, 4096))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("run-00000003.log");
        assertThat(budget.used()).isZero();
    }

    // ---------------------------------------------------------------- files and memory

    @Test
    void shouldDeleteFilesOnClearAndCloseAndReturnMemory() throws IOException {
        Path directory = dir.resolve("queue");
        store = open(directory, 1024, 4096);
        for (int i = 0; i < 5_000; i++) {
            store.add(ByteBuffer.allocate(8).putLong(Long.reverse(i)).array());
        }
        assertThat(runFiles(directory)).isPositive().isEqualTo(store.runCount());
        assertThat(files(directory.resolve(SortedQueueStore.MEMBERS_DIRECTORY)))
                .as("membership spilled")
                .isPositive();
        assertThat(store.memoryUsed()).isPositive().isEqualTo(budget.used());

        store.clear();
        assertThat(store.size()).isZero();
        assertThat(store.peek()).isNull();
        assertThat(store.runCount()).isZero();
        assertThat(runFiles(directory)).isZero();
        assertThat(files(directory.resolve(SortedQueueStore.MEMBERS_DIRECTORY))).isZero();
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
