package io.flowkv.nexmark;

import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.log.FileIo;
import io.flowkv.flink.FileIoFactory;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.nexmark.sql.SqlQueries;
import io.flowkv.nexmark.sql.SqlQuery;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.ErrorInfo;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.scheduler.exceptionhistory.RootExceptionHistoryEntry;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * A MiniCluster of two TaskManagers in the test's JVM with the means to hurt it: terminate a
 * TaskManager (and start a fresh one), make a user function throw, make the stores' disk fail
 * ({@link FaultyDisk}, a {@link FaultInjectingFileIo} the jobs' stores write through). Jobs write
 * their records into an idempotent result set per run, so a record emitted again after a restore
 * from a checkpoint is not counted twice, while a lost or a wrong record shows.
 */
final class FaultyCluster implements AutoCloseable {
    /**
     * The stores' file I/O of every job this JVM runs ({@code
     * state.backend.flowkv.file-io-factory}): the disk of the cluster now open. Static because
     * Flink instantiates the factory in the TaskManagers, which run in this JVM.
     */
    public static final class FaultyDisk implements FileIoFactory {
        static volatile FileIo current = FileIo.DEFAULT;

        @Override
        public FileIo create() {
            return current;
        }
    }

    static final int TASK_MANAGERS = 2;

    /** Far above a job's normal run time (seconds), and short enough to fail a stuck test. */
    static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

    /** One slot per TaskManager: a job of parallelism 2 has tasks on both, so either can be hit. */
    static final int SLOTS = 1;

    /** Records per run id: what the sinks of that run's jobs emitted. */
    private static final Map<String, Set<String>> RESULTS = new ConcurrentHashMap<>();

    /** Armed: the next event through {@link FaultyMap} throws. */
    static final AtomicBoolean USER_FAULT = new AtomicBoolean();

    final MiniCluster cluster;
    final FaultInjectingFileIo disk = new FaultInjectingFileIo();
    private int terminated;

    FaultyCluster() throws Exception {
        this(null);
    }

    /**
     * With {@code localStateRoot} not null the TaskManagers keep task-local copies of their
     * checkpoints there and restore from them ({@code execution.state-recovery.from-local}).
     */
    FaultyCluster(Path localStateRoot) throws Exception {
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.ofMebiBytes(128));
        if (localStateRoot != null) {
            conf.set(StateRecoveryOptions.LOCAL_RECOVERY, true);
            conf.set(
                    CheckpointingOptions.LOCAL_RECOVERY_TASK_MANAGER_STATE_ROOT_DIRS,
                    localStateRoot.toString());
            // Every uploaded state file goes to the checkpoint directory, none inline in the
            // checkpoint's metadata (as with real state sizes).
            conf.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        }
        cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(TASK_MANAGERS)
                                .setNumSlotsPerTaskManager(SLOTS)
                                .build());
        cluster.start();
        FaultyDisk.current = disk;
    }

    @Override
    public void close() throws IOException {
        FaultyDisk.current = FileIo.DEFAULT;
        try {
            cluster.closeAsync().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while closing the MiniCluster", e);
        } catch (ExecutionException e) {
            throw new IOException("Could not close the MiniCluster", e.getCause());
        }
    }

    // ------------------------------------------------------------------ jobs

    /** What a job runs. */
    /** A {@link JobSpec#backend()} for FlowKV with its timers stored by FlowKV, not on the heap. */
    static final String FLOWKV_STORED_TIMERS = "flowkv+stored-timers";

    /** Timers a FlowKV queue holds on the heap here before it moves into the store. */
    static final long AUTO_TIMERS_HEAP_LIMIT = 100;

    /** How a job checkpoints: Flink's incremental switch and, when it is off, FlowKV's format. */
    enum Checkpoints {
        INCREMENTAL(true, FlowKVOptions.FullCheckpointFormat.NATIVE),
        FULL(false, FlowKVOptions.FullCheckpointFormat.NATIVE),
        FULL_CANONICAL(false, FlowKVOptions.FullCheckpointFormat.CANONICAL);

        final boolean incremental;
        final FlowKVOptions.FullCheckpointFormat fullFormat;

        Checkpoints(boolean incremental, FlowKVOptions.FullCheckpointFormat fullFormat) {
            this.incremental = incremental;
            this.fullFormat = fullFormat;
        }
    }

    record JobSpec(
            Query query,
            GeneratorConfig generator,
            QueryParams params,
            double eventsPerSecond,
            String backend,
            Checkpoints checkpointing,
            int parallelism,
            Path checkpoints,
            String runId) {}

    JobID submit(JobSpec spec, String restorePath) throws Exception {
        StreamExecutionEnvironment env = environment(spec);
        Queries.build(spec.query(), events(env, spec), spec.params())
                .sinkTo(new ResultSink(spec.runId()))
                .uid("results")
                .name("results");
        return submit(env, spec, restorePath);
    }

    /**
     * Submits {@code query} from the SQL suite over the same faulty source; its changelog goes to a
     * {@link ChangelogResultSink} under {@code spec.runId()} ({@code spec.query()} is unused).
     */
    JobID submitSql(SqlQuery query, JobSpec spec) throws Exception {
        StreamExecutionEnvironment env = environment(spec);
        StreamTableEnvironment tEnv = SqlQueries.tables(env, events(env, spec));
        tEnv.toChangelogStream(tEnv.sqlQuery(SqlQueries.sql(query)))
                .sinkTo(new ChangelogResultSink(spec.runId(), query.upsertKey()))
                .uid("results")
                .name("results");
        return submit(env, spec, null);
    }

    private JobID submit(StreamExecutionEnvironment env, JobSpec spec, String restorePath)
            throws Exception {
        StreamGraph graph = env.getStreamGraph();
        graph.setJobName(spec.runId());
        graph.setJobId(new JobID());
        if (restorePath != null) {
            graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(restorePath, false));
        }
        return cluster.submitJob(graph).get().getJobID();
    }

    private static StreamExecutionEnvironment environment(JobSpec spec) {
        Configuration conf = new Configuration();
        conf.set(FlowKVOptions.FILE_IO_FACTORY, FaultyDisk.class.getName());
        if (spec.backend().equals(FLOWKV_STORED_TIMERS)) {
            conf.set(StateBackendOptions.STATE_BACKEND, "flowkv");
            conf.set(FlowKVOptions.TIMER_SERVICE, FlowKVOptions.TimerService.FLOWKV);
        } else {
            conf.set(StateBackendOptions.STATE_BACKEND, spec.backend());
            // timer-service AUTO (the default) with a low bound: the window and user timer queues
            // move into the store during each attempt, and every restore starts them on the heap
            // again.
            conf.set(FlowKVOptions.TIMER_HEAP_LIMIT, AUTO_TIMERS_HEAP_LIMIT);
        }
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, spec.checkpointing().incremental);
        conf.set(FlowKVOptions.FULL_CHECKPOINT_FORMAT, spec.checkpointing().fullFormat);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, spec.checkpoints().toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofSeconds(1));
        conf.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1000);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(spec.parallelism());
        return env;
    }

    private static DataStream<Event> events(StreamExecutionEnvironment env, JobSpec spec) {
        // The source stays at one reader: a reader must keep its one split for life, so the
        // source is not rescaled with the keyed operators.
        WatermarkStrategy<Event> watermarks =
                WatermarkStrategy.<Event>forBoundedOutOfOrderness(spec.params().outOfOrderness())
                        .withTimestampAssigner((event, previous) -> event.dateTime());
        return env.fromSource(
                        new NexmarkSource(spec.generator(), spec.eventsPerSecond()),
                        watermarks,
                        "nexmark-source")
                .uid("nexmark-source")
                .setParallelism(1)
                .map(new FaultyMap())
                .returns(Event.class)
                .uid("faulty-map")
                .setParallelism(1);
    }

    /** The job's result; a job still running after {@code JOB_TIMEOUT} is cancelled, failing. */
    JobResult await(JobID job) throws Exception {
        try {
            return cluster.requestJobResult(job).get(JOB_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            List<String> failures = failures(job);
            cancel(job);
            throw new AssertionError(
                    "Job "
                            + job
                            + " did not finish within "
                            + JOB_TIMEOUT
                            + "; its last failures: "
                            + failures.subList(Math.max(0, failures.size() - 2), failures.size()),
                    e);
        }
    }

    static Set<String> results(String runId) {
        return RESULTS.getOrDefault(runId, Set.of());
    }

    static Set<String> format(List<long[]> records) {
        Set<String> out = ConcurrentHashMap.newKeySet();
        for (long[] r : records) {
            out.add(r[0] + "," + r[1] + "," + r[2] + "," + r[3]);
        }
        return out;
    }

    // ------------------------------------------------------------------ observing

    JobStatus status(JobID job) {
        try {
            return cluster.getJobStatus(job).get();
        } catch (Exception e) {
            throw new IllegalStateException("Could not get the status of job " + job, e);
        }
    }

    boolean finished(JobID job) {
        return status(job).isGloballyTerminalState();
    }

    private CheckpointStatsSnapshot checkpointStats(JobID job) {
        try {
            return cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot();
        } catch (Exception e) {
            throw new IllegalStateException("Could not get the checkpoints of job " + job, e);
        }
    }

    long completedCheckpoints(JobID job) {
        CheckpointStatsSnapshot stats = checkpointStats(job);
        return stats == null ? 0 : stats.getCounts().getNumberOfCompletedCheckpoints();
    }

    /** How often the job restored from a checkpoint (as opposed to starting from scratch). */
    long restoredCheckpoints(JobID job) {
        CheckpointStatsSnapshot stats = checkpointStats(job);
        return stats == null ? 0 : stats.getCounts().getNumberOfRestoredCheckpoints();
    }

    /** How often the job failed (root failures; a failure hitting several tasks counts once). */
    int rootFailures(JobID job) {
        try {
            int n = 0;
            for (RootExceptionHistoryEntry ignored :
                    cluster.getExecutionGraphInfo(job).get().getExceptionHistory()) {
                n++;
            }
            return n;
        } catch (Exception e) {
            throw new IllegalStateException("Could not get the failures of job " + job, e);
        }
    }

    String latestCheckpointPath(JobID job) throws Exception {
        AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
        CompletedCheckpointStats latest =
                graph.getCheckpointStatsSnapshot().getHistory().getLatestCompletedCheckpoint();
        return latest == null ? null : latest.getExternalPath();
    }

    /** Every failure the job went through, as strings with their causes. */
    List<String> failures(JobID job) throws Exception {
        List<String> out = new ArrayList<>();
        for (RootExceptionHistoryEntry entry :
                cluster.getExecutionGraphInfo(job).get().getExceptionHistory()) {
            out.add(entry.getExceptionAsString());
            for (ErrorInfo concurrent : entry.getConcurrentExceptions()) {
                out.add(concurrent.getExceptionAsString());
            }
        }
        return out;
    }

    /** Waits up to {@code timeout} for {@code condition}; false if it never held. */
    static boolean waitFor(BooleanSupplier condition, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(50);
        }
        return condition.getAsBoolean();
    }

    /** Waits until the job has completed {@code n} checkpoints more than {@code before}. */
    boolean awaitCheckpoints(JobID job, long before, long n, Duration timeout)
            throws InterruptedException {
        return waitFor(() -> finished(job) || completedCheckpoints(job) >= before + n, timeout);
    }

    String stopWithCanonicalSavepoint(JobID job, Path directory) throws Exception {
        return cluster.stopWithSavepoint(
                        job, directory.toUri().toString(), false, SavepointFormatType.CANONICAL)
                .get();
    }

    void cancel(JobID job) throws Exception {
        cluster.cancelJob(job).get();
        waitFor(() -> finished(job), Duration.ofSeconds(30));
    }

    // ------------------------------------------------------------------ faults

    /** Terminates the oldest live TaskManager and starts a fresh one in its place. */
    void terminateTaskManager() throws Exception {
        cluster.terminateTaskManager(terminated++).get();
        cluster.startTaskManager();
    }

    /** An identity map that throws once when {@link #USER_FAULT} is armed. */
    static final class FaultyMap implements MapFunction<Event, Event> {
        private static final long serialVersionUID = 1L;

        @Override
        public Event map(Event event) {
            if (USER_FAULT.compareAndSet(true, false)) {
                throw new IllegalStateException("Injected failure in a user function");
            }
            return event;
        }
    }

    /** Adds every record to its run's result set (idempotent: replays change nothing). */
    static final class ResultSink implements Sink<Tuple4<Long, Long, Long, Long>> {
        private static final long serialVersionUID = 1L;
        private final String runId;

        ResultSink(String runId) {
            this.runId = runId;
        }

        @Override
        public SinkWriter<Tuple4<Long, Long, Long, Long>> createWriter(WriterInitContext context) {
            Set<String> results =
                    RESULTS.computeIfAbsent(runId, id -> ConcurrentHashMap.newKeySet());
            return new SinkWriter<>() {
                @Override
                public void write(Tuple4<Long, Long, Long, Long> r, Context context) {
                    results.add(r.f0 + "," + r.f1 + "," + r.f2 + "," + r.f3);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
