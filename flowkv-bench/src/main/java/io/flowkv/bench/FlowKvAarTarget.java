package io.flowkv.bench;

import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.aar.AarStore;
import io.flowkv.core.aar.AarStoreOptions;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;

/**
 * The FlowKV AAR store as the Flink backend sets it up: a quarter of the budget may be write
 * buffer, and each window has one partition per key group, so that a window fired key group by key
 * group (as Flink fires it) loads each partition once. Fired windows are read and cleared per key,
 * as Flink's WindowOperator does, not with removeWindow.
 */
final class FlowKvAarTarget implements StoreUnderTest {
    static final int PARTITIONS = RocksDbTarget.MAX_PARALLELISM;

    private final MemoryBudget budget;
    private final AarStore store;
    private final TargetConfig config;

    FlowKvAarTarget(TargetConfig config) throws IOException {
        this.config = config;
        this.budget = new MemoryBudget(config.memoryBudget());
        AarStoreOptions options =
                AarStoreOptions.builder(config.directory())
                        .partitions(PARTITIONS)
                        .partitioner((key, hash, n) -> RocksDbTarget.keyGroup(key) * n / PARTITIONS)
                        .writeBufferBytes(config.memoryBudget() / 4)
                        .jitterSeed(1)
                        .build();
        this.store = AarStore.open(options, budget);
    }

    @Override
    public void appendList(byte[] key, byte[] window, byte[] value, long timestamp)
            throws IOException {
        store.append(key, window, value);
    }

    @Override
    public boolean getList(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
        return store.get(key, window, consumer);
    }

    @Override
    public boolean get(byte[] key, byte[] window, ValueConsumer consumer) {
        throw new UnsupportedOperationException("the AAR store holds lists");
    }

    @Override
    public void put(byte[] key, byte[] window, byte[] value) {
        throw new UnsupportedOperationException("the AAR store holds lists");
    }

    @Override
    public void removeKey(byte[] key, byte[] window) throws IOException {
        store.remove(key, window);
    }

    @Override
    public long diskBytes() throws IOException {
        return Directories.sizeOf(config.directory());
    }

    @Override
    public StoreStats stats() {
        return store.stats();
    }

    @Override
    public void close() throws IOException {
        FlowKvTargets.closeWithoutLeaks(store, budget, Pattern.AAR);
    }
}
