package io.flowkv.nexmark;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LatencyRecorderTest {

    static final QueryParams PARAMS =
            new QueryParams(
                    Duration.ofMillis(500),
                    Duration.ofMillis(250),
                    Duration.ofMillis(250),
                    Duration.ofMillis(10));

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @Test
    void shouldRecordEveryOutputRecordWithoutChangingTheOutput(@TempDir Path dir) throws Exception {
        // 2 s of events paced to the wall clock, starting half a second from now
        long base = System.currentTimeMillis() + 500;
        GeneratorConfig g = GeneratorConfig.of(4_000, 2_000).withBaseTime(base);
        String prefix = dir.resolve("lat").toString();

        long start = System.currentTimeMillis();
        JobExecutionResult paced = run(g, NexmarkSplit.PACE_TO_EVENT_TIME, prefix);
        long elapsed = System.currentTimeMillis() - start;
        JobExecutionResult unpaced = run(g, 0, null);

        assertThat(elapsed).as("paced run takes the stream's event time").isGreaterThan(2_000);
        assertThat((Long) paced.getAccumulatorResult(Checksum.SUM))
                .isEqualTo(unpaced.getAccumulatorResult(Checksum.SUM));
        List<long[]> records = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            for (String line : Files.readAllLines(Path.of(prefix + "." + subtask))) {
                String[] f = line.split(" ");
                records.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])});
            }
        }
        assertThat((long) records.size())
                .isEqualTo((Long) paced.getAccumulatorResult(Checksum.RECORDS));
        for (long[] r : records) {
            // a window's result cannot come before its end in a paced run (the last window may be
            // closed early by the end of input, hence the slack of one window)
            assertThat(r[0] - r[1]).isGreaterThan(-PARAMS.window().toMillis());
            assertThat(r[0] - r[1]).isLessThan(30_000);
        }
    }

    @Test
    void shouldRefuseQueriesWithoutAWindowEnd() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        assertThatThrownBy(
                        () ->
                                Queries.buildJob(
                                        env,
                                        Query.Q8,
                                        GeneratorConfig.of(10, 10),
                                        0,
                                        PARAMS,
                                        "/tmp/x"))
                .hasMessageContaining("q8");
    }

    private static JobExecutionResult run(GeneratorConfig g, double maxRate, String prefix)
            throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        Queries.buildJob(env, Query.Q7, g, maxRate, PARAMS, prefix);
        return env.execute("latency-q7");
    }
}
