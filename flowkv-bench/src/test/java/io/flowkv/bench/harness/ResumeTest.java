package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ResumeTest {

    private static final long MANAGED = 635L << 20;

    private static List<RunSpec> plan(String... args) {
        BenchOptions o = BenchOptions.parse(args);
        return Plans.throughput(o, MemoryBudget.forProcessSize(o.memory()));
    }

    private static Row measured(RunSpec spec, String status) {
        return spec.baseRow(MANAGED)
                .set(Column.STATUS, status)
                .set(Column.EVENTS_PER_S, 123_456)
                .set(Column.CHECKSUM, "00ff");
    }

    @Test
    void shouldRunOnlyWhatTheCsvDoesNotHold() throws Exception {
        List<RunSpec> all =
                plan("--scale", "large", "--reps", "3", "--backends", "flowkv,rocksdb,hashmap");
        assertThat(all).hasSize(8 * 3 * 3);
        // A first invocation finished rep 1 and part of rep 2, a HashMap run failing.
        List<Row> done = new ArrayList<>();
        for (RunSpec s : all.subList(0, 30)) {
            done.add(measured(s, s.backend().equals("hashmap") ? "failed: OOM" : Row.OK));
        }
        // Through the CSV, as the next invocation reads it.
        List<Row> read = Csv.parse(Csv.format(done));

        List<RunSpec> missing = Resume.missing(all, read, MANAGED);
        assertThat(missing).isEqualTo(all.subList(30, all.size()));
        assertThat(Resume.missing(all, List.of(), MANAGED)).isEqualTo(all);
    }

    @Test
    void shouldNotTakeARunOfAnotherSizeOrBudgetForThePlannedOne() {
        RunSpec large = plan("--scale", "large", "--queries", "q7", "--backends", "flowkv").get(0);
        RunSpec small = plan("--scale", "small", "--queries", "q7", "--backends", "flowkv").get(0);
        assertThat(Resume.missing(List.of(large), List.of(measured(small, Row.OK)), MANAGED))
                .containsExactly(large);
        Row otherBudget = large.baseRow(MANAGED / 2).set(Column.STATUS, Row.OK);
        assertThat(Resume.missing(List.of(large), List.of(otherBudget), MANAGED))
                .containsExactly(large);
        Row otherRep = measured(large, Row.OK).set(Column.REP, 2);
        assertThat(Resume.missing(List.of(large), List.of(otherRep), MANAGED))
                .containsExactly(large);
        assertThat(Resume.missing(List.of(large), List.of(measured(large, Row.OK)), MANAGED))
                .isEmpty();
    }
}
