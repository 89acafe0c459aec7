package io.flowkv.bench;

import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;

import java.io.IOException;

/**
 * The FlowKV RMW store. An eighth of the budget may be write buffer; the rest is left to the hash
 * index, which holds every live entry (16-byte slots at load factor 0.6, and old plus new table
 * while it doubles), and to I/O buffers, all charged to the same {@link MemoryBudget}. The store
 * refuses to grow its index past the budget, so an RMW trace must keep its live entries within it:
 * roughly budget / 50 bytes.
 */
final class FlowKvRmwTarget implements StoreUnderTest {
    private final MemoryBudget budget;
    private final RmwStore store;
    private final TargetConfig config;

    FlowKvRmwTarget(TargetConfig config) throws IOException {
        this.config = config;
        this.budget = new MemoryBudget(config.memoryBudget());
        RmwStoreOptions.Builder options =
                RmwStoreOptions.builder(config.directory())
                        .writeBufferBytes(config.memoryBudget() / 8)
                        .jitterSeed(1);
        if (!Double.isNaN(config.maxSpaceAmplification())) {
            options.maxSpaceAmplification(config.maxSpaceAmplification());
        }
        this.store = RmwStore.open(options.build(), budget);
    }

    @Override
    public void appendList(byte[] key, byte[] window, byte[] value, long timestamp) {
        throw new UnsupportedOperationException("the RMW store holds single values");
    }

    @Override
    public boolean getList(byte[] key, byte[] window, ValueConsumer consumer) {
        throw new UnsupportedOperationException("the RMW store holds single values");
    }

    @Override
    public boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
        return store.get(key, window, consumer);
    }

    @Override
    public void put(byte[] key, byte[] window, byte[] value) throws IOException {
        store.put(key, window, value);
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
        FlowKvTargets.closeWithoutLeaks(store, budget, Pattern.RMW);
    }
}
