package io.flowkv.flink.storage;

import io.flowkv.core.aar.AarStore;
import io.flowkv.core.aar.AarStoreOptions;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.config.FlowKVSettings;

import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Window contents of tumbling and sliding windows on one AAR store, partitioned by key group.
 *
 * <p>A window is read one loaded partition at a time, and FlowKV's timer queues fire a window's
 * timers key group by key group ({@link io.flowkv.flink.timers.KeyGroupOrderedQueueSetFactory}).
 * With a partition per key group each partition is therefore loaded once per firing; partitioning
 * by key hash would make consecutive keys hop between partitions and reload them whenever the
 * budget holds fewer than all of them. Key groups beyond {@link AarStoreOptions#MAX_PARTITIONS}
 * share partitions in contiguous ranges.
 */
final class AarStateStorage extends ListStorage<AarStore> {
    private final int keyGroupPrefixBytes;

    AarStateStorage(
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            FileIo fileIo,
            KeyGroupRange keyGroups,
            int keyGroupPrefixBytes,
            long seed,
            List<Path> manifests)
            throws IOException {
        super(dir);
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        if (manifests != null && manifests.size() != 1) {
            throw new IOException(
                    "An AAR storage is one store, but the snapshot of "
                            + dir
                            + " lists "
                            + manifests.size()
                            + " manifests");
        }
        int groups = keyGroups.getNumberOfKeyGroups();
        int partitions = Math.min(AarStoreOptions.MAX_PARTITIONS, groups);
        int first = keyGroups.getStartKeyGroup();
        AarStoreOptions options =
                AarStoreOptions.builder(dir)
                        .fileIo(fileIo)
                        .partitions(partitions)
                        .partitioner(
                                (key, hash, n) -> partitionOf(keyGroupOf(key) - first, groups, n))
                        .writeBufferBytes(
                                new StoreSizing(settings, budget.capacity()).aarWriteBuffer())
                        .backgroundFlush(settings.backgroundFlush())
                        .jitterSeed(seed)
                        // A restore has checked every file against its checkpoint's CRC32C.
                        .verifyOnRestore(false)
                        .build();
        instances.add(
                manifests == null
                        ? AarStore.open(options, budget)
                        : AarStore.restore(options, budget, manifests.get(0)));
    }

    @Override
    public StorePattern pattern() {
        return StorePattern.AAR;
    }

    /**
     * The partition of a key in the {@code index}-th of the storage's {@code groups} key groups:
     * key groups split evenly over the {@code partitions}, in order, so a window's partitions load
     * in key group order.
     */
    private static int partitionOf(int index, int groups, int partitions) {
        return (int) ((long) index * partitions / groups);
    }

    /** The key group of a store key this storage holds (it leads the key's bytes). */
    int keyGroupOf(byte[] storeKey) {
        return KeyBytes.keyGroupOf(storeKey, keyGroupPrefixBytes);
    }

    /** Windows with live or not yet deleted data. */
    int windowCount() {
        return instances.get(0).windowCount();
    }
}
