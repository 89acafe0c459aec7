package io.flowkv.bench;

import io.flowkv.core.Store;
import io.flowkv.core.aar.AarStore;
import io.flowkv.core.aar.AarStoreOptions;
import io.flowkv.core.aur.AurStore;
import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A fresh store of a backend for a pattern, driven through the store contract of FlowKV's core,
 * with the directory and budget it was opened on. FlowKV's stores are set up as the Flink backend
 * sets them up; closing one fails if it left any of its budget reserved.
 *
 * @param budget FlowKV's budget; null for the baselines, which have none
 */
public record Target(Store store, Path directory, MemoryBudget budget) implements Closeable {

    public static Target open(Backend backend, Pattern pattern, TargetConfig config)
            throws IOException {
        return switch (backend) {
            case HEAP -> new Target(HeapStore.open(pattern), config.directory(), null);
            case ROCKSDB ->
                    new Target(RocksDbStore.open(pattern, config), config.directory(), null);
            case FLOWKV -> {
                MemoryBudget budget = new MemoryBudget(config.memoryBudget());
                yield new Target(openFlowKv(pattern, config, budget), config.directory(), budget);
            }
        };
    }

    private static Store openFlowKv(Pattern pattern, TargetConfig config, MemoryBudget budget)
            throws IOException {
        long memory = config.memoryBudget();
        return switch (pattern) {
            // A partition per key group, so that a window fired key group by key group (as Flink
            // fires it) loads each partition once; a quarter of the budget is write buffer.
            case AAR ->
                    AarStore.open(
                            AarStoreOptions.builder(config.directory())
                                    .partitions(RocksDbStore.MAX_PARALLELISM)
                                    .partitioner(
                                            (key, hash, n) ->
                                                    RocksDbStore.keyGroup(key)
                                                            * n
                                                            / RocksDbStore.MAX_PARALLELISM)
                                    .writeBufferBytes(memory / 4)
                                    .jitterSeed(1)
                                    .build(),
                            budget);
            // A quarter of the budget is write buffer and half prefetch buffer.
            case AUR -> {
                AurStoreOptions.Builder options =
                        AurStoreOptions.builder(config.directory())
                                .writeBufferBytes(memory / 4)
                                .prefetchBufferLimit(memory / 2)
                                .jitterSeed(1);
                if (!Double.isNaN(config.readBatchRatio())) {
                    options.readBatchRatio(config.readBatchRatio());
                }
                if (!Double.isNaN(config.maxSpaceAmplification())) {
                    options.maxSpaceAmplification(config.maxSpaceAmplification());
                }
                yield AurStore.open(options.build(), budget);
            }
            // An eighth of the budget is write buffer; the rest is left to the hash index and the
            // I/O buffers.
            case RMW -> {
                RmwStoreOptions.Builder options =
                        RmwStoreOptions.builder(config.directory())
                                .writeBufferBytes(memory / 8)
                                .jitterSeed(1);
                if (!Double.isNaN(config.maxSpaceAmplification())) {
                    options.maxSpaceAmplification(config.maxSpaceAmplification());
                }
                yield RmwStore.open(options.build(), budget);
            }
        };
    }

    /** Bytes the store holds on disk now. */
    public long diskBytes() throws IOException {
        return Directories.sizeOf(directory);
    }

    @Override
    public void close() throws IOException {
        store.close();
        if (budget != null && budget.used() != 0) {
            throw new IllegalStateException("FlowKV store in " + directory + " leaked " + budget);
        }
    }
}
