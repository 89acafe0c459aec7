package io.flowkv.flink.storage;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.config.FlowKVSettings;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A storage of values on RMW stores: aggregating/reducing window state (RMW) and every value, map
 * and reducing state that is not window contents (GENERIC). Lists on these stores are {@link
 * RmwListStorage}.
 */
final class RmwStateStorage extends RmwStorage implements ValueStateStorage {
    RmwStateStorage(
            StorePattern pattern,
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            FileIo fileIo,
            long seed,
            List<Path> manifests)
            throws IOException {
        super(pattern, dir, budget, settings, fileIo, seed, manifests);
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
