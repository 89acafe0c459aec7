package io.flowkv.flink.metrics;

import io.flowkv.core.StoreStats;
import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.TestBackends;
import io.flowkv.flink.state.AbstractFlowKVState;
import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.concurrent.FutureUtils;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * FlowKV's metrics under the operator's metric group: names as documented, values equal to the
 * stores' own counters and the budget, checkpoint bytes equal to what the checkpoint handle says it
 * persisted, files and entries equal to what is on disk and what was written, and groups that an
 * option turns off not registered at all.
 */
class FlowKVMetricsTest {
    private static final int KEY_GROUPS = 16;
    private static final KeyGroupRange ALL = KeyGroupRange.of(0, KEY_GROUPS - 1);

    /** The data and log files of each store, as docs/FORMAT.md names them. */
    private static final Pattern RMW_FILES = Pattern.compile("rmw-\\d{8}\\.log");

    private static final Pattern AAR_FILES = Pattern.compile("aar-\\d+\\.log");
    private static final Pattern AUR_FILES = Pattern.compile("aur-(data|index)-\\d{8}\\.log");

    @TempDir Path checkpoints;
    private final TestBackends backends = new TestBackends();

    @AfterEach
    void close() throws Exception {
        backends.close();
    }

    @Test
    void shouldReportTheStoresCountersAndTheBudget() throws Exception {
        Capture metrics = new Capture();
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        // Every access goes to the stores (a value state would otherwise stay in the object cache).
        config.set(FlowKVOptions.OBJECT_CACHE_SIZE, MemorySize.ZERO);
        FlowKVKeyedStateBackend<Integer> backend =
                backends.create("metrics_op", KEY_GROUPS, ALL, List.of(), config, metrics);
        ValueState<Long> seen = valueState(backend);
        MapState<Long, Long> rows = mapState(backend);
        for (int key = 0; key < 20_000; key++) {
            backend.setCurrentKey(key);
            seen.update((long) key);
            rows.put((long) key % 7, (long) key);
        }

        for (String state : List.of("seen", "rows")) {
            RegisteredState registered = backend.registeredStates().get(state);
            StateStorage storage = backend.storage(registered);
            String prefix = "flowkv." + state + ".";
            assertThat(metrics.value(prefix + "store")).isEqualTo("GENERIC");
            assertThat(metrics.value(prefix + "bytes-appended"))
                    .as("%s bytes appended", state)
                    .isEqualTo(sum(storage, StoreStats::bytesAppended))
                    .isNotEqualTo(0L);
            assertThat(metrics.value(prefix + "memory-bytes"))
                    .isEqualTo(storage.memoryUsed())
                    .isNotEqualTo(0L);
            for (String name :
                    List.of(
                            "live-bytes",
                            "dead-bytes",
                            "disk-bytes",
                            "space-amplification",
                            "files",
                            "estimated-entries",
                            "bytes-flushed",
                            "bytes-read",
                            "flushes",
                            "compactions",
                            "compaction-bytes-written",
                            "prefetch-hits",
                            "prefetch-misses",
                            "prefetch-hit-ratio",
                            "prefetch-loaded-bytes",
                            "read-amplification",
                            "partition-loads",
                            "partitions-streamed",
                            "index-page-reads",
                            "index-page-writes",
                            "index-scans",
                            "chain-reads")) {
                assertThat(metrics.names()).contains(prefix + name);
            }
        }
        long used = (Long) metrics.value("flowkv.budget-used-bytes");
        long capacity = (Long) metrics.value("flowkv.budget-capacity-bytes");
        assertThat(used).isPositive().isLessThanOrEqualTo(capacity);
        assertThat(metrics.value("flowkv.restore-millis")).as("before any restore").isEqualTo(-1L);

        IncrementalRemoteKeyedStateHandle first = checkpoint(backend, 1);
        assertThat(metrics.value("flowkv.checkpoint-uploaded-bytes"))
                .as("bytes the first checkpoint uploaded")
                .isEqualTo(first.getCheckpointedSize());
        // The checkpoint flushed every write buffer: the index holds every key written.
        StateStorage seenStorage = backend.storage(backend.registeredStates().get("seen"));
        assertThat(metrics.value("flowkv.seen.estimated-entries"))
                .as("one entry per key of the value state")
                .isEqualTo(20_000L)
                .isEqualTo(sum(seenStorage, StoreStats::entries));
        assertThat((Long) metrics.value("flowkv.seen.files"))
                .as("value log segments on disk")
                .isPositive()
                .isEqualTo(filesOnDisk(seenStorage, RMW_FILES))
                .isEqualTo(sum(seenStorage, StoreStats::files));
        assertThat((Long) metrics.value("flowkv.rows.estimated-entries"))
                .as("map entries, besides each map's header and key chunk records")
                .isGreaterThanOrEqualTo(20_000L);
        assertThat(metrics.value("flowkv.checkpoints-uploaded")).isEqualTo(1L);
        backend.notifyCheckpointComplete(1);
        backend.setCurrentKey(1);
        seen.update(-1L);
        IncrementalRemoteKeyedStateHandle second = checkpoint(backend, 2);
        assertThat(metrics.value("flowkv.checkpoint-uploaded-bytes"))
                .isEqualTo(second.getCheckpointedSize());
        assertThat((Long) metrics.value("flowkv.checkpoint-reused-bytes"))
                .as("bytes of files the second checkpoint shares with the first")
                .isPositive()
                .isEqualTo(second.getStateSize() - second.getCheckpointedSize());

        // The second checkpoint's shared files are placeholders until a coordinator replaces them:
        // restore the first, which uploaded everything.
        Capture restoredMetrics = new Capture();
        FlowKVKeyedStateBackend<Integer> restored =
                backends.create(
                        "metrics_op", KEY_GROUPS, ALL, List.of(first), config, restoredMetrics);
        assertThat((Long) restoredMetrics.value("flowkv.restore-millis")).isNotNegative();
        assertThat(restored.registeredStates().names()).contains("seen", "rows");
        assertThat(restoredMetrics.names()).contains("flowkv.seen.bytes-appended");
    }

