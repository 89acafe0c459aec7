package io.flowkv.bench;

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
 * One whole trace per invocation (single shot: a trace fills and drains its stores, so it cannot be
 * cut into repeatable slices). The score is seconds per trace. docs/benchmarks/microbench.md
 * reports {@code java -jar flowkv-bench/target/flowkv-benchmarks.jar StoreTraceBenchmark -p
 * size=full -p budgetMb=64}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1)
@Measurement(iterations = 3)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class StoreTraceBenchmark {

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
    private int invocation;

    @Setup(Level.Trial)
    public void generate() throws IOException {
        trace =
                TraceGenerator.generate(
                        TraceSpec.of(Pattern.parse(pattern), size, TraceSpec.DEFAULT_SEED));
        root = Files.createTempDirectory("flowkv-jmh-");
    }

    @Setup(Level.Invocation)
    public void open() throws IOException {
        TargetConfig config =
                new TargetConfig(
                        root.resolve("run-" + invocation++),
                        budgetMb * 1024L * 1024L,
                        Double.NaN,
                        Double.NaN);
        target = Target.open(Backend.parse(backend), trace.pattern(), config);
    }

    @Benchmark
    public long replay() throws IOException {
        return runner.run(trace, target).checksum();
    }

    @TearDown(Level.Invocation)
    public void close() throws IOException {
        target.close();
        Directories.deleteRecursively(root.resolve("run-" + (invocation - 1)));
    }

    @TearDown(Level.Trial)
    public void cleanup() throws IOException {
        Directories.deleteRecursively(root);
    }
}
