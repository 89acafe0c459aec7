package io.flowkv.nexmark;

import io.flowkv.nexmark.sql.SqlQueries;
import io.flowkv.nexmark.sql.SqlQuery;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.RpcServiceSharing;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.TimeUtils;

import java.io.PrintStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs one NEXMark query: embedded on a MiniCluster when started with {@code java}, on the cluster
 * when submitted with {@code flink run}. The last line on stdout is the result:
 *
 * <pre>
 * query=q7 backend=flowkv events=.. seconds=.. events_per_s=.. output_records=.. checksum=..
 * </pre>
 */
public final class NexmarkRunner {

    static final String USAGE =
            "usage: NexmarkRunner --query q5|q5-append|q7|q7-session|q8|q11|q11-median|q12|sql-qN\n"
                    + "  [--backend flowkv|hashmap|rocksdb|forst] [--events N (4000000)]\n"
                    + "  [--rate R: events per second of event time (100000)]\n"
                    + "  [--max-rate R: wall-clock events per second, 0 = unlimited (0)]\n"
                    + "  [--window 10s] [--slide 5s] [--gap 10s] [--out-of-orderness 100ms]\n"
                    + "  [--parallelism P (1)] [--checkpoint-interval D] [--checkpoint-dir URI]\n"
                    + "  [--managed-memory 512m: embedded TaskManager's managed memory]\n"
                    + "  [--progress-interval 5s]\n"
                    + "  [--conf key=value: a Flink configuration entry, repeatable]\n"
                    + "  [--pace-to-event-time: event time = wall-clock time from 2 s after the job"
                    + " starts; --max-rate is then ignored]\n"
                    + "  [--latency-out PREFIX: write '<sink ms> <window end ms>' per output record"
                    + " to PREFIX.<subtask>]\n"
                    + "  [--fail-after N: embedded, with --checkpoint-interval: fail the job once,"
                    + " right after a\n"
                    + "   checkpoint triggered once N events were generated, and report its restore"
                    + " on the result line]";

    private NexmarkRunner() {}