    @Test
    void shouldReportAarWindowsFilesAndPartitionLoads() throws Exception {
        Capture metrics = new Capture();
        FlowKVKeyedStateBackend<Integer> backend =
                backends.create(
                        "metrics_aar_op", KEY_GROUPS, ALL, List.of(), new Configuration(), metrics);
        TimeWindow first = new TimeWindow(0, 1000);
        TimeWindow second = new TimeWindow(1000, 2000);
        int keys = 2_000;
        for (int key = 0; key < keys; key++) {
            backend.setCurrentKey(key);
            aligned(backend, first).add((long) key);
            aligned(backend, second).add((long) key);
        }
        StateStorage storage = backend.storage(backend.registeredStates().get("aligned"));
        assertThat(storage.pattern()).isEqualTo(StorePattern.AAR);
        storage.flush();

        assertThat(metrics.value("flowkv.aligned.estimated-entries"))
                .as("AAR counts windows")
                .isEqualTo(2L);
        long files = filesOnDisk(storage, AAR_FILES);
        assertThat(files).as("a segment per window partition").isGreaterThan(2);
        assertThat(metrics.value("flowkv.aligned.files"))
                .isEqualTo(files)
                .isEqualTo(sum(storage, StoreStats::files));
        assertThat(metrics.value("flowkv.aligned.partition-loads")).isEqualTo(0L);

        // The first window fires: every key is read from its partition's segments, then cleared.
        for (int key = 0; key < keys; key++) {
            backend.setCurrentKey(key);
            assertThat(aligned(backend, first).get()).containsExactly((long) key);
        }
        long loads = (Long) metrics.value("flowkv.aligned.partition-loads");
        assertThat(loads)
                .as("partitions of the fired window loaded from disk")
                .isPositive()
                .isEqualTo(sum(storage, StoreStats::partitionLoads));
        assertThat(metrics.value("flowkv.aligned.partitions-streamed")).isEqualTo(0L);
        for (int key = 0; key < keys; key++) {
            backend.setCurrentKey(key);
            aligned(backend, first).clear();
        }
        assertThat(metrics.value("flowkv.aligned.estimated-entries")).isEqualTo(1L);
        assertThat((Long) metrics.value("flowkv.aligned.files"))
                .as("the fired window's segments are deleted")
                .isLessThan(files)
                .isEqualTo(filesOnDisk(storage, AAR_FILES));
        assertThat(metrics.value("flowkv.aligned.read-amplification"))
                .as("AAR counts no served bytes")
                .isEqualTo(0.0);
    }

