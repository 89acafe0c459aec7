package io.flowkv.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs one pattern's trace against every backend, interleaved (A B C A B C ...) so that machine
 * noise (other processes, thermal state, page cache) spreads over all of them, and prints the
 * median and range of ops/s per backend. Each run gets a fresh directory and the same memory
 * budget. The last line is machine-readable:
 *
 * <pre>
 * pattern=aur flowkv_ops_per_s=.. rocksdb_ops_per_s=.. heap_ops_per_s=.. ratio_vs_rocksdb=..
 *     hit_ratio=.. read_amplification=..
 * </pre>
 *
 * <p>{@code --sweep} (aur) instead runs FlowKV alone over read batch ratios and max space
 * amplifications. Usage: {@code StoreBench --pattern aar|rmw|aur [--size tiny|quick|full] [--reps
 * n] [--warmup n] [--budget-mb m] [--backends flowkv,rocksdb,heap] [--dir d] [--seed s] [--sweep]}
 */
public final class StoreBench {
    static final double[] SWEEP_READ_BATCH_RATIOS = {0, 0.005, 0.01, 0.02, 0.05, 0.1};
    static final double[] SWEEP_MSA = {1.1, 1.25, 1.5, 2, 3};

    private final PrintStream out;
    private final Pattern pattern;
    private final String size;
    private final int reps;
    private final int warmup;
    private final long budget;
    private final List<Backend> backends;
    private final Path dir;
    private final long seed;
    private int runCounter;

    private StoreBench(Map<String, String> args, PrintStream out) {
        this.out = out;
        this.pattern = Pattern.parse(required(args, "pattern"));
        this.size = args.getOrDefault("size", "full");
        boolean quick = !size.equals("full");
        this.reps = Integer.parseInt(args.getOrDefault("reps", quick ? "3" : "5"));
        this.warmup = Integer.parseInt(args.getOrDefault("warmup", "1"));
        // Below 32 MB, Flink's RocksDB write buffer manager is smaller than 8/7 of one 8 MB arena
        // block of a 64 MB memtable and Flink warns of constant flushing; measured here, 16 MB
        // runs no slower than 32 MB, so quick keeps the smaller budget its smaller traces need.
        this.budget =
                Long.parseLong(args.getOrDefault("budget-mb", quick ? "16" : "64")) * 1024 * 1024;
        this.backends = new ArrayList<>();
        for (String b : args.getOrDefault("backends", "flowkv,rocksdb,heap").split(",")) {
            backends.add(Backend.parse(b.trim()));
        }
        this.dir = Path.of(args.getOrDefault("dir", "flowkv-bench/target/bench-data"));
        this.seed =
                Long.parseLong(args.getOrDefault("seed", Long.toString(TraceSpec.DEFAULT_SEED)));
    }

    public static void main(String[] argv) throws IOException {
        Map<String, String> args = parse(argv);
        StoreBench bench = new StoreBench(args, System.out);
        if (args.containsKey("sweep")) {
            bench.sweep();
        } else {
            bench.compare();
        }
    }

    private Trace trace(TraceSpec spec, String runs) {
        long t0 = System.nanoTime();
        Trace trace = TraceGenerator.generate(spec);
        out.printf(
                Locale.ROOT,
                "trace %s%n  %,d store operations, %,d value bytes written, generated in %.1f s;"
                        + " memory budget per target %,d MB; %s%n",
                spec,
                trace.storeOperations(),
                trace.bytesWritten(),
                (System.nanoTime() - t0) / 1e9,
                budget >> 20,
                runs);
        return trace;
    }

