package io.flowkv.flink;

import io.flowkv.core.StoreStats;

import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
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
import org.apache.flink.util.concurrent.FutureUtils;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * FlowKV's metrics under the operator's metric group: names as documented, values equal to the
 * stores' own counters and the budget, checkpoint bytes equal to what the checkpoint handle says it
 * persisted, and groups that an option turns off not registered at all.
 */
class FlowKVMetricsTest {
    private static final int KEY_GROUPS = 16;
    private static final KeyGroupRange ALL = KeyGroupRange.of(0, KEY_GROUPS - 1);

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
                            "bytes-flushed",
                            "bytes-read",
                            "flushes",
                            "compactions",
                            "compaction-bytes-written",
                            "prefetch-hits",
                            "prefetch-misses",
                            "prefetch-hit-ratio",
                            "prefetch-loaded-bytes",
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
        assertThat(restored.registeredStates()).containsKeys("seen", "rows");
        assertThat(restoredMetrics.names()).contains("flowkv.seen.bytes-appended");
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
                .doesNotContain("flowkv.seen.bytes-appended", "flowkv.seen.prefetch-hits");
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

    private static long sum(StateStorage storage, ToLongFunction<StoreStats> field) {
        return storage.stats().stream().mapToLong(field).sum();
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
