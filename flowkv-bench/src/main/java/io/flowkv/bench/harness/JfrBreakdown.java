package io.flowkv.bench.harness;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Counts a JFR recording's samples per {@link CpuGroup}.
 *
 * <p>{@code jdk.ExecutionSample} samples threads running Java code; all of them count. Threads in
 * native code (RocksDB's JNI, file I/O) appear only as {@code jdk.NativeMethodSample}, which also
 * samples threads that merely wait in native code (epoll, socket reads of the MiniCluster's RPC),
 * so a native sample counts only when its stack has a frame of a state group or serialization: it
 * is then work done for state access, the rest is idle.
 */
final class JfrBreakdown {

    static final String EXECUTION_SAMPLE = "jdk.ExecutionSample";
    static final String NATIVE_SAMPLE = "jdk.NativeMethodSample";

    private final EnumMap<CpuGroup, Long> counts = new EnumMap<>(CpuGroup.class);

    JfrBreakdown() {
        for (CpuGroup g : CpuGroup.values()) {
            counts.put(g, 0L);
        }
    }

    /**
     * Counts the samples of {@code recording} taken between {@code from} and {@code to} (either
     * null: unbounded).
     */
    static JfrBreakdown of(Path recording, Instant from, Instant to) throws IOException {
        JfrBreakdown b = new JfrBreakdown();
        try (RecordingFile file = new RecordingFile(recording)) {
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                String type = e.getEventType().getName();
                boolean execution = type.equals(EXECUTION_SAMPLE);
                if (!execution && !type.equals(NATIVE_SAMPLE)) {
                    continue;
                }
                if ((from != null && e.getStartTime().isBefore(from))
                        || (to != null && e.getStartTime().isAfter(to))) {
                    continue;
                }
                RecordedStackTrace stack = e.getStackTrace();
                List<String> classes = new ArrayList<>();
                if (stack != null) {
                    for (RecordedFrame f : stack.getFrames()) {
                        if (f.getMethod() != null && f.getMethod().getType() != null) {
                            classes.add(f.getMethod().getType().getName());
                        }
                    }
                }
                b.add(classes, !execution);
            }
        }
        return b;
    }

    /** Counts one sample; {@code nativeSample} for {@code jdk.NativeMethodSample}. */
    void add(List<String> classesTopFirst, boolean nativeSample) {
        CpuGroup g = CpuGroup.ofStack(classesTopFirst);
        if (nativeSample && g == CpuGroup.OTHER) {
            return;
        }
        counts.merge(g, 1L, Long::sum);
    }

    long total() {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Share of the counted samples in {@code g}; NaN without samples. */
    double share(CpuGroup g) {
        long total = total();
        return total == 0 ? Double.NaN : (double) counts.get(g) / total;
    }

    Map<CpuGroup, Long> counts() {
        return counts;
    }

    void fill(Row row) {
        row.set(Column.JFR_SAMPLES, total());
        row.set(Column.JFR_FLOWKV, share(CpuGroup.FLOWKV));
        row.set(Column.JFR_ROCKSDB, share(CpuGroup.ROCKSDB));
        row.set(Column.JFR_HEAP, share(CpuGroup.HEAP));
        row.set(Column.JFR_SERDE, share(CpuGroup.SERDE));
        row.set(Column.JFR_OTHER, share(CpuGroup.OTHER));
    }
}
