package io.flowkv.bench.harness;

import java.util.Arrays;
import java.util.List;

/** Order statistics and means over measured values. */
final class Stats {

    private Stats() {}

    static double median(List<Double> values) {
        return percentile(values, 50);
    }

    /**
     * The {@code p}-th percentile by the nearest-rank method: the smallest value with at least
     * {@code p}% of the values at or below it. The median of an even count is the mean of the two
     * middle values instead, so that the median of two runs is not biased to the slower.
     */
    static double percentile(List<Double> values, double p) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("percentile of no values");
        }
        if (p < 0 || p > 100) {
            throw new IllegalArgumentException("percentile must be in [0, 100], got " + p);
        }
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        int n = sorted.length;
        if (p == 50 && n % 2 == 0) {
            return (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }
        // the epsilon keeps 99.9% of 1000 at rank 999 despite binary rounding
        int rank = (int) Math.ceil(p / 100 * n - 1e-9);
        return sorted[Math.max(0, Math.min(n - 1, rank - 1))];
    }

    static double min(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
    }

    static double max(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
    }

    /** Geometric mean of positive values. */
    static double geomean(List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("geomean of no values");
        }
        double logSum = 0;
        for (double v : values) {
            if (!(v > 0)) {
                throw new IllegalArgumentException("geomean needs positive values, got " + v);
            }
            logSum += Math.log(v);
        }
        return Math.exp(logSum / values.size());
    }
}
