package io.flowkv.bench;

import io.flowkv.core.SealedStore;
import io.flowkv.core.aur.AurStore;
import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.memory.MemoryBudget;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Time to restore one AUR store from its manifest: decode the stat table, check and chain the index
 * logs. The store is shaped like one of q7-session's two instances at 4x state and 128 MiB of
 * managed memory (the restore benchmark of docs/benchmarks): {@code windows} session windows of an
 * 8-byte key and a 16-byte window, {@code dataMb} of 100-byte values appended window after window
 * (so the index holds about one entry per window and flush, as after a compaction), and a stat page
 * cache of {@code statCacheMb} (the backend gives each of n instances a quarter of the budget over
 * n: 16 MiB here). Run with e.g. {@code java -jar flowkv-bench/target/flowkv-benchmarks.jar
 * AurRestoreBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class AurRestoreBenchmark {
    private static final int VALUE_BYTES = 100;

    @Param({"58500"})
    public int windows;

    @Param({"290"})
    public int dataMb;

    @Param({"16", "24"})
    public int statCacheMb;

    private Path root;
    private MemoryBudget budget;
    private AurStoreOptions options;
    private SealedStore sealed;

    @Setup(Level.Trial)
    public void write() throws IOException {
        root = Files.createTempDirectory("flowkv-aur-restore-");
        budget = new MemoryBudget(128L << 20);
        options = AurStoreOptions.builder(root).statCacheBytes((long) statCacheMb << 20).build();
        long values = ((long) dataMb << 20) / VALUE_BYTES;
        byte[] value = new byte[VALUE_BYTES];
        AurStore store = AurStore.open(options, budget);
        try {
            for (long n = 0; n < values; n++) {
                int w = (int) (n * windows / values);
                byte[] key = ByteBuffer.allocate(8).putLong(w).array();
                byte[] window = ByteBuffer.allocate(16).putLong(w).putLong(w + 1_000_000L).array();
                store.append(key, window, value, n);
            }
            sealed = store.seal(false);
        } finally {
            store.close();
        }
    }

    @Benchmark
    public int restore() throws IOException {
        AurStore store = AurStore.restore(options, budget, sealed.manifest());
        try {
            return store.liveWindows();
        } finally {
            store.close();
        }
    }

    @TearDown(Level.Trial)
    public void delete() throws IOException {
        Directories.deleteRecursively(root);
    }
}
