package io.flowkv.flink.storage;

import io.flowkv.core.TriggerTimes;
import io.flowkv.core.aur.AurStore;
import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.aur.TriggerTimePredictor;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.config.FlowKVSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Window contents of session, global and unknown windows on AUR stores, {@code partitions}
 * instances by key group. Appends carry no timestamp (Flink's list state does not pass one): the
 * exact trigger times come from the merging window set and the timers, through {@link
 * #triggerTimes}.
 */
final class AurStateStorage extends ListStorage<AurStore> {

    AurStateStorage(
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            FileIo fileIo,
            TriggerTimePredictor predictor,
            long seed,
            List<Path> manifests)
            throws IOException {
        super(dir);
        int n = instanceCount(manifests, settings.partitions());
        StoreSizing sizing = new StoreSizing(settings, budget.capacity());
        openInstances(
                n,
                i -> {
                    AurStoreOptions options =
                            AurStoreOptions.builder(Files.createDirectories(dir.resolve("p" + i)))
                                    .fileIo(fileIo)
                                    .readBatchRatio(settings.readBatchRatio())
                                    .readAhead(settings.readAhead())
                                    .backgroundFlush(settings.backgroundFlush())
                                    .predictor(predictor)
                                    .maxSpaceAmplification(settings.maxSpaceAmplification())
                                    .writeBufferBytes(sizing.aurWriteBuffer(n))
                                    .prefetchBufferLimit(sizing.aurPrefetchBuffer(n))
                                    .statCacheBytes(sizing.aurStatCache(n))
                                    .jitterSeed(seed * 1_000_003L + i)
                                    // A restore checked every file against its checkpoint's
                                    // CRC32C, and may still be fetching the data logs.
                                    .openDataLogsOnRestore(false)
                                    .build();
                    return manifests == null
                            ? AurStore.open(options, budget)
                            : AurStore.restore(options, budget, manifests.get(i));
                },
                manifests != null);
    }

    @Override
    public StorePattern pattern() {
        return StorePattern.AUR;
    }

    /** The AUR store of the key group's partition: it takes the windows' trigger times. */
    @Override
    public TriggerTimes triggerTimes(int keyGroup) {
        return instanceFor(keyGroup);
    }
}
