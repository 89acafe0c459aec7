package io.flowkv.flink.config;

import io.flowkv.flink.FlowKVOptions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;

import java.util.EnumSet;
import java.util.Set;

/**
 * The groups of FlowKV's metrics ({@link io.flowkv.flink.metrics.FlowKVMetrics}), each switched by
 * its option {@code state.backend.flowkv.metrics.*}.
 */
@Internal
public enum MetricsGroup {
    /** Budget used and total, bytes each state's stores hold. */
    MEMORY(FlowKVOptions.METRICS_MEMORY),
    /** Live and dead bytes on disk, space amplification, files, estimated entries. */
    SPACE(FlowKVOptions.METRICS_SPACE),
    /** Bytes appended, flushed, read, compacted; flushes and compactions. */
    IO(FlowKVOptions.METRICS_IO),
    /**
     * AUR prefetch hits and misses and read amplification, AAR partitions loaded and streamed,
     * index page I/O, scans.
     */
    READS(FlowKVOptions.METRICS_READS),
    /** Bytes the last checkpoint uploaded and reused, time of the restore. */
    CHECKPOINTS(FlowKVOptions.METRICS_CHECKPOINTS);

    private final ConfigOption<Boolean> option;

    MetricsGroup(ConfigOption<Boolean> option) {
        this.option = option;
    }

    /** The groups {@code config} switches on. */
    static Set<MetricsGroup> enabledIn(ReadableConfig config) {
        Set<MetricsGroup> enabled = EnumSet.noneOf(MetricsGroup.class);
        for (MetricsGroup group : values()) {
            if (config.get(group.option)) {
                enabled.add(group);
            }
        }
        return enabled;
    }
}
