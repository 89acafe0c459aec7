package io.flowkv.bench.harness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The end-to-end harness behind scripts/bench.sh: plans the runs of each mode, runs each in its own
 * JVM ({@link ChildRun}), writes the results as CSV under {@code --out}/nexmark, regenerates {@code
 * --out}/README.md from them ({@link Report}), and prints the summary line last.
 */
public final class Bench {

    static final String CSV_DIR = "nexmark";

    private Bench() {}

    public static void main(String[] args) throws Exception {
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().isEmpty()) {
                System.err.println("bench: " + e.getMessage());
            }
            System.err.println(BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        System.exit(run(options));
    }

    static int run(BenchOptions o) throws Exception {
        PrintStream err = System.err;
        Path csvDir = o.out().resolve(CSV_DIR);
        if (o.reportOnly()) {
            List<Row> all = Report.readAll(csvDir);
            if (all.isEmpty()) {
                err.println("bench: no results in " + csvDir + " to report on");
                return 2;
            }
            return finish(o, all, err);
        }
        MemoryBudget budget = MemoryBudget.forProcessSize(o.memory(), o.managedMemory());
        err.println("bench: " + budget.describe());

        Map<String, List<RunSpec>> plans = new LinkedHashMap<>();
        for (String mode : o.modes()) {
            plans.put(mode, Plans.of(mode, o, budget));
        }
        Map<String, List<Row>> kept = new LinkedHashMap<>();
        if (o.resume()) {
            for (Map.Entry<String, List<RunSpec>> e : plans.entrySet()) {
                if (e.getKey().equals("latency")) {
                    continue; // paced rates follow from this invocation's calibration runs
                }
                Path csv = csvDir.resolve(Plans.csvName(e.getKey()));
                List<Row> done = Files.exists(csv) ? Csv.read(csv) : List.of();
                List<RunSpec> missing = Resume.missing(e.getValue(), done, budget.managedBytes());
                err.printf(
                        Locale.ROOT,
                        "bench: --resume: %d of %d %s runs already in %s, %d to run%n",
                        e.getValue().size() - missing.size(),
                        e.getValue().size(),
                        e.getKey(),
                        csv,
                        missing.size());
                kept.put(e.getKey(), done);
                e.setValue(missing);
            }
        }
        List<RunSpec> all = new ArrayList<>();
        plans.values().forEach(all::addAll);
        err.printf(
                Locale.ROOT,
                "bench: scale %s, %d runs, per query (events, windows, estimated peak window state):%n",
                o.scale(),
                all.size());
        printPlans(all, budget, err);

        String classpath = System.getProperty("flowkv.bench.child-classpath");
        if (classpath == null || classpath.isBlank()) {
            throw new IllegalStateException(
                    "system property flowkv.bench.child-classpath is not set (run scripts/bench.sh)");
        }
        ChildRun.Env env =
                new ChildRun.Env(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        classpath,
                        System.getProperty("flowkv.bench.base-classpath", ""),
                        budget,
                        o.runsDir(),
                        o.jfr(),
                        o.keepRuns(),
                        o.stallSeconds(),
                        o.timeoutSeconds(),
                        cgroupLimit(o, budget));
        if (env.cgroupLimitBytes() > 0) {
            // Fail now, naming what is missing, not at every run.
            MemoryCgroup.create(MemoryCgroup.SYSFS, "probe", env.cgroupLimitBytes()).close();
            err.println(
                    "bench: every run in a memory cgroup of "
                            + MemoryBudget.mb(env.cgroupLimitBytes())
                            + " (process + "
                            + MemoryBudget.mb(o.pageCacheBytes())
                            + " of page cache)");
        }
        ProgressBar bar = new ProgressBar(err, System.console() != null, all, o.latencySeconds());
        err.println("bench: ETA " + ProgressBar.duration(bar.etaSeconds(0)) + " (prior rates)");
        if (o.dryRun()) {
            return 0;
        }
        Files.createDirectories(csvDir);
        Machine.collect(o, budget).write(csvDir.resolve(Machine.FILE));

        int index = 0;
        Map<String, Double> maxRates = new LinkedHashMap<>(o.maxRates());
        for (Map.Entry<String, List<RunSpec>> e : plans.entrySet()) {
            Path csv = csvDir.resolve(Plans.csvName(e.getKey()));
            Path timeline = csvDir.resolve(Latency.TIMELINE_CSV);
            if (e.getKey().equals("latency")) {
                Files.writeString(timeline, Latency.timelineHeader());
            }
            List<Row> rows = new ArrayList<>(kept.getOrDefault(e.getKey(), List.of()));
            for (RunSpec planned : e.getValue()) {
                RunSpec spec = planned;
                if (spec.experiment().equals(Latency.EXPERIMENT)) {
                    Double max = maxRates.get(spec.query().id());
                    if (max == null) {
                        err.println(
                                "bench: "
                                        + spec.label()
                                        + ": skipped, no max rate for "
                                        + spec.query().id()
                                        + " (its RocksDB calibration run failed)");
                        index++;
                        continue;
                    }
                    spec = Latency.resolve(spec, max, o.latencySeconds());
                }
                bar.start(index, spec);
                ChildRun.Outcome outcome = ChildRun.run(spec, env, bar::events);
                Row row = outcome.row();
                bar.finish(
                        spec,
                        row.getDouble(Column.WALL_S),
                        row.ok() ? row.getDouble(Column.SECONDS) : Double.NaN);
                if (spec.experiment().equals(Latency.CALIBRATION) && row.ok()) {
                    maxRates.put(spec.query().id(), row.getDouble(Column.EVENTS_PER_S));
                }
                if (spec.paced()) {
                    Path stderrLog = outcome.runDir().resolve("stderr.log");
                    Latency.Analysis a =
                            Latency.analyze(
                                    outcome.runDir(),
                                    spec.plan().events(),
                                    spec.targetRate(),
                                    outcome.progress(),
                                    Files.exists(stderrLog) ? Files.readString(stderrLog) : "");
                    if (a != null) {
                        Latency.fill(row, a);
                        Files.writeString(
                                timeline,
                                Latency.timelineLines(spec, a),
                                java.nio.file.StandardOpenOption.APPEND);
                    }
                }
                rows.add(row);
                Csv.write(csv, rows);
                err.println("bench: " + spec.label() + ": " + outcome(row));
                index++;
            }
        }
        return finish(o, Report.readAll(csvDir), err);
    }

