package io.flowkv.bench;

import java.nio.file.Path;

/**
 * What every target gets: its own empty directory and the same memory budget (bytes), which a store
 * must not exceed for buffers, caches and indexes. The AUR knobs are ignored by others.
 *
 * @param readBatchRatio AUR predictive batch read size, as a fraction of live windows; NaN keeps
 *     the store's default
 * @param maxSpaceAmplification AUR compaction trigger; NaN keeps the store's default
 */
public record TargetConfig(
        Path directory, long memoryBudget, double readBatchRatio, double maxSpaceAmplification) {

    public TargetConfig withDirectory(Path dir) {
        return new TargetConfig(dir, memoryBudget, readBatchRatio, maxSpaceAmplification);
    }
}
