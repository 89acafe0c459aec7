package io.flowkv.flink.metrics;

import io.flowkv.core.StoreStats;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.config.MetricsGroup;
import io.flowkv.flink.state.AbstractFlowKVState;
import io.flowkv.flink.storage.RegisteredState;
import io.flowkv.flink.storage.StateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

/**
 * FlowKV's statistics as Flink metrics, under the operator's metric group: {@code flowkv.<metric>}
 * for the backend and {@code flowkv.<state name>.<metric>} per state, as RocksDB groups its metrics
 * per column family. Every metric is a gauge over counters the stores keep anyway, so nothing is
 * added to the state access path; a reporter reading them costs a sum over the state's store
 * instances. Groups are switched on and off by the {@code state.backend.flowkv.metrics.*} options.
 *
 * <p>The stores' counters are written by the task thread and read here by the reporter's thread
 * without a lock: a value may lag the task by a moment, which a metric tolerates.
 */
@Internal
public final class FlowKVMetrics {
    private static final FlowKVMetrics NONE = new FlowKVMetrics(null, Set.of());

    private final MetricGroup root;
    private final Set<MetricsGroup> groups;
    private final Set<String> registered = new HashSet<>();

    private volatile long lastCheckpointUploadedBytes;
    private volatile long lastCheckpointReusedBytes;
    private final AtomicLong checkpointsUploaded = new AtomicLong();
    private volatile long restoreMillis = -1;

    private FlowKVMetrics(MetricGroup root, Set<MetricsGroup> groups) {
        this.root = root;
        this.groups = groups;
    }

    /** Metrics of one keyed backend under {@code operatorGroup} (none if it is null). */
    public static FlowKVMetrics create(
            MetricGroup operatorGroup, Set<MetricsGroup> groups, MemoryBudget budget) {
        if (operatorGroup == null || groups.isEmpty()) {
            return NONE;
        }
        FlowKVMetrics metrics = new FlowKVMetrics(operatorGroup.addGroup("flowkv"), groups);
        metrics.registerBackend(budget);
        return metrics;
    }

    private void registerBackend(MemoryBudget budget) {
        if (groups.contains(MetricsGroup.MEMORY)) {
            gauge(root, "budget-used-bytes", budget::used);
            gauge(root, "budget-capacity-bytes", budget::capacity);
        }
        if (groups.contains(MetricsGroup.CHECKPOINTS)) {
            gauge(root, "checkpoint-uploaded-bytes", () -> lastCheckpointUploadedBytes);
            gauge(root, "checkpoint-reused-bytes", () -> lastCheckpointReusedBytes);
            gauge(root, "checkpoints-uploaded", checkpointsUploaded::get);
            gauge(root, "restore-millis", () -> restoreMillis);
        }
    }

