package io.flowkv.flink;

import io.flowkv.core.memory.MemoryBudget;

import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Creates the storage of each state of one keyed backend, in its own directory under the backend's
 * working directory, all drawing on the backend's one memory budget.
 */
final class StorageFactory {
    private final Path baseDirectory;
    private final MemoryBudget budget;
    private final FlowKVSettings settings;
    private final KeyGroupRange keyGroups;
    private final int keyGroupPrefixBytes;
    private final long seed;

    StorageFactory(
            Path baseDirectory,
            MemoryBudget budget,
            FlowKVSettings settings,
            KeyGroupRange keyGroups,
            int keyGroupPrefixBytes,
            long seed) {
        this.baseDirectory = baseDirectory;
        this.budget = budget;
        this.settings = settings;
        this.keyGroups = keyGroups;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.seed = seed;
    }

    MemoryBudget budget() {
        return budget;
    }

    Path baseDirectory() {
        return baseDirectory;
    }

    StateStorage create(int stateId, String stateName, StorePattern pattern, boolean list)
            throws IOException {
        Path dir =
                baseDirectory.resolve(
                        stateId
                                + "-"
                                + stateName
                                        .replaceAll("[^a-zA-Z0-9\\-]", "_")
                                        .toLowerCase(Locale.ROOT));
        Files.createDirectories(dir);
        long stateSeed = seed * 31 + stateId;
        switch (pattern) {
            case AAR:
                return new AarStateStorage(
                        dir, budget, settings, keyGroups, keyGroupPrefixBytes, stateSeed);
            case AUR:
                return new AurStateStorage(dir, budget, settings, keyGroupPrefixBytes, stateSeed);
            case RMW:
            case GENERIC:
                return new RmwStateStorage(
                        pattern, list, dir, budget, settings, keyGroupPrefixBytes, stateSeed);
            default:
                throw new IllegalArgumentException("Unknown store pattern " + pattern);
        }
    }
}
