package io.flowkv.nexmark;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.util.TimeUtils;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Checkpoint cost of one NEXMark query run on an embedded MiniCluster: per completed checkpoint its
 * end-to-end duration, the largest synchronous and asynchronous part of any subtask, the bytes the
 * checkpoint wrote (Flink's "checkpointed size": for incremental checkpoints only what was not
 * already in an earlier one) and the full state size; then a summary line. For
 * docs/benchmarks/checkpoints.md via {@code scripts/checkpoint-cost.sh}.
 *
 * <pre>
 *   CheckpointCost --query q7 --backend flowkv|rocksdb|hashmap --incremental true|false
 *       [--events N] [--rate R] [--max-rate R] [--window 10s] [--interval 2s] [--parallelism P]
 *       [--set key=value]... [--label name]
 * </pre>
 *
 * {@code --set} adds a job configuration option (e.g. {@code
 * state.backend.flowkv.checkpoint-compression=NONE}); {@code --label} names the run in the summary
 * row instead of the backend.
 */
public final class CheckpointCost {
    private CheckpointCost() {}

    /** One completed checkpoint. */
    record Row(long id, long durationMs, long syncMs, long asyncMs, long bytes, long stateBytes) {}

    public static void main(String[] args) throws Exception {
        Query query = Query.Q7;
        String backend = "flowkv";
        boolean incremental = true;
        long events = 4_000_000;
        long rate = 100_000;
        double maxRate = 50_000;
        Duration window = Duration.ofSeconds(10);
        Duration interval = Duration.ofSeconds(2);
        int parallelism = 1;
        Configuration options = new Configuration();
        String label = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String value = args[i + 1];
            switch (args[i]) {
                case "--query" -> query = Query.of(value);
                case "--backend" -> backend = value.toLowerCase(Locale.ROOT);
                case "--incremental" -> incremental = Boolean.parseBoolean(value);
                case "--events" -> events = Long.parseLong(value.replace("_", ""));
                case "--rate" -> rate = Long.parseLong(value.replace("_", ""));
                case "--max-rate" -> maxRate = Double.parseDouble(value);
                case "--window" -> window = TimeUtils.parseDuration(value);
                case "--interval" -> interval = TimeUtils.parseDuration(value);
                case "--parallelism" -> parallelism = Integer.parseInt(value);
                case "--set" -> {
                    int eq = value.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException(
                                "--set takes key=value, got '" + value + "'");
                    }
                    options.setString(value.substring(0, eq), value.substring(eq + 1));
                }
                case "--label" -> label = value;
                default -> throw new IllegalArgumentException("Unknown option " + args[i]);
            }
        }
        QueryParams defaults = QueryParams.defaults();
        QueryParams params =
                new QueryParams(
                        window, defaults.slide(), defaults.gap(), defaults.outOfOrderness());

        Configuration clusterConf = new Configuration();
        clusterConf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("512m"));
        clusterConf.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 10_000);
        List<Row> rows = new ArrayList<>();
        long wallMs;
        MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(clusterConf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(parallelism)
                                .build());
        try {
            cluster.start();
            Configuration conf = new Configuration();
            conf.set(StateBackendOptions.STATE_BACKEND, backend);
            conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
            conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
            conf.set(
                    CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                    Files.createTempDirectory("checkpoint-cost").toUri().toString());
            conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, interval);
            conf.addAll(options);
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(parallelism);
            Queries.buildJob(env, query, GeneratorConfig.of(events, rate), maxRate, params);
            StreamGraph graph = env.getStreamGraph();
            graph.setJobName("checkpoint-cost-" + query.id() + "-" + backend);
            graph.setJobId(new JobID());
            long start = System.nanoTime();
            JobID job = cluster.submitJob(graph).get().getJobID();
            JobResult result = cluster.requestJobResult(job).get();
            wallMs = (System.nanoTime() - start) / 1_000_000;
            if (!result.isSuccess()) {
                throw new IllegalStateException(
                        "Job failed", result.getSerializedThrowable().orElse(null));
            }
            for (AbstractCheckpointStats stats :
                    cluster.getExecutionGraph(job)
                            .get()
                            .getCheckpointStatsSnapshot()
                            .getHistory()
                            .getCheckpoints()) {
                if (stats instanceof CompletedCheckpointStats completed
                        && !completed.getProperties().isSavepoint()) {
                    long sync = 0;
                    long async = 0;
                    for (TaskStateStats task : completed.getAllTaskStateStats()) {
                        sync =
                                Math.max(
                                        sync,
                                        task.getSummaryStats()
                                                .getSyncCheckpointDurationStats()
                                                .getMaximum());
                        async =
                                Math.max(
                                        async,
                                        task.getSummaryStats()
                                                .getAsyncCheckpointDurationStats()
                                                .getMaximum());
                    }
                    rows.add(
                            new Row(
                                    completed.getCheckpointId(),
                                    completed.getEndToEndDuration(),
                                    sync,
                                    async,
                                    completed.getCheckpointedSize(),
                                    completed.getStateSize()));
                }
            }
        } finally {
            cluster.closeAsync().get();
        }
        rows.sort(Comparator.comparingLong(Row::id));
        System.out.println("checkpoint,duration_ms,max_sync_ms,max_async_ms,bytes,state_bytes");
        for (Row r : rows) {
            System.out.printf(
                    "%d,%d,%d,%d,%d,%d%n",
                    r.id(), r.durationMs(), r.syncMs(), r.asyncMs(), r.bytes(), r.stateBytes());
        }
        // The last checkpoint is taken after the sources finished, on nearly empty state.
        List<Row> steady = rows.size() > 2 ? rows.subList(0, rows.size() - 1) : rows;
        System.out.printf(
                Locale.ROOT,
                "| %s | %s | %s | %d | %d | %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %d |%n",
                query.id(),
                label == null ? backend : label,
                incremental ? "incremental" : "full",
                steady.size(),
                median(steady, Row::durationMs),
                max(steady, Row::durationMs),
                median(steady, Row::syncMs),
                max(steady, Row::syncMs),
                mean(steady, Row::bytes) / 1e6,
                max(steady, Row::bytes) / 1e6,
                mean(steady, Row::stateBytes) / 1e6,
                sum(rows, Row::bytes) / 1e6,
                wallMs / 1000);
    }

    private interface Field {
        long of(Row row);
    }

    private static long median(List<Row> rows, Field f) {
        if (rows.isEmpty()) {
            return 0;
        }
        long[] v = rows.stream().mapToLong(f::of).sorted().toArray();
        return v[v.length / 2];
    }

    private static long max(List<Row> rows, Field f) {
        return rows.stream().mapToLong(f::of).max().orElse(0);
    }

    private static double mean(List<Row> rows, Field f) {
        return rows.stream().mapToLong(f::of).average().orElse(0);
    }

    private static double sum(List<Row> rows, Field f) {
        return rows.stream().mapToLong(f::of).sum();
    }
}
