package io.flowkv.core;

import java.util.SplittableRandom;

/**
 * Per-instance randomisation of maintenance thresholds, so that many store instances started
 * together do not flush or compact at the same moment (ShadowSync, Middleware'22: equal counters in
 * many LSM instances line up into CPU millibottlenecks). Each instance scales its thresholds by a
 * factor drawn once from {@code [1 - spread, 1]}: never above the configured limit, so the memory
 * budget and the MSA stay upper bounds. Deterministic for a given seed.
 */
public final class Jitter {
    /** Default spread: thresholds vary by up to 25% between instances. */
    public static final double DEFAULT_SPREAD = 0.25;

    private final SplittableRandom random;
    private final double spread;

    public Jitter(long seed, double spread) {
        Checks.checkRange("jitterSpread", spread, 0.0, true, 0.9);
        this.random = new SplittableRandom(seed);
        this.spread = spread;
    }

    public static Jitter none() {
        return new Jitter(0, 0.0);
    }

    /** A factor in {@code [1 - spread, 1]}; a fresh draw on every call. */
    public double nextFactor() {
        return spread == 0.0 ? 1.0 : 1.0 - spread * random.nextDouble();
    }

    /** {@code limit} scaled by a fresh factor, at least 1. */
    public long scale(long limit) {
        return Math.max(1, (long) (limit * nextFactor()));
    }

    /** {@code 1 + (msa - 1) * factor}: an amplification threshold in {@code (1, msa]}. */
    public double scaleAmplification(double msa) {
        return 1.0 + (msa - 1.0) * nextFactor();
    }
}