    @Test
    void shouldReportAurWindowsFilesAndReadAmplification() throws Exception {
        Capture metrics = new Capture();
        FlowKVKeyedStateBackend<Integer> backend =
                backends.create(
                        "metrics_aur_op", KEY_GROUPS, ALL, List.of(), new Configuration(), metrics);
        int keys = 1_000;
        for (int key = 0; key < keys; key++) {
            backend.setCurrentKey(key);
            for (long i = 0; i < 3; i++) {
                unaligned(backend).add(key * 10 + i);
            }
        }
        StateStorage storage = backend.storage(backend.registeredStates().get("unaligned"));
        assertThat(storage.pattern()).isEqualTo(StorePattern.AUR);
        assertThat(metrics.value("flowkv.unaligned.read-amplification"))
                .as("nothing served from disk yet")
                .isEqualTo(0.0);
        storage.flush();

        assertThat(metrics.value("flowkv.unaligned.estimated-entries"))
                .as("AUR counts (key, window) entries: one global window per key")
                .isEqualTo((long) keys)
                .isEqualTo(sum(storage, StoreStats::entries));
        assertThat((Long) metrics.value("flowkv.unaligned.files"))
                .as("data and index logs on disk")
                .isPositive()
                .isEqualTo(filesOnDisk(storage, AUR_FILES))
                .isEqualTo(sum(storage, StoreStats::files));

        for (int key = 0; key < keys; key++) {
            backend.setCurrentKey(key);
            assertThat(unaligned(backend).get())
                    .containsExactly(key * 10L, key * 10L + 1, key * 10L + 2);
        }
        long read = sum(storage, StoreStats::bytesRead);
        long served = sum(storage, StoreStats::valueBytesServedFromDisk);
        assertThat(served).as("every value came from the data log").isEqualTo(keys * 3L * 8);
        assertThat((Double) metrics.value("flowkv.unaligned.read-amplification"))
                .as("data bytes read per value byte served")
                .isGreaterThanOrEqualTo(1.0)
                .isEqualTo((double) read / served);
        for (int key = 0; key < keys / 2; key++) {
            backend.setCurrentKey(key);
            unaligned(backend).clear();
        }
        assertThat(metrics.value("flowkv.unaligned.estimated-entries"))
                .isEqualTo((long) keys - keys / 2);
    }

    @Test
    void shouldReportTheObjectCachesCounters() throws Exception {
        Capture metrics = new Capture();
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        config.set(FlowKVOptions.OBJECT_CACHE_SIZE, MemorySize.parse("2kb"));
        FlowKVKeyedStateBackend<Integer> backend =
                backends.create("metrics_cache_op", KEY_GROUPS, ALL, List.of(), config, metrics);
        ReducingState<Long> sums =
                backend.getPartitionedState(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        new ReducingStateDescriptor<>("sums", Long::sum, LongSerializer.INSTANCE));
        ValueState<Long> seen = valueState(backend);
        for (int round = 0; round < 3; round++) {
            for (int key = 0; key < 100; key++) {
                backend.setCurrentKey(key);
                sums.add(1L);
                sums.add(1L); // a hit
                seen.update((long) key);
            }
        }
        checkpoint(backend, 1); // writes the changed values back

        AbstractFlowKVState.CacheCounters counters =
                ((AbstractFlowKVState<?, ?, ?>) backend.registeredStates().get("sums").state())
                        .cacheCounters();
        assertThat(counters.hits()).isGreaterThanOrEqualTo(300);
        assertThat(counters.misses()).isGreaterThanOrEqualTo(100);
        assertThat(counters.evictions()).as("100 keys in a 2 KiB cache").isPositive();
        assertThat(counters.entries()).isPositive().isLessThan(100);
        assertThat(counters.writes()).isGreaterThanOrEqualTo(counters.entries());
        assertThat(metrics.value("flowkv.sums.object-cache-hits")).isEqualTo(counters.hits());
        assertThat(metrics.value("flowkv.sums.object-cache-misses")).isEqualTo(counters.misses());
        assertThat(metrics.value("flowkv.sums.object-cache-evictions"))
                .isEqualTo(counters.evictions());
        assertThat(metrics.value("flowkv.sums.object-cache-writes")).isEqualTo(counters.writes());
        assertThat(metrics.value("flowkv.sums.object-cache-entries")).isEqualTo(counters.entries());
        assertThat(metrics.value("flowkv.seen.object-cache-hits"))
                .as("a value state has no cache")
                .isEqualTo(0L);
    }