    /**
     * The memory cgroup limit of a run with {@code --page-cache}: the TaskManager process, the
     * MiniCluster JobManager's heap in the same JVM, and the page cache allowed; 0 without it.
     */
    static long cgroupLimit(BenchOptions o, MemoryBudget budget) {
        return o.pageCacheBytes() == 0
                ? 0
                : budget.processBytes()
                        + MemoryBudget.JOB_MANAGER_HEAP_ALLOWANCE
                        + o.pageCacheBytes();
    }

    private static int finish(BenchOptions o, List<Row> rows, PrintStream err) throws IOException {
        List<Summary.Mismatch> mismatches = Summary.checksumMismatches(rows);
        for (Summary.Mismatch m : mismatches) {
            err.println();
            err.println("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
            err.println("!!! " + m.describe());
            err.println("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        }
        Report.write(o.out(), rows, mismatches);
        err.println("bench: wrote " + o.out().resolve("README.md"));
        System.out.println(Summary.finalLine(rows, mismatches.isEmpty()));
        return mismatches.isEmpty() ? 0 : 1;
    }

    static String outcome(Row row) {
        if (row.ok() && row.has(Column.P99_MS)) {
            return String.format(
                    Locale.ROOT,
                    "target %s events/s, achieved %.0f, p50 %.0f ms, p99 %.0f ms, p99.9 %.0f ms,"
                            + " sustained %s",
                    row.get(Column.TARGET_RATE),
                    row.getDouble(Column.ACHIEVED_RATE),
                    row.getDouble(Column.P50_MS),
                    row.getDouble(Column.P99_MS),
                    row.getDouble(Column.P999_MS),
                    row.get(Column.SUSTAINED));
        }
        if (!row.ok()) {
            return row.get(Column.STATUS)
                    + " after "
                    + String.format(Locale.ROOT, "%.0f s", row.getDouble(Column.WALL_S));
        }
        return String.format(
                Locale.ROOT,
                "%.0f events/s, %.1f s job, %.1f s wall, %.1f s CPU, checksum %s",
                row.getDouble(Column.EVENTS_PER_S),
                row.getDouble(Column.SECONDS),
                row.getDouble(Column.WALL_S),
                row.getDouble(Column.CPU_S),
                row.get(Column.CHECKSUM));
    }

    private static void printPlans(List<RunSpec> all, MemoryBudget budget, PrintStream err) {
        Map<String, ScalePlan.QueryPlan> seen = new LinkedHashMap<>();
        for (RunSpec s : all) {
            seen.putIfAbsent(s.experiment() + " " + s.query().id(), s.plan());
        }
        seen.forEach(
                (k, p) ->
                        err.println(
                                "  " + k.split(" ")[0] + ": " + p.describe(budget.managedBytes())));
    }
}
