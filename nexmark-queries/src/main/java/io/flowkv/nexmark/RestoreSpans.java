package io.flowkv.nexmark;

import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.traces.Span;
import org.apache.flink.traces.reporter.TraceReporter;
import org.apache.flink.traces.reporter.TraceReporterFactory;

import java.util.Map;
import java.util.Properties;

/**
 * A Flink trace reporter that keeps the last {@code JobInitialization} span of a restore: Flink's
 * own account of how long the job took to restore its state, the same for every state backend. The
 * JobManager emits the span once every subtask has initialized its state; its start is when the
 * restart began restoring the checkpoint, its end when the last subtask finished initializing, and
 * its attributes include {@code maxInitializeStateDurationMs} (the slowest subtask's state
 * restore), {@code checkpointId} and {@code fullSize} (the checkpoint's full state size).
 *
 * <p>Configured by {@link NexmarkRunner} for {@code --fail-after} runs as {@code
 * traces.reporter.restore.factory.class}; embedded runs only (the span lands in this JVM's static).
 */
public final class RestoreSpans implements TraceReporter {

    static final String NAME = "restore";

    private static volatile Span last;

    /** The last restore span seen in this JVM, or null. */
    static Span last() {
        return last;
    }

    static void reset() {
        last = null;
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedSpan(Span span) {
        if (span.getName().equals("JobInitialization")
                && span.getAttributes().containsKey("checkpointId")) {
            last = span;
        }
    }

    /** A long attribute of {@code span}, or -1 when it is missing. */
    static long attribute(Span span, String name) {
        Map<String, Object> attributes = span.getAttributes();
        Object value = attributes.get(name);
        return value instanceof Number n ? n.longValue() : -1;
    }

    /** Flink finds reporters through this factory (META-INF/services). */
    public static final class Factory implements TraceReporterFactory {
        @Override
        public TraceReporter createTraceReporter(Properties properties) {
            return new RestoreSpans();
        }
    }
}
