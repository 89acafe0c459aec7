package io.flowkv.flink;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.aar.AarStore;
import io.flowkv.core.aar.AarStoreOptions;
import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Window contents of tumbling and sliding windows on one AAR store. The store splits each window
 * into {@code partitions} files by key itself (its unit of gradual loading), so one instance per
 * state is enough: more instances would only split the same windows into more files.
 */
final class AarStateStorage extends ListStorage<AarStore> {

    AarStateStorage(
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            int keyGroupPrefixBytes,
            long seed)
            throws IOException {
        super(keyGroupPrefixBytes);
        instances.add(
                AarStore.open(
                        AarStoreOptions.builder(dir)
                                .partitions(settings.partitions())
                                .writeBufferBytes(settings.writeBufferBytes(budget.capacity(), 2))
                                .jitterSeed(seed)
                                .build(),
                        budget));
    }

    @Override
    public StorePattern pattern() {
        return StorePattern.AAR;
    }

    @Override
    public void append(byte[] key, byte[] namespace, byte[] element) throws IOException {
        instanceFor(key).append(key, namespace, element);
    }

    @Override
    public boolean getElements(byte[] key, byte[] namespace, ValueConsumer out) throws IOException {
        return instanceFor(key).get(key, namespace, out);
    }

    @Override
    public void remove(byte[] key, byte[] namespace) throws IOException {
        instanceFor(key).remove(key, namespace);
    }

    @Override
    protected void forEachIn(AarStore instance, EntryVisitor visitor) throws IOException {
        instance.forEach(visitor);
    }

    @Override
    public void flush() throws IOException {
        forEachInstance(AarStore::flush);
    }
}
