package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class LatencyTest {

    static final long BASE = 1_000_000;

    /** One window per second for {@code seconds}, each result {@code latency(s)} ms late. */
    static List<long[]> records(int seconds, java.util.function.IntToLongFunction latency) {
        List<long[]> out = new ArrayList<>();
        for (int s = 1; s <= seconds; s++) {
            long end = BASE + s * 1000L;
            for (int k = 0; k < 10; k++) {
                out.add(new long[] {end + latency.applyAsLong(s) + k, end});
            }
        }
        return out;
    }

    @Test
    void shouldSkipTheWarmUpAndComputePercentiles() {
        // the first 15 s (a quarter of 60 s) are slow and left out
        Latency.Analysis a =
                Latency.analyze(
                        records(60, s -> s < 15 ? 5000 : 100), BASE, 60_000, 99_000, 100_000);
        assertThat(a.p50()).isBetween(100.0, 109.0);
        assertThat(a.p999()).isEqualTo(109.0);
        assertThat(a.sustained()).isTrue();
        assertThat(a.timeline()).isNotEmpty();
        assertThat(a.timeline().get(a.timeline().size() - 1).p999()).isEqualTo(109.0);
    }

    @Test
    void shouldMarkGrowingLatencyOrALowRateAsNotSustained() {
        Latency.Analysis growing =
                Latency.analyze(records(60, s -> 200L * s), BASE, 60_000, 100_000, 100_000);
        assertThat(growing.sustained()).isFalse();
        Latency.Analysis slow =
                Latency.analyze(records(60, s -> 100), BASE, 60_000, 90_000, 100_000);
        assertThat(slow.sustained()).isFalse();
        Latency.Analysis empty = Latency.analyze(List.of(), BASE, 60_000, 100_000, 100_000);
        assertThat(empty.p50()).isNaN();
        assertThat(empty.sustained()).isFalse();
    }

    @Test
    void shouldLeaveOutWindowsClosedByTheEndOfInput() {
        List<long[]> r = new ArrayList<>(records(60, s -> 100));
        // a session closed by the end of input before its end: negative latency, left out
        r.add(new long[] {BASE + 61_000, BASE + 70_000});
        assertThat(Latency.analyze(r, BASE, 60_000, 100_000, 100_000).p50()).isPositive();
    }

    @Test
    void shouldMeasureTheAchievedRateAfterTheWarmUp() {
        List<long[]> progress =
                List.of(
                        new long[] {BASE - 1000, 0},
                        new long[] {BASE + 1000, 500_000},
                        new long[] {BASE + 2000, 600_000},
                        new long[] {BASE + 4000, 800_000},
                        new long[] {BASE + 5000, 900_000},
                        new long[] {BASE + 9000, 900_000});
        assertThat(Latency.achievedRate(progress, BASE, 900_000)).isEqualTo(100_000.0);
        assertThat(Latency.achievedRate(progress, BASE + 4500, 900_000)).isNaN();
    }

    @Test
    void shouldResolveRatesFromTheMaximum() {
        MemoryBudget b = MemoryBudget.forProcessSize("2g");
        BenchOptions o =
                BenchOptions.parse(
                        new String[] {
                            "--latency", "--max-rates", "q7=200000", "--backends", "flowkv,rocksdb"
                        });
        assertThat(o.maxRates()).isEqualTo(Map.of("q7", 200000.0));
        List<RunSpec> calibration = Latency.calibration(o, b);
        assertThat(calibration)
                .extracting(RunSpec::query)
                .containsExactly(Query.Q11_MEDIAN, Query.Q11);
        List<RunSpec> paced = Latency.paced(o, b);
        assertThat(paced).hasSize(3 * 4 * 2);
        RunSpec r = Latency.resolve(paced.get(2), 200_000, 30);
        assertThat(r.setting()).isEqualTo("rate=50%");
        assertThat(r.targetRate()).isEqualTo(100_000);
        assertThat(r.plan().events()).isEqualTo(3_000_000);
        assertThat(r.plan().eventRate()).isEqualTo(100_000);
        assertThat(r.paced()).isTrue();
    }
}
