package io.flowkv.flink;

/** Seeds of the randomized model tests: replayable, fixed under CI, fresh otherwise. */
public final class TestSeeds {
    private TestSeeds() {}

    /**
     * {@code -Dflowkv.seed=N} if given; else {@code ciSeed} when the {@code CI} environment
     * variable is set, so that CI runs are repeatable; else a new seed each run.
     */
    public static long seed(long ciSeed) {
        Long replay = Long.getLong("flowkv.seed");
        if (replay != null) {
            return replay;
        }
        return System.getenv("CI") != null ? ciSeed : System.nanoTime();
    }
}
