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
 * A storage of values on RMW stores: aggregating/reducing window state (RMW) and every value, map
 * and reducing state that is not window contents (GENERIC). Lists on these stores are {@link
 * RmwListStorage}.
 */
final class RmwStateStorage extends PartitionedStorage<RmwStore> implements ValueStateStorage {
    private final StorePattern pattern;

    RmwStateStorage(
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
        openRmwInstances(this, dir, budget, settings, fileIo, seed, manifests);
    }

    /** Opens the RMW store instances of {@code storage}, one per partition or sealed manifest. */
    static void openRmwInstances(
            PartitionedStorage<RmwStore> storage,
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            FileIo fileIo,
            long seed,
            List<Path> manifests)
            throws IOException {
        int n = instanceCount(manifests, settings.partitions());
        StoreSizing sizing = new StoreSizing(settings, budget.capacity());
        storage.openInstances(
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
                });
    }

    @Override
    public StorePattern pattern() {
        return pattern;
    }

    @Override
    public byte[] get(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        return instanceFor(keyGroup).get(key, namespace);
    }

    @Override
    public void put(int keyGroup, byte[] key, byte[] namespace, byte[] value) throws IOException {
        instanceFor(keyGroup).put(key, namespace, value);
    }

    @Override
    public void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        instanceFor(keyGroup).remove(key, namespace);
    }
}