    /** Registers the metrics of a state once, whenever its storage is bound. */
    public void register(RegisteredState state) {
        if (root == null || !registered.add(state.name())) {
            return;
        }
        MetricGroup group = root.addGroup(state.name());
        group.gauge(
                "store",
                (Gauge<String>) () -> state.pattern() == null ? "unbound" : state.pattern().name());
        if (groups.contains(MetricsGroup.MEMORY)) {
            gauge(
                    group,
                    "memory-bytes",
                    () -> state.storage() == null ? 0 : state.storage().memoryUsed());
        }
        if (groups.contains(MetricsGroup.SPACE)) {
            gauge(group, "live-bytes", () -> sum(state, StoreStats::liveBytes));
            gauge(group, "dead-bytes", () -> sum(state, StoreStats::deadBytes));
            gauge(group, "disk-bytes", () -> sum(state, s -> s.liveBytes() + s.deadBytes()));
            ratio(
                    group,
                    "space-amplification",
                    state,
                    s -> s.liveBytes() + s.deadBytes(),
                    StoreStats::liveBytes,
                    1.0);
            gauge(group, "files", () -> sum(state, StoreStats::files));
            gauge(group, "estimated-entries", () -> sum(state, StoreStats::entries));
        }
        if (groups.contains(MetricsGroup.IO)) {
            gauge(group, "bytes-appended", () -> sum(state, StoreStats::bytesAppended));
            gauge(group, "bytes-flushed", () -> sum(state, StoreStats::bytesFlushed));
            gauge(group, "bytes-read", () -> sum(state, StoreStats::bytesRead));
            gauge(group, "flushes", () -> sum(state, StoreStats::flushes));
            gauge(group, "compactions", () -> sum(state, StoreStats::compactions));
            gauge(
                    group,
                    "compaction-bytes-written",
                    () -> sum(state, StoreStats::bytesCompactionWritten));
        }
        if (groups.contains(MetricsGroup.READS)) {
            gauge(group, "prefetch-hits", () -> sum(state, StoreStats::prefetchHits));
            gauge(group, "prefetch-misses", () -> sum(state, StoreStats::prefetchMisses));
            ratio(
                    group,
                    "prefetch-hit-ratio",
                    state,
                    StoreStats::prefetchHits,
                    s -> s.prefetchHits() + s.prefetchMisses(),
                    0.0);
            gauge(group, "prefetch-loaded-bytes", () -> sum(state, StoreStats::bytesPrefetched));
            ratio(
                    group,
                    "read-amplification",
                    state,
                    StoreStats::bytesRead,
                    StoreStats::valueBytesServedFromDisk,
                    0.0);
            gauge(group, "partition-loads", () -> sum(state, StoreStats::partitionLoads));
            gauge(group, "partitions-streamed", () -> sum(state, StoreStats::partitionsStreamed));
            gauge(group, "index-page-reads", () -> sum(state, StoreStats::indexPageReads));
            gauge(group, "index-page-writes", () -> sum(state, StoreStats::indexPageWrites));
            gauge(group, "index-scans", () -> sum(state, StoreStats::indexScans));
            gauge(group, "chain-reads", () -> sum(state, StoreStats::chainReads));
            gauge(group, "object-cache-hits", () -> cache(state).hits());
            gauge(group, "object-cache-misses", () -> cache(state).misses());
            gauge(group, "object-cache-evictions", () -> cache(state).evictions());
            gauge(group, "object-cache-writes", () -> cache(state).writes());
            gauge(group, "object-cache-entries", () -> cache(state).entries());
        }
    }

    /** An incremental checkpoint's upload finished. Called from the snapshot thread. */
    public void checkpointUploaded(long uploadedBytes, long reusedBytes) {
        lastCheckpointUploadedBytes = uploadedBytes;
        lastCheckpointReusedBytes = reusedBytes;
        checkpointsUploaded.incrementAndGet();
    }

    /** The backend restored its state in {@code millis}. */
    public void restored(long millis) {
        restoreMillis = millis;
    }

    private static long sum(RegisteredState state, ToLongFunction<StoreStats> field) {
        StateStorage storage = state.storage();
        if (storage == null) {
            return 0;
        }
        List<StoreStats> stats = storage.stats();
        long total = 0;
        for (StoreStats s : stats) {
            total += field.applyAsLong(s);
        }
        return total;
    }

    /** {@code numerator / denominator} summed over the state's stores; {@code empty} for 0 / 0. */
    private static void ratio(
            MetricGroup group,
            String name,
            RegisteredState state,
            ToLongFunction<StoreStats> numerator,
            ToLongFunction<StoreStats> denominator,
            double empty) {
        group.gauge(
                name,
                (Gauge<Double>)
                        () -> {
                            long below = sum(state, denominator);
                            return below == 0 ? empty : (double) sum(state, numerator) / below;
                        });
    }

    private static void gauge(MetricGroup group, String name, Gauge<Long> gauge) {
        group.gauge(name, gauge);
    }

    /** The counters of the state's object cache (all 0 without one, or before the state exists). */
    private static AbstractFlowKVState.CacheCounters cache(RegisteredState state) {
        return state.state() instanceof AbstractFlowKVState
                ? ((AbstractFlowKVState<?, ?, ?>) state.state()).cacheCounters()
                : AbstractFlowKVState.CacheCounters.NONE;
    }
}
