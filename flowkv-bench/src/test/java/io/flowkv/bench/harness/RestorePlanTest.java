package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;

import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RestorePlanTest {

    @Test
    void shouldFailEachRunWhenItHoldsTheStateFactorTimesManagedMemory() {
        BenchOptions o =
                BenchOptions.parse(
                        new String[] {
                            "--restore",
                            "--scale",
                            "large",
                            "--state-factor",
                            "10",
                            "--queries",
                            "q7,q5,q8",
                            "--backends",
                            "flowkv,rocksdb",
                            "--reps",
                            "2"
                        });
        MemoryBudget budget = MemoryBudget.forProcessSize("2g", "128m");
        List<RunSpec> runs = Plans.of("restore", o, budget);
        // Q5's windows fire throughout the run: not a restore query.
        assertThat(runs).hasSize(2 * 2 * 2);
        assertThat(runs.stream().map(r -> r.query().id()).distinct()).containsExactly("q7", "q8");
        // Interleaved: every query and backend of rep 1 before rep 2.
        assertThat(runs.subList(0, 4)).allMatch(r -> r.rep() == 1);
        for (RunSpec r : runs) {
            assertThat(r.experiment()).isEqualTo("restore");
            assertThat(r.setting()).isEqualTo("state-factor=10");
            assertThat(r.checkpointIntervalMs()).isEqualTo(Plans.RESTORE_CHECKPOINT_MS);
            assertThat(r.failAfterEvents()).isEqualTo((long) (r.plan().events() * 0.5));
            // Planned so that half the run holds ten times managed memory.
            double atFailure = 0.5 * r.plan().stateEstimateBytes() / budget.managedBytes();
            assertThat(atFailure).isBetween(9.0, 11.5);
        }
        ChildRun.Env env =
                new ChildRun.Env(
                        "java", "cp", "", budget, Path.of("/tmp/runs"), false, false, 60, 600, 0);
        List<String> cmd = ChildRun.command(runs.get(0), env, Path.of("/tmp/runs/x"));
        int i = cmd.indexOf("--fail-after");
        assertThat(i).isPositive();
        assertThat(cmd.get(i + 1)).isEqualTo(Long.toString(runs.get(0).failAfterEvents()));
        assertThat(cmd).contains("--checkpoint-interval", "10000ms");
    }

    @Test
    void shouldFailAtTheShareFailAtGives() {
        RunSpec late = q8RestoreRun("--fail-at", "0.8");
        RunSpec half = q8RestoreRun();
        assertThat(late.failAfterEvents()).isEqualTo((long) (late.plan().events() * 0.8));
        // The same state when each fails; the earlier failure leaves more events after it.
        assertThat((double) late.failAfterEvents())
                .isCloseTo(half.failAfterEvents(), Percentage.withPercentage(2));
        assertThat(half.plan().events() - half.failAfterEvents())
                .isGreaterThan(3 * (late.plan().events() - late.failAfterEvents()));
    }

    /** The one restore run of q8 on FlowKV, with {@code extra} options. */
    private static RunSpec q8RestoreRun(String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--restore",
                                "--scale",
                                "large",
                                "--queries",
                                "q8",
                                "--backends",
                                "flowkv",
                                "--reps",
                                "1"));
        args.addAll(List.of(extra));
        List<RunSpec> runs =
                Plans.of(
                        "restore",
                        BenchOptions.parse(args.toArray(new String[0])),
                        MemoryBudget.forProcessSize("2g", "128m"));
        assertThat(runs).hasSize(1);
        return runs.get(0);
    }

    @Test
    void shouldRefuseAFailAtOutsideTheRun() {
        for (String v : new String[] {"0", "1", "1.5", "-0.2", "half"}) {
            assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--restore", "--fail-at", v}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--fail-at");
        }
    }

    @Test
    void shouldRefuseTheSmallScale() {
        BenchOptions o = BenchOptions.parse(new String[] {"--restore"});
        assertThatThrownBy(() -> Plans.of("restore", o, MemoryBudget.forProcessSize("2g")))
                .hasMessageContaining("--restore needs --scale large");
    }

    @Test
    void shouldReportRestoreTimesPerQueryAndBackend(@TempDir Path out) throws Exception {
        List<Row> rows = new ArrayList<>();
        for (int rep = 1; rep <= 3; rep++) {
            rows.add(restore("flowkv", rep, 400 + rep * 10, 600));
            rows.add(restore("rocksdb", rep, 800 + rep * 10, 900));
        }
        Path csv = out.resolve(Bench.CSV_DIR);
        Csv.write(csv.resolve("restore.csv"), rows);
        List<Row> read = Report.readAll(csv);
        assertThat(read).hasSize(6);
        assertThat(read.get(0).getLong(Column.RESTORE_MS)).isEqualTo(410);
        Report.write(out, read, Summary.checksumMismatches(read));
        String md = Files.readString(out.resolve("README.md"));
        assertThat(md)
                .contains("## Restore after a failure")
                .contains("at 50% of the events (`--fail-at`)")
                .contains(
                        "| q7 | state-factor=4 | 500 MB | flowkv | 420 (410–430) | 300 (300–300)"
                                + " | 600 (600–600) | 200 (200–200) | 1.95x |")
                .contains("| q7 | state-factor=4 | 500 MB | rocksdb | 820 (810–830) |");
    }

    private static Row restore(String backend, int rep, long restoreMs, long steadyMs) {
        return SummaryTest.run("restore", Query.Q7.id(), backend, rep, Row.OK, 100_000, "c")
                .set(Column.SETTING, "state-factor=4")
                .set(Column.FAILED_AT_EVENTS, 500)
                .set(Column.RESTORED_BYTES, 500_000_000)
                .set(Column.RESTORE_MS, restoreMs)
                .set(Column.INIT_STATE_MS, 300)
                .set(Column.STEADY_MS, steadyMs)
                .set(Column.RATE_BEFORE, 200_000);
    }
}