    private void compare() throws IOException {
        Trace trace =
                trace(
                        TraceSpec.of(pattern, size, seed),
                        warmup + " warmup + " + reps + " measured runs each, interleaved");
        List<Backend> runnable = new ArrayList<>(backends);
        Map<Backend, List<TraceRunner.Result>> results = new EnumMap<>(Backend.class);
        TraceRunner runner = new TraceRunner();
        for (int rep = 0; rep < warmup + reps; rep++) {
            for (Backend b : List.copyOf(runnable)) {
                TraceRunner.Result r;
                try {
                    r = runOnce(runner, trace, b, config(Double.NaN, Double.NaN));
                } catch (IOException | RuntimeException e) {
                    // One store failing (e.g. refusing the budget) must not hide the others.
                    out.println("  " + b.id() + " FAILED, dropped from the comparison: " + e);
                    runnable.remove(b);
                    results.remove(b);
                    continue;
                }
                boolean measured = rep >= warmup;
                out.printf(
                        Locale.ROOT,
                        "  %s %-7s %,12.0f ops/s  checksum %016x  peak disk %,d MB%n",
                        measured ? "run   " : "warmup",
                        b.id(),
                        r.opsPerSecond(),
                        r.checksum(),
                        r.peakDiskBytes() >> 20);
                if (measured) {
                    results.computeIfAbsent(b, k -> new ArrayList<>()).add(r);
                }
            }
        }
        long reference = 0;
        boolean agree = true;
        for (List<TraceRunner.Result> list : results.values()) {
            for (TraceRunner.Result r : list) {
                reference = reference == 0 ? r.checksum() : reference;
                agree &= r.checksum() == reference;
            }
        }
        out.println(
                agree
                        ? "checksums agree"
                        : "CHECKSUMS DIFFER: the targets did not read the same data");
        Map<Backend, Double> medians = new EnumMap<>(Backend.class);
        for (Map.Entry<Backend, List<TraceRunner.Result>> e : results.entrySet()) {
            double[] ops =
                    e.getValue().stream().mapToDouble(TraceRunner.Result::opsPerSecond).toArray();
            Arrays.sort(ops);
            double median = median(ops);
            medians.put(e.getKey(), median);
            out.printf(
                    Locale.ROOT,
                    "%-7s median %,12.0f ops/s  min %,12.0f  max %,12.0f  (%d runs)%n",
                    e.getKey().id(),
                    median,
                    ops[0],
                    ops[ops.length - 1],
                    ops.length);
        }
        double flowkv = medians.getOrDefault(Backend.FLOWKV, Double.NaN);
        double rocksdb = medians.getOrDefault(Backend.ROCKSDB, Double.NaN);
        double heap = medians.getOrDefault(Backend.HEAP, Double.NaN);
        StringBuilder line = new StringBuilder();
        line.append(
                String.format(
                        Locale.ROOT,
                        "pattern=%s flowkv_ops_per_s=%.0f rocksdb_ops_per_s=%.0f heap_ops_per_s=%.0f"
                                + " ratio_vs_rocksdb=%.2f",
                        pattern.id(),
                        flowkv,
                        rocksdb,
                        heap,
                        flowkv / rocksdb));
        if (pattern == Pattern.AUR) {
            List<TraceRunner.Result> fk = results.getOrDefault(Backend.FLOWKV, List.of());
            TraceRunner.Result last = fk.isEmpty() ? null : fk.get(fk.size() - 1);
            line.append(
                    String.format(
                            Locale.ROOT,
                            " hit_ratio=%.3f read_amplification=%.3f",
                            hitRatio(last),
                            readAmplification(last)));
        }
        out.println(line);
    }

    private void sweep() throws IOException {
        if (pattern != Pattern.AUR) {
            throw new IllegalArgumentException("--sweep is for --pattern aur, was " + pattern.id());
        }
        TraceSpec spec = TraceSpec.of(pattern, size, seed);
        if (!size.equals("full")) {
            // Without prediction (ratio 0) every get scans the index log: keep that point short.
            spec = spec.withEvents(250_000);
        }
        int n = size.equals("full") ? reps : 1;
        Trace trace = trace(spec, "FlowKV only, 1 warmup + " + n + " run(s) per setting");
        TraceRunner runner = new TraceRunner();
        runOnce(runner, trace, Backend.FLOWKV, config(Double.NaN, Double.NaN));
        for (double ratio : SWEEP_READ_BATCH_RATIOS) {
            sweepPoint(runner, trace, n, ratio, Double.NaN);
        }
        for (double msa : SWEEP_MSA) {
            sweepPoint(runner, trace, n, Double.NaN, msa);
        }
    }

    private void sweepPoint(TraceRunner runner, Trace trace, int n, double ratio, double msa)
            throws IOException {
        double[] ops = new double[n];
        TraceRunner.Result last = null;
        for (int i = 0; i < n; i++) {
            last = runOnce(runner, trace, Backend.FLOWKV, config(ratio, msa));
            ops[i] = last.opsPerSecond();
        }
        Arrays.sort(ops);
        out.printf(
                Locale.ROOT,
                "sweep read_batch_ratio=%s msa=%s ops_per_s=%.0f min=%.0f max=%.0f hit_ratio=%.3f"
                        + " read_amplification=%.3f peak_disk_bytes=%d%n",
                Double.isNaN(ratio) ? "default" : Double.toString(ratio),
                Double.isNaN(msa) ? "default" : Double.toString(msa),
                median(ops),
                ops[0],
                ops[ops.length - 1],
                hitRatio(last),
                readAmplification(last),
                last.peakDiskBytes());
    }

    private TargetConfig config(double readBatchRatio, double msa) {
        return new TargetConfig(dir, budget, readBatchRatio, msa);
    }

    private TraceRunner.Result runOnce(
            TraceRunner runner, Trace trace, Backend backend, TargetConfig config)
            throws IOException {
        Path runDir = dir.resolve(backend.id() + "-" + pattern.id() + "-" + runCounter++);
        Directories.deleteRecursively(runDir);
        System.gc();
        try (Target target = Target.open(backend, pattern, config.withDirectory(runDir))) {
            return runner.run(trace, target);
        } finally {
            Directories.deleteRecursively(runDir);
        }
    }

    static double hitRatio(TraceRunner.Result r) {
        return r == null ? Double.NaN : r.hitRatio();
    }

    static double readAmplification(TraceRunner.Result r) {
        return r == null ? Double.NaN : r.readAmplification();
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String required(Map<String, String> args, String name) {
        String v = args.get(name);
        if (v == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return v;
    }

    static Map<String, String> parse(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String name = a.substring(2);
            if (name.equals("quick")) {
                args.put("size", "quick");
            } else if (name.equals("sweep")) {
                args.put("sweep", "true");
            } else if (i + 1 < argv.length) {
                args.put(name, argv[++i]);
            } else {
                throw new IllegalArgumentException(a + " needs a value");
            }
        }
        return args;
    }
}
