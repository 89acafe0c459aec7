package io.flowkv.bench;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.queue.SortedQueueStore;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Timer registrations against FlowKV's stored timer queue ({@link SortedQueueStore}, {@code
 * timer-service: FLOWKV}, and {@code AUTO} past its heap limit), shaped like q5's sliding windows:
 * every event registers the end-of-window timer of each of the {@code windowsPerEvent} windows it
 * falls in, for a key drawn from {@code keys} (a quarter of the events from a hot tenth of them),
 * with event time advancing one millisecond per event; the timers of windows that ended are polled
 * as the "watermark" passes them. Most registrations repeat a timer that is already in the queue,
 * as in a window operator. Elements are encoded as FlowKV encodes timers: {@code [timestamp][key
 * group][key][namespace]}, 34 bytes. Run with e.g. {@code java -jar
 * flowkv-bench/target/flowkv-benchmarks.jar TimerStoreBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class TimerStoreBenchmark {
    static final int BATCH = 4096;

    @Param({"200000"})
    public int keys;

    @Param({"6"})
    public int windowsPerEvent;

    /** Window slide in milliseconds of event time (one event per millisecond). */
    @Param({"10000"})
    public int slideMs;

    private Path root;
    private MemoryBudget budget;
    private SortedQueueStore store;
    private SplittableRandom random;
    private long eventTime;

    /** Timer registrations, reported by JMH as a rate. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Registrations {
        public long registrations;

        @Setup(Level.Iteration)
        public void clear() {
            registrations = 0;
        }
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        root = Files.createTempDirectory("flowkv-timer-bench-");
        budget = new MemoryBudget(16L << 20);
        store = SortedQueueStore.open(root, budget, 256 * 1024);
        random = new SplittableRandom(42);
        eventTime = 0;
    }

    @Benchmark
    public long batch(Registrations counter) throws IOException {
        for (int i = 0; i < BATCH; i++) {
            long key =
                    random.nextInt(4) == 0
                            ? random.nextInt(Math.max(1, keys / 10))
                            : random.nextInt(keys);
            long lastStart = eventTime - eventTime % slideMs;
            for (int w = 0; w < windowsPerEvent; w++) {
                long start = lastStart - (long) w * slideMs;
                long end = start + (long) windowsPerEvent * slideMs;
                store.add(timer(end - 1, key, start, end));
            }
            eventTime++;
            if (eventTime % slideMs == 0) {
                byte[] head;
                while ((head = store.peek()) != null
                        && (ByteBuffer.wrap(head).getLong() ^ Long.MIN_VALUE) < eventTime) {
                    store.poll();
                }
            }
        }
        counter.registrations += (long) BATCH * windowsPerEvent;
        return eventTime;
    }

    private static byte[] timer(long timestamp, long key, long start, long end) {
        return ByteBuffer.allocate(34)
                .putLong(timestamp ^ Long.MIN_VALUE)
                .putShort((short) (key % 128))
                .putLong(key)
                .putLong(start)
                .putLong(end)
                .array();
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        store.close();
        Directories.deleteRecursively(root);
    }
}
