package io.flowkv.nexmark;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NexmarkRunnerTest {

    @Test
    void shouldRestartARestoreRunOnceAndTolerateLaterCheckpointFailures() {
        Configuration conf = new Configuration();
        NexmarkRunner.configureRestoreRun(conf);
        assertThat(conf.get(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS))
                .isEqualTo(1);
        assertThat(conf.get(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER))
                .isEqualTo(Integer.MAX_VALUE);
        // What --conf set stays.
        Configuration given =
                Configuration.fromMap(
                        Map.of(
                                "execution.checkpointing.tolerable-failed-checkpoints", "2",
                                "restart-strategy.type", "none"));
        NexmarkRunner.configureRestoreRun(given);
        assertThat(given.get(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER)).isEqualTo(2);
        assertThat(given.get(RestartStrategyOptions.RESTART_STRATEGY)).isEqualTo("none");
    }

    @Test
    void shouldParseEveryOption() {
        NexmarkRunner.Options o =
                NexmarkRunner.Options.parse(
                        new String[] {
                            "--query",
                            "q7-session",
                            "--backend",
                            "FlowKV",
                            "--events",
                            "1_000",
                            "--rate",
                            "500",
                            "--max-rate",
                            "2000",
                            "--window",
                            "2s",
                            "--slide",
                            "1s",
                            "--gap",
                            "300ms",
                            "--out-of-orderness",
                            "5ms",
                            "--parallelism",
                            "2",
                            "--checkpoint-interval",
                            "10s",
                            "--managed-memory",
                            "1g"
                        });
        assertThat(o.query()).isEqualTo(Query.Q7_SESSION);
        assertThat(o.backend()).isEqualTo("flowkv");
        assertThat(o.generator().events()).isEqualTo(1_000);
        assertThat(o.generator().eventRate()).isEqualTo(500);
        assertThat(o.maxRate()).isEqualTo(2000);
        assertThat(o.params())
                .isEqualTo(
                        new QueryParams(
                                Duration.ofSeconds(2),
                                Duration.ofSeconds(1),
                                Duration.ofMillis(300),
                                Duration.ofMillis(5)));
        assertThat(o.parallelism()).isEqualTo(2);
        assertThat(o.checkpointInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.managedMemory()).isEqualTo("1g");
    }

    @Test
    void shouldCollectConfEntries() {
        NexmarkRunner.Options o =
                NexmarkRunner.Options.parse(
                        new String[] {
                            "q7",
                            "--conf",
                            "state.backend.flowkv.read-batch-ratio=0.1",
                            "--conf",
                            "io.tmp.dirs = /tmp/x=y"
                        });
        assertThat(o.conf())
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of(
                                "state.backend.flowkv.read-batch-ratio", "0.1",
                                "io.tmp.dirs", "/tmp/x=y"));
        assertThat(NexmarkRunner.Options.parse(new String[] {"q7"}).conf()).isEmpty();
        assertThatThrownBy(() -> NexmarkRunner.Options.parse(new String[] {"q7", "--conf", "x"}))
                .hasMessageContaining("key=value");
    }

    @Test
    void shouldLeaveLatencyRecordingOffUnlessAsked() {
        NexmarkRunner.Options plain = NexmarkRunner.Options.parse(new String[] {"q7"});
        assertThat(plain.paceToEventTime()).isFalse();
        assertThat(plain.latencyOut()).isNull();

        NexmarkRunner.Options o =
                NexmarkRunner.Options.parse(
                        new String[] {"q11", "--pace-to-event-time", "--latency-out", "/tmp/lat"});
        assertThat(o.paceToEventTime()).isTrue();
        assertThat(o.latencyOut()).isEqualTo("/tmp/lat");
    }

    @Test
    void shouldTakeTheQueryAsFirstArgument() {
        assertThat(NexmarkRunner.Options.parse(new String[] {"q11-median"}).query())
                .isEqualTo(Query.Q11_MEDIAN);
    }

    @Test
    void shouldRejectUnknownQueriesAndOptions() {
        assertThatThrownBy(() -> NexmarkRunner.Options.parse(new String[] {"q99"}))
                .hasMessageContaining("q99")
                .hasMessageContaining("q5|q5-append|q7|q7-session|q8|q11|q11-median|q12");
        assertThatThrownBy(() -> NexmarkRunner.Options.parse(new String[] {"q7", "--bogus", "1"}))
                .hasMessageContaining("--bogus");
    }

    @Test
    void shouldPrintTheResultLineInTheDocumentedFormat() {
        var result = new NexmarkRunner.Result(Query.Q5_APPEND, "rocksdb", 1000, 2.0, 17, 0xabcL);
        assertThat(result.line())
                .isEqualTo(
                        "query=q5-append backend=rocksdb events=1000 seconds=2.000"
                                + " events_per_s=500 output_records=17 checksum=0000000000000abc");
    }

    @Test
    void shouldRejectFailAfterWithoutCheckpointsOrBeyondTheEvents() {
        assertThatThrownBy(
                        () ->
                                NexmarkRunner.Options.parse(
                                        new String[] {"q7", "--fail-after", "1000"}))
                .hasMessageContaining("--checkpoint-interval");
        assertThatThrownBy(
                        () ->
                                NexmarkRunner.Options.parse(
                                        new String[] {
                                            "q7",
                                            "--events",
                                            "1000",
                                            "--checkpoint-interval",
                                            "1s",
                                            "--fail-after",
                                            "1000"
                                        }))
                .hasMessageContaining("--fail-after must be between 1 and the events - 1");
        assertThatThrownBy(
                        () ->
                                NexmarkRunner.Options.parse(
                                        new String[] {
                                            "sql-q5",
                                            "--checkpoint-interval",
                                            "1s",
                                            "--fail-after",
                                            "10"
                                        }))
                .hasMessageContaining("DataStream queries");
    }

    /**
     * A run with {@code --fail-after} fails once, restores from a checkpoint and reports it, and
     * its result is the result of the run without the failure (Q7's one window fires at the end,
     * after the restore).
     */
    @Test
    void shouldFailOnceRestoreAndReportTheRestore() throws Exception {
        String[] args = {
            "q7",
            "--backend",
            "flowkv",
            "--events",
            "400000",
            "--window",
            "10s",
            "--max-rate",
            "100000",
            "--checkpoint-interval",
            "300ms",
            "--managed-memory",
            "64m"
        };
        java.io.PrintStream quiet =
                new java.io.PrintStream(java.io.OutputStream.nullOutputStream());
        NexmarkRunner.Result plain = NexmarkRunner.run(NexmarkRunner.Options.parse(args), quiet);
        assertThat(plain.recovery()).isEmpty();

        String[] failing = java.util.Arrays.copyOf(args, args.length + 2);
        failing[args.length] = "--fail-after";
        failing[args.length + 1] = "200000";
        NexmarkRunner.Result failed =
                NexmarkRunner.run(NexmarkRunner.Options.parse(failing), quiet);
        assertThat(failed.outputRecords()).isEqualTo(plain.outputRecords()).isPositive();
        assertThat(failed.checksum()).isEqualTo(plain.checksum());
        java.util.Map<String, Long> fields = new java.util.HashMap<>();
        for (String kv : failed.recovery().trim().split(" ")) {
            String[] p = kv.split("=");
            fields.put(p[0], (long) Double.parseDouble(p[1]));
        }
        assertThat(fields.get("failed_at_events")).isBetween(200_000L, 400_000L);
        assertThat(fields.get("restored_checkpoint")).isPositive();
        assertThat(fields.get("restored_bytes")).isPositive();
        assertThat(fields.get("restore_ms")).isGreaterThanOrEqualTo(fields.get("init_state_ms"));
        assertThat(fields.get("init_state_ms")).isNotNegative();
        assertThat(fields.get("rate_before")).isPositive();
        assertThat(failed.line()).endsWith(failed.recovery());
    }
}
