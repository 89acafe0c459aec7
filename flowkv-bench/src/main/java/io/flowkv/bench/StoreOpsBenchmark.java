package io.flowkv.bench;

import org.openjdk.jmh.annotations.AuxCounters;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Throughput in fixed batches of trace records against one long-lived store: each invocation
 * replays the next {@link #BATCH} records, wrapping around at the end of the trace (which leaves
 * the store logically empty, so the replay stays valid while dead data and files accumulate as in a
 * long-running job). The {@code ops} counter is store operations per second, the figure the {@link
 * StoreBench} driver reports. Run with e.g. {@code java -jar
 * flowkv-bench/target/flowkv-benchmarks.jar StoreOpsBenchmark -p pattern=rmw}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 10)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class StoreOpsBenchmark {
    static final int BATCH = 4096;

    @Param({"aar", "rmw", "aur"})
    public String pattern;

    @Param({"flowkv", "rocksdb", "heap"})
    public String backend;

    @Param({"quick"})
    public String size;

    @Param({"16"})
    public int budgetMb;

    private Trace trace;
    private Path root;
    private Target target;
    private final TraceRunner runner = new TraceRunner();
    private int position;

    /** Store operations, reported by JMH as a rate. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Ops {
        public long ops;

        @Setup(Level.Iteration)
        public void clear() {
            ops = 0;
        }
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        Pattern p = Pattern.parse(pattern);
        Backend b = Backend.parse(backend);
        trace = TraceGenerator.generate(TraceSpec.of(p, size, TraceSpec.DEFAULT_SEED));
        root = Files.createTempDirectory("flowkv-jmh-");
        target =
                Target.open(
                        b,
                        p,
                        new TargetConfig(root, budgetMb * 1024L * 1024L, Double.NaN, Double.NaN));
        runner.reset(trace);
    }

    @Benchmark
    public long batch(Ops ops) throws IOException {
        int to = Math.min(trace.size(), position + BATCH);
        ops.ops += runner.replay(trace, target.store(), position, to);
        position = to == trace.size() ? 0 : to;
        return position;
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        target.close();
        Directories.deleteRecursively(root);
    }
}
