package io.flowkv.flink.storage;

import io.flowkv.core.aur.TriggerTimePredictor;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.config.FlowKVSettings;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Creates the storage of each state of one keyed backend, in its own directory under the backend's
 * working directory, all drawing on the backend's one memory budget.
 */
@Internal
public final class StorageFactory {
    private final Path baseDirectory;
    private final MemoryBudget budget;
    private final FlowKVSettings settings;
    private final KeyGroupRange keyGroups;
    private final int keyGroupPrefixBytes;
    private final long seed;
    private final TriggerTimePredictor predictor;
    private final FileIo fileIo;

    public StorageFactory(
            Path baseDirectory,
            MemoryBudget budget,
            FlowKVSettings settings,
            KeyGroupRange keyGroups,
            int keyGroupPrefixBytes,
            long seed,
            TriggerTimePredictor predictor,
            FileIo fileIo) {
        this.baseDirectory = baseDirectory;
        this.budget = budget;
        this.settings = settings;
        this.keyGroups = keyGroups;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.seed = seed;
        this.predictor = predictor;
        this.fileIo = fileIo;
    }

    MemoryBudget budget() {
        return budget;
    }

    public FlowKVSettings settings() {
        return settings;
    }

    /** A new, empty AUR storage of a state in {@code dir} (a judged AAR storage moving there). */
    ListStateStorage openAur(int stateId, Path dir) throws IOException {
        return (ListStateStorage) open(stateId, dir, StorePattern.AUR, true, keyGroups, null);
    }

    public Path baseDirectory() {
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
        return open(stateId, dir, pattern, list, keyGroups, null);
    }

    /**
     * Reopens a storage sealed into {@code manifests} (one per store instance, in instance order),
     * whose files are already under {@code dir}, each checked whole against the CRC32C its
     * checkpoint recorded (the stores do not read them all again). {@code writtenFor} is the key
     * group range the storage was written for: it fixes how the AAR store splits key groups into
     * partitions.
     */
    public StateStorage restore(
            int stateId,
            Path dir,
            StorePattern pattern,
            boolean list,
            KeyGroupRange writtenFor,
            List<Path> manifests)
            throws IOException {
        return open(stateId, dir, pattern, list, writtenFor, manifests);
    }

    private StateStorage open(
            int stateId,
            Path dir,
            StorePattern pattern,
            boolean list,
            KeyGroupRange range,
            List<Path> manifests)
            throws IOException {
        long stateSeed = seed * 31 + stateId;
        switch (pattern) {
            case AAR:
                return new AarStateStorage(
                        dir,
                        budget,
                        settings,
                        fileIo,
                        range,
                        keyGroupPrefixBytes,
                        stateSeed,
                        manifests);
            case AUR:
                return new AurStateStorage(
                        dir, budget, settings, fileIo, predictor, stateSeed, manifests);
            case RMW:
            case GENERIC:
                return list
                        ? new RmwListStorage(
                                pattern, dir, budget, settings, fileIo, stateSeed, manifests)
                        : new RmwStateStorage(
                                pattern, dir, budget, settings, fileIo, stateSeed, manifests);
            default:
                throw new IllegalArgumentException("Unknown store pattern " + pattern);
        }
    }
}
