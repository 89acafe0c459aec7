package io.flowkv.flink;

import io.flowkv.core.index.PagedHashIndex;

import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The resolved {@code state.backend.flowkv.*} settings a backend instance carries to the
 * TaskManagers. Immutable; validated by {@link FlowKVOptions#validate} before it is built.
 */
record FlowKVSettings(
        long writeBufferBytes,
        long indexCacheBytes,
        double readBatchRatio,
        double maxSpaceAmplification,
        int partitions,
        List<String> localDirectories,
        Map<String, String> patternOverrides,
        Map<String, String> triggerTimePredictors,
        FlowKVOptions.TimerService timerService,
        long timerHeapLimit,
        FlowKVOptions.FullCheckpointFormat fullCheckpointFormat,
        FlowKVOptions.CheckpointCompression checkpointCompression,
        int perKeyWindowsThreshold,
        int preFlushesPerCheckpoint,
        Set<FlowKVMetrics.Group> metricGroups)
        implements Serializable {
    /**
     * {@code writeBufferBytes} or {@code indexCacheBytes} unset: derive from the budget; {@code
     * timerHeapLimit} unset: derive from the JVM heap.
     */
    static final long DERIVED = -1;

    FlowKVSettings {
        localDirectories = localDirectories == null ? List.of() : List.copyOf(localDirectories);
        patternOverrides = patternOverrides == null ? Map.of() : Map.copyOf(patternOverrides);
        triggerTimePredictors =
                triggerTimePredictors == null ? Map.of() : Map.copyOf(triggerTimePredictors);
        metricGroups = metricGroups == null ? Set.of() : Set.copyOf(metricGroups);
    }

    /** The write buffer of one store instance when the budget is shared by {@code stores}. */
    long writeBufferBytes(long budgetBytes, int stores) {
        if (writeBufferBytes != DERIVED) {
            return writeBufferBytes;
        }
        // Half of the budget for write buffers, the rest for read-side buffers, indexes and I/O.
        return Math.max(64 * 1024, budgetBytes / 2 / Math.max(1, stores));
    }

    /**
     * The index page cache of one RMW store instance when {@code instances} share the budget: a
     * quarter of it for a state's indexes, never below the least an index works with.
     */
    long indexCacheBytes(long budgetBytes, int instances) {
        if (indexCacheBytes != DERIVED) {
            return indexCacheBytes;
        }
        return Math.max(PagedHashIndex.MIN_CACHE_BYTES, budgetBytes / 4 / Math.max(1, instances));
    }

    /**
     * How many timers a queue keeps on the heap before it moves into the store ({@code
     * timer-service: AUTO}): the configured limit, or an eighth of {@code maxHeapBytes} at {@link
     * FlowKVOptions#TIMER_HEAP_BYTES_ESTIMATE} bytes per timer.
     */
    long timerHeapLimit(long maxHeapBytes) {
        if (timerHeapLimit != DERIVED) {
            return timerHeapLimit;
        }
        return Math.max(1024, maxHeapBytes / 8 / FlowKVOptions.TIMER_HEAP_BYTES_ESTIMATE);
    }
}