    /** Parsed command line. */
    record Options(
            Query query,
            String backend,
            GeneratorConfig generator,
            double maxRate,
            QueryParams params,
            int parallelism,
            Duration checkpointInterval,
            String checkpointDir,
            String managedMemory,
            Duration progressInterval,
            Map<String, String> conf,
            boolean paceToEventTime,
            String latencyOut,
            SqlQuery sqlQuery,
            long failAfter) {

        /** The query's command-line name, DataStream or SQL. */
        String queryId() {
            return sqlQuery != null ? sqlQuery.id() : query.id();
        }

        static Options parse(String[] args) {
            String backend = null;
            long events = 4_000_000;
            long rate = 100_000;
            double maxRate = 0;
            QueryParams d = QueryParams.defaults();
            Duration window = d.window();
            Duration slide = d.slide();
            Duration gap = d.gap();
            Duration ooo = d.outOfOrderness();
            int parallelism = 1;
            Duration checkpointInterval = null;
            String checkpointDir = null;
            String managedMemory = "512m";
            Duration progress = Duration.ofSeconds(5);
            Map<String, String> conf = new LinkedHashMap<>();
            boolean pace = false;
            String latencyOut = null;
            long failAfter = 0;
            Workload workload = null;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                if (!arg.startsWith("--") && workload == null) {
                    workload = Workload.of(arg);
                    continue;
                }
                if (arg.equals("--help") || arg.equals("-h")) {
                    throw new IllegalArgumentException("");
                }
                if (arg.equals("--pace-to-event-time")) {
                    pace = true;
                    continue;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("Missing value for " + arg);
                }
                String value = args[++i];
                switch (arg) {
                    case "--query" -> workload = Workload.of(value);
                    case "--backend" -> backend = value.toLowerCase(Locale.ROOT);
                    case "--events" -> events = Long.parseLong(value.replace("_", ""));
                    case "--rate" -> rate = Long.parseLong(value.replace("_", ""));
                    case "--max-rate" -> maxRate = Double.parseDouble(value);
                    case "--window" -> window = TimeUtils.parseDuration(value);
                    case "--slide" -> slide = TimeUtils.parseDuration(value);
                    case "--gap" -> gap = TimeUtils.parseDuration(value);
                    case "--out-of-orderness" -> ooo = TimeUtils.parseDuration(value);
                    case "--parallelism" -> parallelism = Integer.parseInt(value);
                    case "--checkpoint-interval" ->
                            checkpointInterval = TimeUtils.parseDuration(value);
                    case "--checkpoint-dir" -> checkpointDir = value;
                    case "--managed-memory" -> managedMemory = value;
                    case "--progress-interval" -> progress = TimeUtils.parseDuration(value);
                    case "--latency-out" -> latencyOut = value;
                    case "--fail-after" -> failAfter = Long.parseLong(value.replace("_", ""));
                    case "--conf" -> {
                        int eq = value.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException(
                                    "--conf expects key=value, got '" + value + "'");
                        }
                        conf.put(value.substring(0, eq).trim(), value.substring(eq + 1).trim());
                    }
                    default -> throw new IllegalArgumentException("Unknown option " + arg);
                }
            }
            if (workload == null) {
                throw new IllegalArgumentException("Missing --query");
            }
            Query query = workload instanceof Query q ? q : null;
            SqlQuery sql = workload instanceof SqlQuery q ? q : null;
            if (sql != null && latencyOut != null) {
                throw new IllegalArgumentException(
                        "--latency-out is not supported for SQL queries");
            }
            if (failAfter < 0 || (failAfter > 0 && failAfter >= events)) {
                throw new IllegalArgumentException(
                        "--fail-after must be between 1 and the events - 1: " + failAfter);
            }
            if (failAfter > 0 && checkpointInterval == null) {
                throw new IllegalArgumentException(
                        "--fail-after needs --checkpoint-interval: the job restores from a"
                                + " checkpoint");
            }
            if (failAfter > 0 && sql != null) {
                throw new IllegalArgumentException(
                        "--fail-after is for the DataStream queries, not " + sql.id());
            }
            if (parallelism < 1) {
                throw new IllegalArgumentException("--parallelism must be >= 1: " + parallelism);
            }
            return new Options(
                    query,
                    backend,
                    GeneratorConfig.of(events, rate),
                    maxRate,
                    new QueryParams(window, slide, gap, ooo),
                    parallelism,
                    checkpointInterval,
                    checkpointDir,
                    managedMemory,
                    progress,
                    Map.copyOf(conf),
                    pace,
                    latencyOut,
                    sql,
                    failAfter);
        }
    }

    /** What a run measured. */
    record Result(
            String queryId,
            String backend,
            long events,
            double seconds,
            long outputRecords,
            long checksum,
            String recovery) {

        Result(
                String queryId,
                String backend,
                long events,
                double seconds,
                long outputRecords,
                long checksum) {
            this(queryId, backend, events, seconds, outputRecords, checksum, "");
        }

        Result(
                Query query,
                String backend,
                long events,
                double seconds,
                long outputRecords,
                long checksum) {
            this(query.id(), backend, events, seconds, outputRecords, checksum, "");
        }

        String line() {
            return String.format(
                            Locale.ROOT,
                            "query=%s backend=%s events=%d seconds=%.3f events_per_s=%.0f"
                                    + " output_records=%d checksum=%016x",
                            queryId,
                            backend,
                            events,
                            seconds,
                            events / Math.max(seconds, 1e-9),
                            outputRecords,
                            checksum)
                    + recovery;
        }
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().isEmpty()) {
                System.err.println(e.getMessage());
            }
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        try {
            System.out.println(run(options, System.err).line());
        } catch (Exception e) {
            String backend = options.backend() == null ? "default" : options.backend();
            System.err.println(
                    "query="
                            + options.queryId()
                            + " backend="
                            + backend
                            + " FAILED: "
                            + rootMessage(e));
            throw e;
        }
    }

    /**
     * What a {@code --fail-after} run adds to the configuration, where {@code --conf} did not set
     * it: one restart, at once, so that the time measured is the restore's, not a back-off's, and a
     * second failure fails the run; and no checkpoint failure fails the job, since one that expires
     * later (a backend firing every window at the end of the input for longer than the checkpoint
     * timeout: RocksDB's q7-session after a restore did) says nothing of the restore measured, and
     * the output is still checked.
     */
    static void configureRestoreRun(Configuration conf) {
        if (!conf.contains(RestartStrategyOptions.RESTART_STRATEGY)) {
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
            conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ZERO);
        }
        if (!conf.contains(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER)) {
            conf.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, Integer.MAX_VALUE);
        }
    }

    static Result run(Options options, PrintStream progress) throws Exception {
        // --conf entries first: the dedicated options below win over them.
        Configuration conf = Configuration.fromMap(options.conf());
        if (options.backend() != null) {
            conf.set(StateBackendOptions.STATE_BACKEND, options.backend());
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        boolean embedded = env instanceof LocalStreamEnvironment;
        if (embedded) {
            // The MiniCluster's TaskManager; a cluster sizes its own.
            conf.set(
                    TaskManagerOptions.MANAGED_MEMORY_SIZE,
                    MemorySize.parse(options.managedMemory()));
        }
        if (options.checkpointInterval() != null) {
            conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, options.checkpointInterval());
            String dir = options.checkpointDir();
            if (dir == null && embedded) {
                dir = Files.createTempDirectory("nexmark-checkpoints").toUri().toString();
            }
            if (dir != null) {
                conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
                conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir);
            }
        }
        if (options.failAfter() > 0) {
            if (!embedded) {
                throw new IllegalArgumentException(
                        "--fail-after runs on the embedded MiniCluster only (java, not flink run)");
            }
            configureRestoreRun(conf);
            conf.setString(
                    "traces.reporter." + RestoreSpans.NAME + ".factory.class",
                    RestoreSpans.Factory.class.getName());
        }
        env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(options.parallelism());
        String backend =
                options.backend() != null
                        ? options.backend()
                        : embedded ? "hashmap" : "cluster-default";

        // Paced: the source sets the base time when the job starts, and logs it.
        double maxRate =
                options.paceToEventTime() ? NexmarkSplit.PACE_TO_EVENT_TIME : options.maxRate();
        if (options.sqlQuery() != null) {
            SqlQueries.buildJob(
                    env, options.sqlQuery(), options.generator(), maxRate, options.params());
        } else {
            Queries.buildJob(
                    env,
                    options.query(),
                    options.generator(),
                    maxRate,
                    options.params(),
                    options.latencyOut(),
                    options.failAfter() > 0);
        }

        Progress.reset();
        FailOnce.reset();
        RestoreSpans.reset();
        long start = System.nanoTime();
        progress.printf(
                Locale.ROOT,
                "[%s] backend=%s events=%d parallelism=%d %s%n",
                options.queryId(),
                backend,
                options.generator().events(),
                options.parallelism(),
                options.params());
        String jobName = "nexmark-" + options.queryId() + "-" + backend;
        JobExecutionResult result;
        String recovery = "";
        if (options.failAfter() > 0) {
            MiniCluster cluster = miniCluster(conf, options.parallelism());
            try {
                StreamGraph graph = env.getStreamGraph();
                graph.setJobName(jobName);
                graph.setJobId(new JobID());
                JobID job = cluster.submitJob(graph).get().getJobID();
                progress.printf(Locale.ROOT, "[%s] job submitted: %s%n", options.queryId(), job);
                // The failure comes right after a checkpoint taken once --fail-after events
                // were generated, with the sources held back until it completes (FailOnce): the
                // state restored is the state of those events on every backend.
                AtomicBoolean triggered = new AtomicBoolean();
                RestoreTimeline timeline =
                        new RestoreTimeline(
                                Progress::events,
                                events -> {
                                    if (events >= options.failAfter()
                                            && triggered.compareAndSet(false, true)) {
                                        FailOnce.hold();
                                        checkpointThenFail(cluster, job, CHECKPOINT_ATTEMPTS);
                                    }
                                });
                timeline.start();
                ClassLoader loader = NexmarkRunner.class.getClassLoader();
                try {
                    result =
                            awaitWithProgress(
                                    cluster.requestJobResult(job)
                                            .thenApply(r -> executionResult(r, loader)),
                                    options,
                                    start,
                                    progress);
                } finally {
                    timeline.stop();
                }
                recovery = recovery(options, timeline, progress);
            } finally {
                cluster.closeAsync().get();
            }
        } else {
            JobClient client = env.executeAsync(jobName);
            // the embedded MiniCluster is up now: what follows is the job's own work
            progress.printf(
                    Locale.ROOT, "[%s] job submitted: %s%n", options.queryId(), client.getJobID());
            result = awaitWithProgress(client.getJobExecutionResult(), options, start, progress);
        }
        // The job's own run time: the MiniCluster's start-up and the submission are not part of
        // the throughput.
        double seconds = result.getNetRuntime() / 1000.0;
        progress.printf(
                Locale.ROOT,
                "[%s] job finished: %.3f s job run time, %.3f s since submission%n",
                options.queryId(),
                seconds,
                (System.nanoTime() - start) / 1e9);
        Long records = result.getAccumulatorResult(Checksum.RECORDS);
        Long sum = result.getAccumulatorResult(Checksum.SUM);
        return new Result(
                options.queryId(),
                backend,
                options.generator().events(),
                seconds,
                records == null ? 0 : records,
                sum == null ? 0 : sum,
                recovery);
    }

    /** The result line's fields on the run's failure and restore; fails if there was none. */
    private static String recovery(
            Options options, RestoreTimeline timeline, PrintStream progress) {
        long failedAt = FailOnce.failedAtMs();
        if (FailOnce.checkpointError() != null) {
            throw new IllegalStateException(
                    "--fail-after "
                            + options.failAfter()
                            + ": the checkpoint to restore failed "
                            + CHECKPOINT_ATTEMPTS
                            + " times, so no failure was injected",
                    FailOnce.checkpointError());
        }
        if (failedAt == 0) {
            throw new IllegalStateException(
                    "--fail-after "
                            + options.failAfter()
                            + ": the job ended before the checkpoint triggered after that many"
                            + " events completed, so no failure was injected; lower --fail-after");
        }
        org.apache.flink.traces.Span span = RestoreSpans.last();
        if (span == null) {
            throw new IllegalStateException(
                    "the job failed and finished, but Flink reported no JobInitialization span"
                            + " for a restore from a checkpoint");
        }
        RestoreTimeline.Recovery r =
                timeline.analyze(
                        FailOnce.heldAtMs(),
                        failedAt,
                        FailOnce.failedAtEvents(),
                        span.getEndTsMillis(),
                        RestoreSpans.attribute(span, "checkpointId"),
                        RestoreSpans.attribute(span, "fullSize"),
                        RestoreSpans.attribute(span, "maxInitializeStateDurationMs"));
        progress.printf(
                Locale.ROOT,
                "[%s] restore: failed after %d events; checkpoint %d (%.1f MB) restored %d ms after"
                        + " the failure (slowest subtask's state %d ms); %.0f events/s before the"
                        + " checkpoint, steady again %d ms after the failure%n",
                options.queryId(),
                r.failedAtEvents(),
                r.checkpointId(),
                r.restoredBytes() / 1e6,
                r.restoreMs(),
                r.initStateMs(),
                r.rateBefore(),
                r.steadyMs());
        return r.fields();
    }

    /** How often a {@code --fail-after} run triggers its checkpoint before it gives up. */
    static final int CHECKPOINT_ATTEMPTS = 3;

    /**
     * Triggers the checkpoint a {@code --fail-after} run restores and arms the failure when it
     * completes; a checkpoint that fails is triggered again, up to {@code attempts} times, and then
     * the sources are released without a failure (the run then fails, saying so).
     */
    private static void checkpointThenFail(MiniCluster cluster, JobID job, int attempts) {
        cluster.triggerCheckpoint(job)
                .whenComplete(
                        (path, error) -> {
                            if (error == null) {
                                FailOnce.arm();
                            } else if (attempts > 1) {
                                checkpointThenFail(cluster, job, attempts - 1);
                            } else {
                                FailOnce.release(error);
                            }
                        });
    }

    /**
     * The MiniCluster a {@code --fail-after} run starts itself, so that it can trigger a checkpoint
     * (the JobClient cannot): one TaskManager with a slot per subtask, as the embedded environment
     * builds it.
     */
    private static MiniCluster miniCluster(Configuration conf, int parallelism) throws Exception {
        Configuration clusterConf = new Configuration(conf);
        if (!clusterConf.contains(RestOptions.BIND_PORT)) {
            clusterConf.set(RestOptions.BIND_PORT, "0");
        }
        MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(clusterConf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(parallelism)
                                .setRpcServiceSharing(RpcServiceSharing.SHARED)
                                .build());
        cluster.start();
        return cluster;
    }

    private static JobExecutionResult executionResult(JobResult result, ClassLoader loader) {
        try {
            return result.toJobExecutionResult(loader);
        } catch (Exception e) {
            throw new CompletionException(e);
        }
    }

    private static JobExecutionResult awaitWithProgress(
            CompletableFuture<JobExecutionResult> future,
            Options options,
            long start,
            PrintStream progress)
            throws Exception {
        long total = options.generator().events();
        long intervalMs = Math.max(100, options.progressInterval().toMillis());
        while (true) {
            try {
                return future.get(intervalMs, java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                long done = Progress.events();
                double seconds = (System.nanoTime() - start) / 1e9;
                if (done > 0) {
                    progress.printf(
                            Locale.ROOT,
                            "[%s] %.0fs events=%d/%d (%.1f%%) rate=%.0f events/s%n",
                            options.queryId(),
                            seconds,
                            done,
                            total,
                            100.0 * done / Math.max(total, 1),
                            done / seconds);
                } else {
                    progress.printf(
                            Locale.ROOT, "[%s] %.0fs running%n", options.queryId(), seconds);
                }
            }
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getName() + ": " + root.getMessage();
    }
}
