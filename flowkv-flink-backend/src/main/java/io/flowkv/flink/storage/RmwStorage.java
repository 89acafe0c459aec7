package io.flowkv.flink.storage;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;
import io.flowkv.flink.config.FlowKVSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A storage on RMW store instances, one per partition (or per sealed manifest when restored):
 * values ({@link RmwStateStorage}) or lists ({@link RmwListStorage}).
 */
abstract class RmwStorage extends PartitionedStorage<RmwStore> {
    private final StorePattern pattern;

    RmwStorage(
            StorePattern pattern,
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            FileIo fileIo,
            long seed,
            List<Path> manifests)
            throws IOException {
        super(dir);
        this.pattern = pattern;
        int n = instanceCount(manifests, settings.partitions());
        StoreSizing sizing = new StoreSizing(settings, budget.capacity());
        openInstances(
                n,
                i -> {
                    RmwStoreOptions options =
                            RmwStoreOptions.builder(Files.createDirectories(dir.resolve("p" + i)))
                                    .fileIo(fileIo)
                                    .maxSpaceAmplification(settings.maxSpaceAmplification())
                                    .writeBufferBytes(sizing.rmwWriteBuffer(n))
                                    .indexCacheBytes(sizing.rmwIndexCache(n))
                                    .jitterSeed(seed * 1_000_003L + i)
                                    .build();
                    return manifests == null
                            ? RmwStore.open(options, budget)
                            : RmwStore.restore(options, budget, manifests.get(i));
                },
                manifests != null);
    }

    @Override
    public StorePattern pattern() {
        return pattern;
    }
}
