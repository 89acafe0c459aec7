package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;
import io.flowkv.nexmark.Workload;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The runs of each mode, in the order they run. */
final class Plans {

    /** FlowKV's read batch ratio values of the sensitivity sweep (the default is 0.02). */
    static final double[] READ_BATCH_RATIOS = {0.005, 0.01, 0.02, 0.05, 0.1, 0.2};

    /** FlowKV's max space amplification values of the sweep (the default is 1.5). */
    static final double[] MAX_SPACE_AMPLIFICATIONS = {1.1, 1.25, 1.5, 2, 3};

    static final List<Query> READ_BATCH_QUERIES = List.of(Query.Q7_SESSION, Query.Q11_MEDIAN);
    static final List<Query> MSA_QUERIES = List.of(Query.Q7, Query.Q11_MEDIAN);

    private Plans() {}

    /** The mode's own queries, narrowed to those of {@code --queries}. */
    static List<Query> selected(List<Query> queries, BenchOptions o) {
        return queries.stream().filter(o.queries()::contains).toList();
    }

    static String csvName(String mode) {
        return mode + ".csv";
    }

    static List<RunSpec> of(String mode, BenchOptions o, MemoryBudget budget) {
        return switch (mode) {
            case "throughput" -> throughput(o, budget);
            case "sweeps" -> sweeps(o, budget);
            case "scaling" -> scaling(o, budget);
            case "restore" -> restore(o, budget);
            case "latency" -> {
                List<RunSpec> runs = new ArrayList<>(Latency.calibration(o, budget));
                runs.addAll(Latency.paced(o, budget));
                yield runs;
            }
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        };
    }

    static ScalePlan.QueryPlan plan(Workload q, BenchOptions o, MemoryBudget budget) {
        return ScalePlan.plan(
                q, o.scale(), budget.managedBytes(), o.stateFactor(), o.events(), o.eventRate());
    }

    /**
     * Every query on every backend, repetitions interleaved: rep 1 of every query on every backend,
     * then rep 2, so that a slow phase of the machine hits every backend alike. The backends of a
     * query run in the given order in odd repetitions and in reverse in even ones, so no backend
     * always runs first (after a build, say) or always after the same neighbour.
     */
    static List<RunSpec> throughput(BenchOptions o, MemoryBudget budget) {
        List<RunSpec> out = new ArrayList<>();
        for (int rep = 1; rep <= o.reps(); rep++) {
            List<String> backends = new ArrayList<>(o.backends());
            if (rep % 2 == 0) {
                Collections.reverse(backends);
            }
            for (Workload q : o.queries()) {
                ScalePlan.QueryPlan p = plan(q, o, budget);
                for (String b : backends) {
                    out.add(
                            new RunSpec(
                                    "throughput",
                                    p,
                                    b,
                                    rep,
                                    1,
                                    "",
                                    Map.of(),
                                    o.checkpointIntervalMs()));
                }
            }
        }
        return out;
    }

    /** FlowKV alone, one run per setting (the sweep's shape is the result, not a ratio). */
    static List<RunSpec> sweeps(BenchOptions o, MemoryBudget budget) {
        List<RunSpec> out = new ArrayList<>();
        for (Query q : selected(READ_BATCH_QUERIES, o)) {
            ScalePlan.QueryPlan p = plan(q, o, budget);
            for (double r : READ_BATCH_RATIOS) {
                out.add(
                        new RunSpec(
                                "read-batch-ratio",
                                p,
                                "flowkv",
                                1,
                                1,
                                "read-batch-ratio=" + r,
                                Map.of("state.backend.flowkv.read-batch-ratio", Double.toString(r)),
                                o.checkpointIntervalMs()));
            }
        }
        for (Query q : selected(MSA_QUERIES, o)) {
            ScalePlan.QueryPlan p = plan(q, o, budget);
            for (double m : MAX_SPACE_AMPLIFICATIONS) {
                out.add(
                        new RunSpec(
                                "msa",
                                p,
                                "flowkv",
                                1,
                                1,
                                "max-space-amplification=" + m,
                                Map.of(
                                        "state.backend.flowkv.max-space-amplification",
                                        Double.toString(m)),
                                o.checkpointIntervalMs()));
            }
        }
        return out;
    }

    /**
     * The queries of {@code --restore}: at {@code large} their windows fire once, at the end of the
     * run, so every output record comes after the restore and the checksum checks it.
     */
    static final List<Query> RESTORE_QUERIES =
            List.of(Query.Q7, Query.Q7_SESSION, Query.Q8, Query.Q11_MEDIAN);

    /** The checkpoint interval of restore runs unless {@code --checkpoint-interval} says. */
    static final long RESTORE_CHECKPOINT_MS = 10_000;

    /**
     * Each query on each backend with one failure, repetitions interleaved: the run is planned for
     * {@code --state-factor / --fail-at} so that the state it holds when it fails, at {@code
     * --fail-at} of its events, is {@code --state-factor} times managed memory.
     */
    static List<RunSpec> restore(BenchOptions o, MemoryBudget budget) {
        if (!o.scale().equals("large")) {
            throw new IllegalArgumentException(
                    "--restore needs --scale large: its windows must fire after the restore for"
                            + " the checksum to check it");
        }
        long interval =
                o.checkpointIntervalMs() > 0 ? o.checkpointIntervalMs() : RESTORE_CHECKPOINT_MS;
        String setting = "state-factor=" + fmt(o.stateFactor());
        List<RunSpec> out = new ArrayList<>();
        for (int rep = 1; rep <= o.reps(); rep++) {
            for (Query q : selected(RESTORE_QUERIES, o)) {
                ScalePlan.QueryPlan p =
                        ScalePlan.plan(
                                q,
                                "large",
                                budget.managedBytes(),
                                o.stateFactor() / o.failAt(),
                                o.events());
                long failAfter = (long) (p.events() * o.failAt());
                for (String b : o.backends()) {
                    out.add(
                            new RunSpec(
                                    "restore", p, b, rep, 1, setting, Map.of(), interval, 0,
                                    failAfter));
                }
            }
        }
        return out;
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    /** Q11-Median on FlowKV and RocksDB at parallelism 1 and 2, interleaved. */
    static List<RunSpec> scaling(BenchOptions o, MemoryBudget budget) {
        List<RunSpec> out = new ArrayList<>();
        ScalePlan.QueryPlan p = plan(Query.Q11_MEDIAN, o, budget);
        for (int rep = 1; rep <= o.reps(); rep++) {
            for (int parallelism = 1; parallelism <= 2; parallelism++) {
                for (String b : List.of("flowkv", "rocksdb")) {
                    out.add(
                            new RunSpec(
                                    "scaling",
                                    p,
                                    b,
                                    rep,
                                    parallelism,
                                    "",
                                    Map.of(),
                                    o.checkpointIntervalMs()));
                }
            }
        }
        return out;
    }
}
