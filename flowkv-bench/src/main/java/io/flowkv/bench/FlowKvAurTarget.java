package io.flowkv.bench;

import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.aur.AurStore;
import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;

/**
 * The FlowKV AUR store, told each session's trigger time as Flink's backend tells it from the
 * window timers. A quarter of the budget may be write buffer and half prefetch buffer; the window
 * table and I/O buffers take the rest, all charged to the same {@link MemoryBudget}.
 */
final class FlowKvAurTarget implements StoreUnderTest {
    private final MemoryBudget budget;
    private final AurStore store;
    private final TargetConfig config;

    FlowKvAurTarget(TargetConfig config) throws IOException {
        this.config = config;
        this.budget = new MemoryBudget(config.memoryBudget());
        AurStoreOptions.Builder options =
                AurStoreOptions.builder(config.directory())
                        .writeBufferLimit(config.memoryBudget() / 4)
                        .prefetchBufferLimit(config.memoryBudget() / 2)
                        .jitterSeed(1);
        if (!Double.isNaN(config.readBatchRatio())) {
            options.readBatchRatio(config.readBatchRatio());
        }
        if (!Double.isNaN(config.maxSpaceAmplification())) {
            options.maxSpaceAmplification(config.maxSpaceAmplification());
        }
        this.store = AurStore.open(options.build(), budget);
    }

    @Override
    public void appendList(byte[] key, byte[] window, byte[] value, long timestamp)
            throws IOException {
        store.append(key, window, value, timestamp);
    }

    @Override
    public void setTriggerTime(byte[] key, byte[] window, long triggerTime) {
        store.setTriggerTime(key, window, triggerTime);
    }

    @Override
    public boolean getList(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
        return store.get(key, window, consumer);
    }

    @Override
    public boolean get(byte[] key, byte[] window, ValueConsumer consumer) {
        throw new UnsupportedOperationException("the AUR store holds lists");
    }

    @Override
    public void put(byte[] key, byte[] window, byte[] value) {
        throw new UnsupportedOperationException("the AUR store holds lists");
    }

    @Override
    public void removeKey(byte[] key, byte[] window) {
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
    public double hitRatio() {
        return store.hitRatio();
    }

    @Override
    public double readAmplification() {
        return store.readAmplification();
    }

    @Override
    public void close() throws IOException {
        FlowKvTargets.closeWithoutLeaks(store, budget, Pattern.AUR);
    }
}
