package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class StatsTest {

    @Test
    void shouldTakeTheMiddleValueOrTheMeanOfTheTwoMiddleOnes() {
        assertThat(Stats.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(Stats.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
        assertThat(Stats.median(List.of(7.0))).isEqualTo(7.0);
    }

    @Test
    void shouldUseNearestRankPercentiles() {
        List<Double> v = new java.util.ArrayList<>();
        for (int i = 1; i <= 1000; i++) {
            v.add((double) i);
        }
        assertThat(Stats.percentile(v, 95)).isEqualTo(950.0);
        assertThat(Stats.percentile(v, 99.9)).isEqualTo(999.0);
        assertThat(Stats.percentile(v, 100)).isEqualTo(1000.0);
        assertThat(Stats.percentile(v, 0)).isEqualTo(1.0);
        assertThatThrownBy(() -> Stats.percentile(v, 101)).hasMessageContaining("[0, 100]");
        assertThatThrownBy(() -> Stats.percentile(List.of(), 50)).hasMessageContaining("no values");
    }

    @Test
    void shouldComputeGeometricMeans() {
        assertThat(Stats.geomean(List.of(2.0, 8.0))).isCloseTo(4.0, within(1e-12));
        assertThat(Stats.geomean(List.of(1.5))).isCloseTo(1.5, within(1e-12));
        assertThat(Stats.min(List.of(2.0, 0.5, 3.0))).isEqualTo(0.5);
        assertThat(Stats.max(List.of(2.0, 0.5, 3.0))).isEqualTo(3.0);
        assertThatThrownBy(() -> Stats.geomean(List.of(1.0, 0.0))).hasMessageContaining("positive");
    }
}
