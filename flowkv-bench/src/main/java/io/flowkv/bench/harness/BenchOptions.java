package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;
import io.flowkv.nexmark.Workload;
import io.flowkv.nexmark.sql.SqlQuery;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The command line of scripts/bench.sh. */
record BenchOptions(
        Set<String> modes,
        String scale,
        String memory,
        String managedMemory,
        int reps,
        List<Workload> queries,
        List<String> backends,
        long events,
        long eventRate,
        double stateFactor,
        double failAt,
        long checkpointIntervalMs,
        long pageCacheBytes,
        Path out,
        Path runsDir,
        boolean jfr,
        boolean keepRuns,
        long stallSeconds,
        long timeoutSeconds,
        boolean dryRun,
        boolean reportOnly,
        boolean resume,
        Map<String, Double> maxRates,
        long latencySeconds,
        long latencyCalibrationEvents,
        String note,
        String baseRev,
        String commandLine) {

    static final long QUICK_EVENTS = 600_000;

    /**
     * The share of its events at which a restore run fails unless {@code --fail-at} says: half, so
     * that the events left after the failure last several seconds on the faster backend too (at 0.8
     * FlowKV's q7-session had under 1.5 s after its restore to show a steady second, RocksDB 7 s).
     */
    static final double DEFAULT_FAIL_AT = 0.5;

    static final List<String> MODES = List.of("throughput", "sweeps", "scaling", "latency");

    static final String USAGE =
            String.join(
                    "\n",
                    "usage: scripts/bench.sh [modes] [options]",
                    "modes (default --throughput; several may be given):",
                    "  --throughput   every query x backend, events/s, CPU, JFR breakdown, disk",
                    "  --sweeps       FlowKV read-batch-ratio (q7-session, q11-median) and MSA"
                            + " (q7, q11-median) sweeps",
                    "  --scaling      q11-median on flowkv and rocksdb at parallelism 1 and 2",
                    "  --latency      q7, q11-median, q11 paced to the wall clock at 25/50/75/100%"
                            + " of RocksDB's max rate: latency percentiles",
                    "  --restore      q7, q7-session, q8, q11-median (large) with checkpoints,"
                            + " failed once when they hold",
                    "                 --state-factor x managed memory: restore time and time"
                            + " to steady throughput",
                    "  --all          all of the above but --restore",
                    "  --quick        throughput of all queries on flowkv and rocksdb, small scale,"
                            + " 2 reps, 600k events",
                    "  --report-only  regenerate README.md and the plots from the CSVs in --out",
                    "options:",
                    "  --scale small|large     state sizes (default small; large: the append"
                            + " queries hold --state-factor x managed memory)",
                    "  --memory 2g             TaskManager process size of every run",
                    "  --managed-memory 64m    managed memory (the state backends' budget) within"
                            + " it; default: Flink's",
                    "                          fraction; the heap gets the rest, as in Flink",
                    "  --reps N                repetitions (default 3 at large, 2 at small)",
                    "  --queries q7,q8,...     queries (default all eight; narrows the other"
                            + " modes' own query lists too);",
                    "                          sql-q0..sql-q22 name the nexmark-flink SQL"
                            + " queries",
                    "  --suite paper|general|sql  the paper's eight (default), the general-state"
                            + " workloads, or every",
                    "                          SQL query (their windows are fixed in the SQL;"
                            + " --events sizes them)",
                    "  --backends a,b,...      flowkv,rocksdb,forst,hashmap (default all four);"
                            + " variants: flowkv-storedtimers (timer-service FLOWKV),",
                    "                          flowkv-heaptimers, rocksdb-heaptimers,"
                            + " forst-heaptimers (timers on the heap),",
                    "                          flowkv-aur (the custom workload's windows on"
                            + " the AUR store),",
                    "                          flowkv-nopreflush (no flushes ahead of"
                            + " checkpoints: pre-flushes-per-checkpoint 0),",
                    "                          flowkv-nocache (no object cache:"
                            + " object-cache.size 0),",
                    "                          flowkv-bigcache (object-cache.size 200m),",
                    "                          flowkv-onheap (object-cache.size 200m and"
                            + " timer-service.heap-limit 1000000000: the heap HashMap's state"
                            + " takes),",
                    "                          flowkv-fetchfirst (restore-in-background false:"
                            + " restored files fetched before the subtask starts),",
                    "                          flowkv-base (FlowKV as built at --base-rev),"
                            + " flowkv-base-<what> (that build",
                    "                          with the options of variant flowkv-<what>, e.g."
                            + " flowkv-base-storedtimers)",
                    "  --base-rev REV          a git revision of this repository: scripts/bench.sh"
                            + " builds it in a work tree",
                    "                          under target/bench-base and runs backend flowkv-base"
                            + " from that build, so",
                    "                          flowkv against flowkv-base is an A/B of two commits"
                            + " in one interleaved run",
                    "  --events N              events per run (overrides the scale's plan)",
                    "  --event-rate R          SQL queries only: events per second of event time"
                            + " (default 100000); a higher",
                    "                          rate puts more events, so more state, in the"
                            + " SQL's fixed windows",
                    "  --state-factor F        large: peak window state / managed memory"
                            + " (default 4)",
                    "  --fail-at F             restore: fail each run at this share of its events"
                            + " (0 < F < 1, default 0.5);",
                    "                          the state then is --state-factor x managed memory,"
                            + " and the rest of the events",
                    "                          show the time to steady throughput",
                    "  --checkpoint-interval D checkpoints every D (e.g. 10s); default off",
                    "  --page-cache SIZE       run each child in a memory cgroup limited to its"
                            + " process size (TaskManager",
                    "                          + the JobManager's heap) plus SIZE (e.g. 256m),"
                            + " so state beyond it is read",
                    "                          from disk, not the page cache; needs root or a"
                            + " writable cgroup tree; default off",
                    "  --out DIR               results (default docs/benchmarks; --quick:"
                            + " target/bench-quick)",
                    "  --runs-dir DIR          per-run logs and state (default target/bench-runs)",
                    "  --no-jfr                no JFR recording (no CPU breakdown)",
                    "  --keep-runs             keep state dirs and JFR files of every run",
                    "  --stall-timeout S       kill a run without progress and with idle CPU for"
                            + " S s (default 180)",
                    "  --run-timeout S         kill a run after S s (default 3600)",
                    "  --max-rates q7=R,...    latency: the queries' max rates (events/s) instead"
                            + " of measuring them on RocksDB first",
                    "  --latency-seconds S     latency: seconds of events per paced run"
                            + " (default 60)",
                    "  --latency-calibration-events N  latency: events of the max-rate runs"
                            + " (default 3000000)",
                    "  --note TEXT             a remark printed at the top of README.md (e.g. that"
                            + " this was a smoke run on a busy machine)",
                    "  --dry-run               print the plan, the memory split and the ETA only",
                    "  --resume                keep the runs already in --out's CSVs and run only"
                            + " the missing ones (a",
                    "                          run split across invocations; failed runs count"
                            + " as done, latency reruns)");

    static BenchOptions parse(String[] args) {
        Set<String> modes = new LinkedHashSet<>();
        String scale = "small";
        String memory = "2g";
        String managedMemory = null;
        int reps = -1;
        List<Workload> queries = new ArrayList<>(Query.paperQueries());
        List<String> backends = RunSpec.BACKENDS;
        long events = 0;
        long eventRate = 0;
        double stateFactor = 4;
        double failAt = DEFAULT_FAIL_AT;
        long checkpointMs = 0;
        long pageCache = 0;
        Path out = null;
        Path runsDir = Path.of("target", "bench-runs");
        boolean jfr = true;
        boolean keep = false;
        long stall = 180;
        long timeout = 3600;
        boolean dryRun = false;
        boolean reportOnly = false;
        boolean resume = false;
        boolean quick = false;
        Map<String, Double> maxRates = new LinkedHashMap<>();
        long latencySeconds = 60;
        long calibrationEvents = 3_000_000;
        String note = "";
        String baseRev = "";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--help", "-h" -> throw new IllegalArgumentException("");
                case "--throughput", "--sweeps", "--scaling", "--latency", "--restore" ->
                        modes.add(a.substring(2));
                case "--all" -> modes.addAll(MODES);
                case "--quick" -> quick = true;
                case "--report-only" -> reportOnly = true;
                case "--no-jfr" -> jfr = false;
                case "--keep-runs" -> keep = true;
                case "--dry-run" -> dryRun = true;
                case "--resume" -> resume = true;
                default -> {
                    if (!a.startsWith("--")) {
                        throw new IllegalArgumentException("unexpected argument '" + a + "'");
                    }
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException("missing value for " + a);
                    }
                    String v = args[++i];
                    switch (a) {
                        case "--scale" -> scale = v.toLowerCase(Locale.ROOT);
                        case "--memory" -> memory = v;
                        case "--managed-memory" -> managedMemory = v;
                        case "--reps" -> reps = positiveInt(a, v);
                        case "--queries" -> queries = queries(v);
                        case "--suite" -> queries = suite(v);
                        case "--backends" -> backends = backends(v);
                        case "--events" -> events = positiveLong(a, v);
                        case "--event-rate" -> eventRate = positiveLong(a, v);
                        case "--state-factor" -> stateFactor = positiveDouble(a, v);
                        case "--fail-at" -> failAt = share(a, v);
                        case "--checkpoint-interval" -> checkpointMs = durationMs(a, v);
                        case "--page-cache" -> pageCache = size(a, v);
                        case "--out" -> out = Path.of(v);
                        case "--runs-dir" -> runsDir = Path.of(v);
                        case "--stall-timeout" -> stall = positiveLong(a, v);
                        case "--run-timeout" -> timeout = positiveLong(a, v);
                        case "--max-rates" -> maxRates = maxRates(v);
                        case "--note" -> note = v;
                        case "--base-rev" -> baseRev = v;
                        case "--latency-seconds" -> latencySeconds = positiveLong(a, v);
                        case "--latency-calibration-events" ->
                                calibrationEvents = positiveLong(a, v);
                        default -> throw new IllegalArgumentException("unknown option " + a);
                    }
                }
            }
        }
        if (!scale.equals("small") && !scale.equals("large")) {
            throw new IllegalArgumentException("--scale must be small or large, got " + scale);
        }
        if (quick) {
            modes.add("throughput");
            if (backends == RunSpec.BACKENDS) {
                backends = List.of("flowkv", "rocksdb");
            }
            if (reps < 0) {
                reps = 2;
            }
            if (events == 0) {
                // under 10 minutes on 2 cores, start-up of 32 JVMs included
                events = QUICK_EVENTS;
            }
            if (out == null) {
                out = Path.of("target", "bench-quick");
            }
        }
        if (modes.isEmpty() && !reportOnly) {
            modes.add("throughput");
        }
        if (reps < 0) {
            reps = scale.equals("large") ? 3 : 2;
        }
        if (out == null) {
            out = Path.of("docs", "benchmarks");
        }
        if (eventRate > 0) {
            List<String> notSql =
                    queries.stream()
                            .filter(q -> !(q instanceof SqlQuery))
                            .map(Workload::id)
                            .toList();
            if (!notSql.isEmpty()) {
                throw new IllegalArgumentException(
                        "--event-rate sizes the SQL queries' fixed windows; "
                                + String.join(",", notSql)
                                + " size their windows from --scale and --state-factor: run"
                                + " them without --event-rate");
            }
        }
        boolean runsBase = backends.stream().anyMatch(RunSpec::onBase);
        if (runsBase && baseRev.isEmpty()) {
            throw new IllegalArgumentException(
                    "backend "
                            + RunSpec.BASE
                            + " runs FlowKV as built at another commit: give it with --base-rev"
                            + " REV");
        }
        if (!runsBase && !baseRev.isEmpty()) {
            throw new IllegalArgumentException(
                    "--base-rev "
                            + baseRev
                            + " is the build of backend "
                            + RunSpec.BASE
                            + ", which --backends does not name");
        }
        return new BenchOptions(
                modes,
                scale,
                memory,
                managedMemory,
                reps,
                List.copyOf(queries),
                List.copyOf(backends),
                events,
                eventRate,
                stateFactor,
                failAt,
                checkpointMs,
                pageCache,
                out,
                runsDir,
                jfr,
                keep,
                stall,
                timeout,
                dryRun,
                reportOnly,
                resume,
                Map.copyOf(maxRates),
                latencySeconds,
                calibrationEvents,
                note,
                baseRev,
                commandLine(args));
    }

    private static long size(String option, String v) {
        long bytes;
        try {
            bytes = org.apache.flink.configuration.MemorySize.parseBytes(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    option + " takes a size such as 256m, got '" + v + "': " + e.getMessage());
        }
        if (bytes <= 0) {
            throw new IllegalArgumentException(option + " must be > 0, got " + v);
        }
        return bytes;
    }

    private static List<Workload> suite(String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "paper" -> List.copyOf(Query.paperQueries());
            case "general" ->
                    java.util.Arrays.stream(Query.values())
                            .filter(q -> !q.isPaperQuery())
                            .map(Workload.class::cast)
                            .toList();
            case "sql" -> List.of(SqlQuery.values());
            default ->
                    throw new IllegalArgumentException(
                            "--suite must be paper, general or sql, got '" + v + "'");
        };
    }

    private static List<Workload> queries(String v) {
        List<Workload> out = new ArrayList<>();
        for (String q : v.split(",")) {
            if (!q.isBlank()) {
                out.add(Workload.of(q.trim()));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--queries names no query");
        }
        return out;
    }

    /** The invocation as a shell would take it back: arguments with spaces etc. quoted. */
    static String commandLine(String[] args) {
        StringBuilder sb = new StringBuilder("scripts/bench.sh");
        for (String a : args) {
            sb.append(' ');
            if (a.matches("[A-Za-z0-9_./:=,%+-]+")) {
                sb.append(a);
            } else {
                sb.append('\'').append(a.replace("'", "'\\''")).append('\'');
            }
        }
        return sb.toString();
    }

    private static Map<String, Double> maxRates(String v) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String kv : v.split(",")) {
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(
                        "--max-rates expects query=events_per_s,..., got '" + kv + "'");
            }
            String q = Query.of(kv.substring(0, eq).trim()).id();
            out.put(q, positiveDouble("--max-rates " + q, kv.substring(eq + 1).trim()));
        }
        return out;
    }

    private static List<String> backends(String v) {
        List<String> out = new ArrayList<>();
        for (String b : v.split(",")) {
            String name = b.trim().toLowerCase(Locale.ROOT);
            if (name.isEmpty()) {
                continue;
            }
            if (!RunSpec.knownBackend(name)) {
                throw new IllegalArgumentException(
                        "unknown backend '"
                                + b
                                + "' (allowed: "
                                + RunSpec.BACKENDS
                                + " and the variants "
                                + new java.util.TreeSet<>(RunSpec.VARIANTS.keySet())
                                + ")");
            }
            out.add(name);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("--backends names no backend");
        }
        return out;
    }

    private static int positiveInt(String option, String v) {
        long n = positiveLong(option, v);
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(option + " too large: " + v);
        }
        return (int) n;
    }

    private static long positiveLong(String option, String v) {
        long n;
        try {
            n = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " expects a number, got '" + v + "'", e);
        }
        if (n < 1) {
            throw new IllegalArgumentException(option + " must be >= 1, got " + v);
        }
        return n;
    }

    private static double positiveDouble(String option, String v) {
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " expects a number, got '" + v + "'", e);
        }
        if (!(d > 0)) {
            throw new IllegalArgumentException(option + " must be > 0, got " + v);
        }
        return d;
    }

    /** A share strictly between 0 and 1. */
    private static double share(String option, String v) {
        double d = positiveDouble(option, v);
        if (d >= 1) {
            throw new IllegalArgumentException(
                    option + " must be between 0 and 1 (exclusive), got " + v);
        }
        return d;
    }

    private static long durationMs(String option, String v) {
        try {
            return org.apache.flink.util.TimeUtils.parseDuration(v).toMillis();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    option + " expects a duration like 10s, got '" + v + "'", e);
        }
    }
}
