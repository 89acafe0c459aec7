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

    /** 2 s of event time at 2,000 events/s. */
    static final GeneratorConfig GENERATOR = GeneratorConfig.of(4_000, 2_000);

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @Test
    void shouldRecordEveryOutputRecordWithoutChangingTheOutput(@TempDir Path dir) throws Exception {
        String prefix = dir.resolve("lat").toString();
        JobExecutionResult recorded = run(0, prefix);
        JobExecutionResult plain = run(0, null);

        assertThat((Long) recorded.getAccumulatorResult(Checksum.SUM))
                .isEqualTo(plain.getAccumulatorResult(Checksum.SUM));
        assertThat((long) read(prefix).size())
                .isEqualTo((Long) plain.getAccumulatorResult(Checksum.RECORDS));
    }

    @Test
    void shouldPaceEventTimeToTheWallClock(@TempDir Path dir) throws Exception {
        String prefix = dir.resolve("lat").toString();
        long start = System.currentTimeMillis();
        JobExecutionResult paced = run(NexmarkSplit.PACE_TO_EVENT_TIME, prefix);
        long elapsed = System.currentTimeMillis() - start;

        // Event 0 is due at a whole second plus the start delay after the job started, and no
        // event is emitted before its event time: the job cannot end before the last one is due.
        long lastEventOffset =
                GENERATOR.timestampOf(GENERATOR.events() - 1) - GENERATOR.timestampOf(0);
        assertThat(elapsed)
                .isGreaterThanOrEqualTo(NexmarkSource.PACE_START_DELAY_MS + lastEventOffset);
        List<long[]> records = read(prefix);
        assertThat((long) records.size())
                .isEqualTo((Long) paced.getAccumulatorResult(Checksum.RECORDS));
        for (long[] r : records) {
            // event time is wall-clock time: a result comes after its window's end, except the
            // last windows, closed by the end of the input
            assertThat(r[0] - r[1]).isGreaterThan(-PARAMS.window().toMillis());
            assertThat(r[0] - r[1]).isLessThan(30_000);
            assertThat(r[1]).isGreaterThan(start);
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

    private static List<long[]> read(String prefix) throws Exception {
        List<long[]> records = new ArrayList<>();
        for (int subtask = 0; subtask < 2; subtask++) {
            for (String line : Files.readAllLines(Path.of(prefix + "." + subtask))) {
                String[] f = line.split(" ");
                records.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])});
            }
        }
        return records;
    }

    private static JobExecutionResult run(double maxRate, String prefix) throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        Queries.buildJob(env, Query.Q7, GENERATOR, maxRate, PARAMS, prefix);
        return env.execute("latency-q7");
    }
}
