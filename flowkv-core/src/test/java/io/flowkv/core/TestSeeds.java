package io.flowkv.core;

/**
 * Seeds of the randomized model tests. {@code -Dflowkv.seed=N} replays one; under CI (the {@code
 * CI} environment variable is set) a fixed base keeps every build reproducible; anywhere else each
 * run explores new seeds and prints them, so a failure found locally can be replayed.
 */
public final class TestSeeds {
    private static final long CI_BASE_SEED = 20261121L;

    private TestSeeds() {}

    /** The replayed seed, or null. */
    public static Long replayed() {
        return Long.getLong("flowkv.seed");
    }

    /** The first seed of a run: the replayed one, the CI base, or a fresh one. */
    public static long base() {
        return base(CI_BASE_SEED);
    }

    /** As {@link #base()}, with a test's own seed under CI. */
    public static long base(long ciSeed) {
        Long fixed = replayed();
        if (fixed != null) {
            return fixed;
        }
        return System.getenv("CI") != null ? ciSeed : System.nanoTime();
    }
}
