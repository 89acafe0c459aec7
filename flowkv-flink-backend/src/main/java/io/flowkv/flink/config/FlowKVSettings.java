package io.flowkv.flink.config;

import io.flowkv.flink.FlowKVOptions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ReadableConfig;

import java.io.Serializable;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The resolved {@code state.backend.flowkv.*} settings a backend instance carries to the
 * TaskManagers. Immutable; validated by {@link FlowKVOptions#validate} before it is built.
 */
@Internal
public record FlowKVSettings(
        long writeBufferBytes,
        long indexCacheBytes,
        double readBatchRatio,
        boolean readAhead,
        boolean backgroundFlush,
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
        long objectCacheBytes,
        int restoreThreads,
        boolean restoreInBackground,
        int restoreBackgroundNice,
        Set<MetricsGroup> metricGroups,
        String fileIoFactory)
        implements Serializable {
    /**
     * {@code fileIoFactory}: a class name, or null for the local file system. {@code
     * writeBufferBytes} or {@code indexCacheBytes} unset: derived from the budget by {@code
     * io.flowkv.flink.storage.StoreSizing}; {@code timerHeapLimit} unset: derived from the JVM
     * heap.
     */
    public static final long DERIVED = -1;

    public FlowKVSettings {
        localDirectories = localDirectories == null ? List.of() : List.copyOf(localDirectories);
        patternOverrides = patternOverrides == null ? Map.of() : Map.copyOf(patternOverrides);
        triggerTimePredictors =
                triggerTimePredictors == null ? Map.of() : Map.copyOf(triggerTimePredictors);
        metricGroups = metricGroups == null ? Set.of() : Set.copyOf(metricGroups);
    }

    /** The settings {@code config} gives, once {@link FlowKVOptions#validate} accepts it. */
    public static FlowKVSettings from(ReadableConfig config) {
        FlowKVOptions.validate(config);
        return new FlowKVSettings(
                config.getOptional(FlowKVOptions.WRITE_BUFFER_SIZE)
                        .map(size -> size.getBytes())
                        .orElse(DERIVED),
                config.getOptional(FlowKVOptions.INDEX_CACHE_SIZE)
                        .map(size -> size.getBytes())
                        .orElse(DERIVED),
                config.get(FlowKVOptions.READ_BATCH_RATIO),
                config.get(FlowKVOptions.READ_AHEAD),
                config.get(FlowKVOptions.BACKGROUND_FLUSH),
                config.get(FlowKVOptions.MAX_SPACE_AMPLIFICATION),
                config.get(FlowKVOptions.PARTITIONS),
                config.getOptional(FlowKVOptions.LOCAL_DIRECTORIES).orElse(List.of()),
                config.get(FlowKVOptions.PATTERN_OVERRIDE),
                config.get(FlowKVOptions.TRIGGER_TIME_PREDICTOR),
                config.get(FlowKVOptions.TIMER_SERVICE),
                config.getOptional(FlowKVOptions.TIMER_HEAP_LIMIT).orElse(DERIVED),
                config.get(FlowKVOptions.FULL_CHECKPOINT_FORMAT),
                config.get(FlowKVOptions.CHECKPOINT_COMPRESSION),
                config.get(FlowKVOptions.PER_KEY_WINDOWS_THRESHOLD),
                config.get(FlowKVOptions.PRE_FLUSHES_PER_CHECKPOINT),
                config.getOptional(FlowKVOptions.OBJECT_CACHE_SIZE)
                        .map(size -> size.getBytes())
                        .orElse(DERIVED),
                config.get(FlowKVOptions.RESTORE_THREADS),
                config.get(FlowKVOptions.RESTORE_IN_BACKGROUND),
                config.get(FlowKVOptions.RESTORE_BACKGROUND_NICE),
                MetricsGroup.enabledIn(config),
                config.getOptional(FlowKVOptions.FILE_IO_FACTORY).orElse(null));
    }

    /**
     * How many timers a queue keeps on the heap before it moves into the store ({@code
     * timer-service: AUTO}): the configured limit, or an eighth of {@code maxHeapBytes} at {@link
     * FlowKVOptions#TIMER_HEAP_BYTES_ESTIMATE} bytes per timer.
     */
    public long timerHeapLimit(long maxHeapBytes) {
        if (timerHeapLimit != DERIVED) {
            return timerHeapLimit;
        }
        return Math.max(1024, maxHeapBytes / 8 / FlowKVOptions.TIMER_HEAP_BYTES_ESTIMATE);
    }

    /**
     * Heap bytes each cached state may hold as live objects ({@code object-cache.size}): the
     * configured size, or a sixteenth of {@code maxHeapBytes}.
     */
    public long objectCacheBytes(long maxHeapBytes) {
        return objectCacheBytes != DERIVED ? objectCacheBytes : maxHeapBytes / 16;
    }
}
