package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The latency mode (Figure 9): each query first runs unpaced on RocksDB to find its maximum rate
 * (unless {@code --max-rates} gives it), then on every backend paced to the wall clock at fixed
 * fractions of that rate, event time equal to wall-clock time, so that a result's latency is the
 * wall-clock time it reached the sink minus its window's end.
 *
 * <p>A rate is <em>sustained</em> when the source generated at least {@value #SUSTAINED_SHARE} of
 * the target rate after the warm-up (the slope of the child's progress reports, events over wall
 * time, until the last event) and the latency did not grow without bound: the median latency of the
 * windows ending in the last quarter of the stream is at most twice that of the second quarter plus
 * one second. Windows ending in the first quarter (at most {@value #MAX_WARMUP_MS} ms) are warm-up,
 * and windows ending after the stream's last event time are closed by the end of the input rather
 * than by time; both are left out of the percentiles.
 */
final class Latency {

    static final List<Query> QUERIES = List.of(Query.Q7, Query.Q11_MEDIAN, Query.Q11);
    static final double[] FRACTIONS = {0.25, 0.5, 0.75, 1.0};
    static final double SUSTAINED_SHARE = 0.95;
    static final long MAX_WARMUP_MS = 15_000;
    static final String CALIBRATION = "latency-max";
    static final String EXPERIMENT = "latency";
    static final String TIMELINE_CSV = "latency-timeline.csv";

    private static final Pattern BASE = Pattern.compile("event 0 at epoch ms (\\d+)");

    private Latency() {}

    /** The query's plan for the calibration and paced runs: the small scale's windows. */
    static ScalePlan.QueryPlan windows(Query q, MemoryBudget budget, long events) {
        return ScalePlan.plan(q, "small", budget.managedBytes(), 1, events);
    }

    /** Unpaced RocksDB runs, one per query that has no given max rate. */
    static List<RunSpec> calibration(BenchOptions o, MemoryBudget budget) {
        List<RunSpec> out = new ArrayList<>();
        for (Query q : Plans.selected(QUERIES, o)) {
            if (!o.maxRates().containsKey(q.id())) {
                out.add(
                        new RunSpec(
                                CALIBRATION,
                                windows(q, budget, o.latencyCalibrationEvents()),
                                "rocksdb",
                                1,
                                1,
                                "",
                                Map.of(),
                                0));
            }
        }
        return out;
    }

    /**
     * The paced runs, rates still unknown (0): every query x fraction x backend, the backends
     * interleaved; {@link #resolve} fills the rate in before each runs.
     */
    static List<RunSpec> paced(BenchOptions o, MemoryBudget budget) {
        List<RunSpec> out = new ArrayList<>();
        for (Query q : Plans.selected(QUERIES, o)) {
            for (double f : FRACTIONS) {
                for (String b : o.backends()) {
                    out.add(
                            new RunSpec(
                                    EXPERIMENT,
                                    windows(q, budget, 1),
                                    b,
                                    1,
                                    1,
                                    fraction(f),
                                    Map.of(),
                                    o.checkpointIntervalMs(),
                                    0));
                }
            }
        }
        return out;
    }

    static String fraction(double f) {
        return String.format(Locale.ROOT, "rate=%.0f%%", f * 100);
    }

    /** {@code spec} with its target rate and events, from the query's maximum rate. */
    static RunSpec resolve(RunSpec spec, double maxRate, long seconds) {
        String s = spec.setting();
        double f = Double.parseDouble(s.substring(s.indexOf('=') + 1, s.length() - 1)) / 100;
        long rate = Math.max(1, Math.round(maxRate * f));
        ScalePlan.QueryPlan p = spec.plan();
        long events = rate * seconds;
        ScalePlan.QueryPlan resolved =
                new ScalePlan.QueryPlan(
                        p.query(),
                        events,
                        rate,
                        p.windowMs(),
                        p.slideMs(),
                        p.gapMs(),
                        ScalePlan.estimate(
                                p.query(), events, rate, p.windowMs(), p.slideMs(), p.gapMs()));
        return new RunSpec(
                spec.experiment(),
                resolved,
                spec.backend(),
                spec.rep(),
                spec.parallelism(),
                spec.setting(),
                spec.conf(),
                spec.checkpointIntervalMs(),
                rate);
    }

    /** One second of a paced run: the records that reached the sink in it, and their p99.9. */
    record Second(long second, int records, double p999) {}

    /** The latencies of a paced run, from its files. */
    record Analysis(
            double p50,
            double p95,
            double p99,
            double p999,
            double achievedRate,
            boolean sustained,
            List<Second> timeline) {}

    /**
     * Reads a paced run's latency records ({@code "<sink ms> <window end ms>"} lines) and computes
     * its percentiles, achieved rate and timeline; null when there is nothing to analyze.
     */
    static Analysis analyze(
            Path runDir, long events, long targetRate, List<long[]> progress, String stderr)
            throws IOException {
        Matcher m = BASE.matcher(stderr);
        if (!m.find()) {
            return null;
        }
        long base = Long.parseLong(m.group(1));
        List<long[]> records = new ArrayList<>();
        try (DirectoryStream<Path> files =
                Files.newDirectoryStream(runDir, ChildRun.LATENCY_PREFIX + ".*")) {
            for (Path f : files) {
                for (String line : Files.readAllLines(f)) {
                    String[] p = line.trim().split(" ");
                    if (p.length == 2) {
                        records.add(new long[] {Long.parseLong(p[0]), Long.parseLong(p[1])});
                    }
                }
            }
        }
        long durationMs = events * 1000 / targetRate;
        long warmupEnd = base + Math.min(MAX_WARMUP_MS, durationMs / 4);
        return analyze(
                records, base, durationMs, achievedRate(progress, warmupEnd, events), targetRate);
    }

    /**
     * Events per second generated from {@code from} until the last event, from progress samples
     * {@code {epoch ms, events so far}}; NaN with fewer than two samples in that range.
     */
    static double achievedRate(List<long[]> progress, long from, long events) {
        long[] first = null;
        long[] last = null;
        for (long[] p : progress) {
            if (p[0] < from) {
                continue;
            }
            if (first == null) {
                first = p;
            }
            last = p;
            if (p[1] >= events) {
                break;
            }
        }
        if (first == null || last == first || last[0] == first[0]) {
            return Double.NaN;
        }
        return (last[1] - first[1]) * 1000.0 / (last[0] - first[0]);
    }

    /**
     * The analysis of {@code records} ({@code {sink ms, window end ms}}); see the class comment.
     */
    static Analysis analyze(
            List<long[]> records, long base, long durationMs, double achieved, long targetRate) {
        long warmupEnd = base + Math.min(MAX_WARMUP_MS, durationMs / 4);
        long q2End = base + durationMs / 2;
        long q4Start = base + durationMs * 3 / 4;
        List<Double> measured = new ArrayList<>();
        List<Double> second = new ArrayList<>();
        List<Double> last = new ArrayList<>();
        TreeMap<Long, List<Double>> bySecond = new TreeMap<>();
        for (long[] r : records) {
            double latency = r[0] - r[1];
            bySecond.computeIfAbsent((r[0] - base) / 1000, s -> new ArrayList<>()).add(latency);
            if (r[1] < warmupEnd || r[1] > base + durationMs) {
                continue;
            }
            measured.add(latency);
            if (r[1] < q2End) {
                second.add(latency);
            } else if (r[1] >= q4Start) {
                last.add(latency);
            }
        }
        List<Second> timeline = new ArrayList<>();
        bySecond.forEach(
                (s, v) -> timeline.add(new Second(s, v.size(), Stats.percentile(v, 99.9))));
        boolean bounded =
                second.isEmpty()
                        || last.isEmpty()
                        || Stats.median(last) <= 2 * Stats.median(second) + 1000;
        boolean fastEnough = !(achieved < SUSTAINED_SHARE * targetRate);
        if (measured.isEmpty()) {
            return new Analysis(
                    Double.NaN, Double.NaN, Double.NaN, Double.NaN, achieved, false, timeline);
        }
        return new Analysis(
                Stats.percentile(measured, 50),
                Stats.percentile(measured, 95),
                Stats.percentile(measured, 99),
                Stats.percentile(measured, 99.9),
                achieved,
                bounded && fastEnough,
                timeline);
    }

    static void fill(Row row, Analysis a) {
        row.set(Column.P50_MS, a.p50());
        row.set(Column.P95_MS, a.p95());
        row.set(Column.P99_MS, a.p99());
        row.set(Column.P999_MS, a.p999());
        row.set(Column.ACHIEVED_RATE, a.achievedRate());
        row.set(Column.SUSTAINED, Boolean.toString(a.sustained()));
    }

    /** Timeline rows: {@code query,backend,target_rate,second,records,p999_ms}. */
    static String timelineHeader() {
        return "query,backend,target_rate,second,records,p999_ms\n";
    }

    static String timelineLines(RunSpec spec, Analysis a) {
        StringBuilder sb = new StringBuilder();
        for (Second s : a.timeline()) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "%s,%s,%d,%d,%d,%.0f%n",
                            spec.query().id(),
                            spec.backend(),
                            spec.targetRate(),
                            s.second(),
                            s.records(),
                            s.p999()));
        }
        return sb.toString();
    }
}
