package io.flowkv.nexmark;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.java.tuple.Tuple4;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Passes a query's output records through unchanged and writes, per record, the wall-clock time it
 * reached the sink and the end of its window, one {@code "<sink ms> <window end ms>"} line per
 * record into {@code <prefix>.<subtask>}. With the source paced to event time ({@link
 * NexmarkSplit#PACE_TO_EVENT_TIME}) the difference is the record's latency: how long after the
 * window's last possible event its result came out.
 */
public final class LatencyRecorder
        extends RichMapFunction<Tuple4<Long, Long, Long, Long>, Tuple4<Long, Long, Long, Long>> {
    private static final long serialVersionUID = 1L;

    private final String prefix;
    private final int windowEndField;
    private transient BufferedWriter out;

    /**
     * @param windowEndField which field of the output tuple holds the window end
     */
    public LatencyRecorder(String prefix, int windowEndField) {
        this.prefix = prefix;
        this.windowEndField = windowEndField;
    }

    /** The output field holding the window end of {@code q}'s records, or -1 if none does. */
    public static int windowEndField(Query q) {
        return switch (q) {
            case Q7, Q7_SESSION, Q11, Q11_MEDIAN, CUSTOM -> 1;
            case Q5, Q5_APPEND -> 0;
            case Q8, Q12, DEDUP, MAP_JOIN, TIMERS, COUNT -> -1;
        };
    }

    @Override
    public void open(OpenContext openContext) throws IOException {
        Path file =
                Path.of(prefix + "." + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII);
    }

    @Override
    public Tuple4<Long, Long, Long, Long> map(Tuple4<Long, Long, Long, Long> record) {
        long end = record.<Long>getField(windowEndField);
        try {
            out.write(Long.toString(System.currentTimeMillis()));
            out.write(' ');
            out.write(Long.toString(end));
            out.write('\n');
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write latency record to " + prefix, e);
        }
        return record;
    }

    @Override
    public void close() throws IOException {
        if (out != null) {
            out.close();
        }
    }
}
