package io.flowkv.bench.harness;

import io.flowkv.nexmark.Workload;

import java.util.List;
import java.util.Map;

/** One child run: which query on which backend, with what, and why (experiment and setting). */
record RunSpec(
        String experiment,
        ScalePlan.QueryPlan plan,
        String backend,
        int rep,
        int parallelism,
        String setting,
        Map<String, String> conf,
        long checkpointIntervalMs,
        long targetRate,
        long failAfterEvents) {

    /** A run without an injected failure. */
    RunSpec(
            String experiment,
            ScalePlan.QueryPlan plan,
            String backend,
            int rep,
            int parallelism,
            String setting,
            Map<String, String> conf,
            long checkpointIntervalMs,
            long targetRate) {
        this(
                experiment,
                plan,
                backend,
                rep,
                parallelism,
                setting,
                conf,
                checkpointIntervalMs,
                targetRate,
                0);
    }

    /** A throughput-style run: the generator unpaced. */
    RunSpec(
            String experiment,
            ScalePlan.QueryPlan plan,
            String backend,
            int rep,
            int parallelism,
            String setting,
            Map<String, String> conf,
            long checkpointIntervalMs) {
        this(experiment, plan, backend, rep, parallelism, setting, conf, checkpointIntervalMs, 0);
    }

    /** Paced to the wall clock at {@link #targetRate} events/s (latency runs). */
    boolean paced() {
        return targetRate > 0;
    }

    static final List<String> BACKENDS = List.of("flowkv", "rocksdb", "forst", "hashmap");

    /**
     * FlowKV from the build of {@code --base-rev}, its child classpath {@link
     * ChildRun.Env#baseClasspath}.
     */
    static final String BASE = "flowkv-base";

    /**
     * Backends run with one option changed, named {@code <backend>-<what>}: the same engine, its
     * own column in the report. Where the timers live is the one that moves results most; {@code
     * flowkv-aur} puts the {@code custom} workload's windows (operator uid {@code custom}) on the
     * AUR store from the start; {@code flowkv-nopreflush} flushes store instances at checkpoints
     * only, the A/B of desynchronised flushes; {@code flowkv-nocache} turns the object cache off,
     * {@code flowkv-bigcache} gives it 200 MiB (a quarter of the large runs' heap, against the
     * default sixteenth); {@code flowkv-onheap} does that and keeps every timer on FlowKV's heap
     * queue (a heap limit of a billion timers), which gives FlowKV about the heap HashMap's state
     * takes where that state fits the heap; {@code flowkv-fetchfirst} fetches every restored file
     * before the subtask starts (restore-in-background off). {@value #BASE} is FlowKV at its
     * defaults from another build (scripts/bench.sh {@code --base-rev}): the A/B of two commits.
     */
    static final Map<String, Map<String, String>> VARIANTS =
            Map.ofEntries(
                    Map.entry(
                            "flowkv-aur",
                            Map.of("state.backend.flowkv.pattern-override", "custom:AUR")),
                    Map.entry(
                            "flowkv-nopreflush",
                            Map.of("state.backend.flowkv.pre-flushes-per-checkpoint", "0")),
                    Map.entry(
                            "flowkv-storedtimers",
                            Map.of("state.backend.flowkv.timer-service", "FLOWKV")),
                    Map.entry(
                            "flowkv-heaptimers",
                            Map.of("state.backend.flowkv.timer-service", "HEAP")),
                    Map.entry(
                            "flowkv-nocache",
                            Map.of("state.backend.flowkv.object-cache.size", "0")),
                    Map.entry(
                            "flowkv-bigcache",
                            Map.of("state.backend.flowkv.object-cache.size", "200m")),
                    Map.entry(
                            "flowkv-onheap",
                            Map.of(
                                    "state.backend.flowkv.object-cache.size",
                                    "200m",
                                    "state.backend.flowkv.timer-service.heap-limit",
                                    "1000000000")),
                    Map.entry(
                            "flowkv-fetchfirst",
                            Map.of("state.backend.flowkv.restore-in-background", "false")),
                    Map.entry(BASE, Map.of()),
                    Map.entry(
                            "rocksdb-heaptimers",
                            Map.of("state.backend.rocksdb.timer-service.factory", "HEAP")),
                    Map.entry(
                            "forst-heaptimers",
                            Map.of("state.backend.forst.timer-service.factory", "HEAP")));

    /** Whether {@code name} is a backend or a variant of one. */
    static boolean knownBackend(String name) {
        return BACKENDS.contains(name) || VARIANTS.containsKey(name) || baseVariant(name) != null;
    }

    /**
     * Whether {@code name} runs the build of {@code --base-rev}: {@value #BASE}, or {@code
     * flowkv-base-<what>}, that build with the options of the variant {@code flowkv-<what>} (for
     * example {@code flowkv-base-storedtimers} against {@code flowkv-storedtimers}).
     */
    static boolean onBase(String name) {
        return name.equals(BASE) || baseVariant(name) != null;
    }

    /** The variant {@code flowkv-<what>} a name {@code flowkv-base-<what>} runs, or null. */
    private static String baseVariant(String name) {
        if (!name.startsWith(BASE + "-")) {
            return null;
        }
        String variant = "flowkv-" + name.substring(BASE.length() + 1);
        return VARIANTS.containsKey(variant) && !variant.equals(BASE) ? variant : null;
    }

    /**
     * The engine a backend or variant name runs on: {@code flowkv} for {@code flowkv-storedtimers}.
     */
    static String engine(String name) {
        return knownBackend(name) && !BACKENDS.contains(name)
                ? name.substring(0, name.indexOf('-'))
                : name;
    }

    /** The options a variant sets (empty for a plain backend). */
    static Map<String, String> variantConf(String name) {
        String variant = baseVariant(name);
        return VARIANTS.getOrDefault(variant != null ? variant : name, Map.of());
    }

    Workload query() {
        return plan.query();
    }

    String label() {
        return query().id()
                + " "
                + backend
                + (setting.isEmpty() ? "" : " " + setting)
                + (parallelism == 1 ? "" : " p=" + parallelism)
                + " rep "
                + rep;
    }

    String dirName() {
        return (experiment
                        + "-"
                        + query().id()
                        + "-"
                        + backend
                        + (setting.isEmpty() ? "" : "-" + setting)
                        + "-p"
                        + parallelism
                        + "-r"
                        + rep)
                .replaceAll("[^A-Za-z0-9.=_-]", "_");
    }

    /** The row's identifying columns, before any measurement. */
    Row baseRow(long managedBytes) {
        return new Row()
                .set(Column.EXPERIMENT, experiment)
                .set(Column.QUERY, query().id())
                .set(Column.BACKEND, backend)
                .set(Column.REP, rep)
                .set(Column.PARALLELISM, parallelism)
                .set(Column.SETTING, setting)
                .set(Column.EVENTS, plan.events())
                .set(Column.EVENT_RATE, plan.eventRate())
                .set(Column.WINDOW_MS, plan.windowMs())
                .set(Column.SLIDE_MS, plan.slideMs())
                .set(Column.GAP_MS, plan.gapMs())
                .set(Column.TARGET_RATE, targetRate)
                .set(Column.STATE_ESTIMATE_BYTES, plan.stateEstimateBytes())
                .set(Column.MANAGED_BYTES, managedBytes);
    }
}
