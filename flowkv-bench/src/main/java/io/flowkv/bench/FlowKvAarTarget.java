package io.flowkv.bench;

import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.aar.AarStore;
import io.flowkv.core.aar.AarStoreOptions;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;

/**
 * The FlowKV AAR store. A quarter of the budget may be write buffer; a window is split into {@link
 * #PARTITIONS} partitions so that the one partition loaded at a time fits the rest of the budget
 * (with 8, a 30 MB window under a 16 MB budget reloaded its partition for almost every key). Fired
 * windows are read and cleared per key, as Flink's WindowOperator does, not with removeWindow.
 */
final class FlowKvAarTarget implements StoreUnderTest {
    static final int PARTITIONS = 32;

    private final MemoryBudget budget;
    private final AarStore store;
    private final TargetConfig config;

    FlowKvAarTarget(TargetConfig config) throws IOException {
        this.config = config;
        this.budget = new MemoryBudget(config.memoryBudget());
        AarStoreOptions options =
                AarStoreOptions.builder(config.directory())
                        .partitions(PARTITIONS)
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
        store.close();
        if (budget.used() != 0) {
            throw new IllegalStateException("AAR store leaked " + budget);
        }
    }
}