    @Test
    void shouldNotRegisterTheGroupsTurnedOff() throws Exception {
        Capture metrics = new Capture();
        Configuration config = new Configuration();
        config.set(FlowKVOptions.METRICS_IO, false);
        config.set(FlowKVOptions.METRICS_READS, false);
        FlowKVKeyedStateBackend<Integer> backend =
                backends.create("metrics_off_op", KEY_GROUPS, ALL, List.of(), config, metrics);
        ValueState<Long> seen = valueState(backend);
        backend.setCurrentKey(3);
        seen.update(3L);

        assertThat(metrics.names())
                .contains("flowkv.seen.store", "flowkv.seen.memory-bytes", "flowkv.seen.live-bytes")
                .doesNotContain(
                        "flowkv.seen.bytes-appended",
                        "flowkv.seen.prefetch-hits",
                        "flowkv.seen.read-amplification",
                        "flowkv.seen.partition-loads");
    }

    private IncrementalRemoteKeyedStateHandle checkpoint(
            FlowKVKeyedStateBackend<Integer> backend, long id) throws Exception {
        KeyedStateHandle handle =
                FutureUtils.runIfNotDoneAndGet(
                                backend.snapshot(
                                        id,
                                        id,
                                        TestBackends.streamFactory(checkpoints),
                                        CheckpointOptions.forCheckpointWithDefaultLocation()))
                        .getJobManagerOwnedSnapshot();
        return (IncrementalRemoteKeyedStateHandle) handle;
    }

    private static ValueState<Long> valueState(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>("seen", LongSerializer.INSTANCE));
    }

    private static MapState<Long, Long> mapState(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new MapStateDescriptor<>("rows", LongSerializer.INSTANCE, LongSerializer.INSTANCE));
    }

    private static ListState<Long> aligned(
            FlowKVKeyedStateBackend<Integer> backend, TimeWindow window) throws Exception {
        return backend.getPartitionedState(
                window,
                new TimeWindow.Serializer(),
                new ListStateDescriptor<>("aligned", LongSerializer.INSTANCE));
    }

    private static ListState<Long> unaligned(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                GlobalWindow.get(),
                new GlobalWindow.Serializer(),
                new ListStateDescriptor<>("unaligned", LongSerializer.INSTANCE));
    }

    private static long sum(StateStorage storage, ToLongFunction<StoreStats> field) {
        return storage.stats().stream().mapToLong(field).sum();
    }

    /** Files below the storage's directory whose name matches {@code names}. */
    private static long filesOnDisk(StateStorage storage, Pattern names) throws IOException {
        try (Stream<Path> files = Files.walk(storage.directory())) {
            return files.filter(f -> names.matcher(f.getFileName().toString()).matches()).count();
        }
    }

    /** Records every gauge by its dotted name below the operator group. */
    private static final class Capture extends UnregisteredMetricsGroup {
        private final Map<String, Metric> metrics;
        private final String prefix;

        Capture() {
            this(new TreeMap<>(), "");
        }

        private Capture(Map<String, Metric> metrics, String prefix) {
            this.metrics = metrics;
            this.prefix = prefix;
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new Capture(metrics, prefix + name + ".");
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            metrics.put(prefix + name, gauge);
            return gauge;
        }

        Object value(String name) {
            Metric metric = metrics.get(name);
            assertThat(metric).as("metric %s among %s", name, metrics.keySet()).isNotNull();
            return ((Gauge<?>) metric).getValue();
        }

        java.util.Set<String> names() {
            return metrics.keySet();
        }
    }
}
