package io.flowkv.bench.harness;

import java.io.PrintStream;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One status line on stderr: the run in progress, its events and the ETA of the whole plan. On a
 * terminal the line is redrawn in place; otherwise a line is printed every few seconds.
 *
 * <p>The ETA prices every remaining run at its events divided by the rate its query and backend
 * reached so far (else its backend's, else {@link #PRIOR_EVENTS_PER_S}), plus the start-up and
 * shutdown time measured so far per run.
 */
final class ProgressBar {

    static final double PRIOR_EVENTS_PER_S = 150_000;
    static final double PRIOR_OVERHEAD_S = 6;

    private final PrintStream out;
    private final boolean terminal;
    private final List<RunSpec> plan;
    private final Map<String, double[]> byQueryBackend = new HashMap<>();
    private final Map<String, double[]> byBackend = new HashMap<>();
    private double overheadSum;
    private int overheadCount;
    private int current = -1;
    private RunSpec currentSpec;
    private long currentStart;
    private long lastPrinted;

    private final long pacedSeconds;

    ProgressBar(PrintStream out, boolean terminal, List<RunSpec> plan, long pacedSeconds) {
        this.pacedSeconds = pacedSeconds;
        this.out = out;
        this.terminal = terminal;
        this.plan = plan;
    }

    /** Run {@code index} of the plan starts, as {@code spec} (a latency run's resolved rate). */
    synchronized void start(int index, RunSpec spec) {
        current = index;
        currentSpec = spec;
        currentStart = System.nanoTime();
        draw(0, true);
    }

    synchronized void events(long done) {
        draw(done, false);
    }

    /**
     * A run ended after {@code wallSeconds}, {@code jobSeconds} of them in the job (NaN if failed).
     */
    synchronized void finish(RunSpec spec, double wallSeconds, double jobSeconds) {
        if (!Double.isNaN(jobSeconds) && jobSeconds > 0 && !spec.paced()) {
            add(byQueryBackend, spec.query().id() + "/" + spec.backend(), spec, jobSeconds);
            add(byBackend, spec.backend(), spec, jobSeconds);
            overheadSum += Math.max(0, wallSeconds - jobSeconds);
            overheadCount++;
        }
        if (terminal) {
            out.print("\r\033[K");
        }
    }

    private static void add(Map<String, double[]> m, String key, RunSpec spec, double seconds) {
        double[] a = m.computeIfAbsent(key, k -> new double[2]);
        a[0] += spec.plan().events();
        a[1] += seconds;
    }

    /** Expected wall seconds of {@code spec}. */
    synchronized double expectedSeconds(RunSpec spec) {
        double overheadSoFar = overheadCount == 0 ? PRIOR_OVERHEAD_S : overheadSum / overheadCount;
        if (spec.experiment().equals(Latency.EXPERIMENT)) {
            // paced: its length is the stream's, whatever the backend
            return pacedSeconds + ChildRun.START_DELAY_MS / 1000.0 + overheadSoFar;
        }
        double[] a = byQueryBackend.get(spec.query().id() + "/" + spec.backend());
        if (a == null) {
            a = byBackend.get(spec.backend());
        }
        double rate = a == null ? PRIOR_EVENTS_PER_S : a[0] / a[1];
        double overhead = overheadCount == 0 ? PRIOR_OVERHEAD_S : overheadSum / overheadCount;
        return spec.plan().events() / rate + overhead;
    }

    /** Seconds until the plan is done, the current run at {@code done} events. */
    synchronized double etaSeconds(long done) {
        double eta = 0;
        for (int i = Math.max(current + 1, 0); i < plan.size(); i++) {
            eta += expectedSeconds(plan.get(i));
        }
        if (currentSpec != null) {
            RunSpec spec = currentSpec;
            double expected = expectedSeconds(spec);
            double elapsed = (System.nanoTime() - currentStart) / 1e9;
            // The first events are slow (JIT, start-up): extrapolate from them only past 10%.
            double remaining =
                    !spec.paced() && done * 10 > spec.plan().events()
                            ? elapsed * (spec.plan().events() - done) / done
                            : expected - elapsed;
            eta += Math.max(0, remaining);
        }
        return eta;
    }

    private void draw(long done, boolean force) {
        long now = System.nanoTime();
        long minGap = terminal ? 200_000_000L : 10_000_000_000L;
        if (!force && now - lastPrinted < minGap) {
            return;
        }
        lastPrinted = now;
        RunSpec spec = currentSpec;
        long total = spec.plan().events();
        int width = 20;
        int filled = (int) Math.min(width, width * done / Math.max(1, total));
        String line =
                String.format(
                        Locale.ROOT,
                        "[%d/%d] %s [%s%s] %s/%s events, %.0fs, ETA %s",
                        current + 1,
                        plan.size(),
                        spec.label(),
                        "#".repeat(filled),
                        ".".repeat(width - filled),
                        human(done),
                        human(total),
                        (now - currentStart) / 1e9,
                        duration(etaSeconds(done)));
        if (terminal) {
            out.print("\r\033[K" + line);
        } else {
            out.println(line);
        }
        out.flush();
    }

    static String human(long n) {
        if (n >= 1_000_000) {
            return String.format(Locale.ROOT, "%.1fM", n / 1e6);
        }
        if (n >= 1_000) {
            return String.format(Locale.ROOT, "%.0fk", n / 1e3);
        }
        return Long.toString(n);
    }

    static String duration(double seconds) {
        long s = Math.round(seconds);
        if (s >= 3600) {
            return String.format(Locale.ROOT, "%dh%02dm", s / 3600, (s % 3600) / 60);
        }
        if (s >= 60) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        return s + "s";
    }
}
