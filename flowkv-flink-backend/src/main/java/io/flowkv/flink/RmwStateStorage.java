package io.flowkv.flink;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * A storage on RMW stores: aggregating/reducing window state (RMW) and every state that is not
 * window contents (GENERIC). A list kept here (list state outside windows, or a list forced onto
 * this store) is one value holding its elements length-prefixed:
 *
 * <pre>
 *   [element length:int BE][element bytes] [element length:int BE][element bytes] ...
 * </pre>
 *
 * so an append reads and rewrites the list. Window contents, which append a lot, get the AAR or AUR
 * store instead.
 */
final class RmwStateStorage extends PartitionedStorage<RmwStore> {
    private final StorePattern pattern;
    private final boolean list;

    RmwStateStorage(
            StorePattern pattern,
            boolean list,
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            int keyGroupPrefixBytes,
            long seed,
            List<Path> manifests)
            throws IOException {
        super(dir, keyGroupPrefixBytes);
        this.pattern = pattern;
        this.list = list;
        int n = instanceCount(manifests, settings.partitions());
        openInstances(
                n,
                i -> {
                    RmwStoreOptions options =
                            RmwStoreOptions.builder(Files.createDirectories(dir.resolve("p" + i)))
                                    .fileIo(StoreFileIo.current())
                                    .maxSpaceAmplification(settings.maxSpaceAmplification())
                                    .writeBufferBytes(
                                            settings.writeBufferBytes(budget.capacity(), 4 * n))
                                    .indexCacheBytes(settings.indexCacheBytes(budget.capacity(), n))
                                    .jitterSeed(seed * 1_000_003L + i)
                                    .build();
                    return manifests == null
                            ? RmwStore.open(options, budget)
                            : RmwStore.restore(options, budget, manifests.get(i));
                });
    }

    @Override
    public StorePattern pattern() {
        return pattern;
    }

    @Override
    public boolean isList() {
        return list;
    }

    @Override
    public void append(byte[] key, byte[] namespace, byte[] element) throws IOException {
        requireList();
        RmwStore store = instanceFor(key);
        byte[] existing = store.get(key, namespace);
        int oldLength = existing == null ? 0 : existing.length;
        byte[] joined = new byte[oldLength + 4 + element.length];
        if (existing != null) {
            System.arraycopy(existing, 0, joined, 0, oldLength);
        }
        writeIntBE(joined, oldLength, element.length);
        System.arraycopy(element, 0, joined, oldLength + 4, element.length);
        store.put(key, namespace, joined);
    }

    @Override
    public boolean getElements(byte[] key, byte[] namespace, ValueConsumer out) throws IOException {
        requireList();
        byte[] value = instanceFor(key).get(key, namespace);
        if (value == null) {
            return false;
        }
        forEachElement(value, out);
        return true;
    }

    static void forEachElement(byte[] encoded, ValueConsumer out) {
        int at = 0;
        while (at < encoded.length) {
            int length = readIntBE(encoded, at);
            out.accept(encoded, at + 4, length);
            at += 4 + length;
        }
    }

    @Override
    public byte[] get(byte[] key, byte[] namespace) throws IOException {
        requireValue();
        return instanceFor(key).get(key, namespace);
    }

    @Override
    public void put(byte[] key, byte[] namespace, byte[] value) throws IOException {
        requireValue();
        instanceFor(key).put(key, namespace, value);
    }

    @Override
    public void remove(byte[] key, byte[] namespace) throws IOException {
        instanceFor(key).remove(key, namespace);
    }

    @Override
    protected StoreStats statsOf(RmwStore instance) {
        return instance.stats();
    }

    @Override
    protected void forEachIn(RmwStore instance, EntryVisitor visitor) throws IOException {
        if (!list) {
            instance.forEach(visitor);
            return;
        }
        instance.forEach(
                (key, namespace, value, offset, length) -> {
                    byte[] encoded =
                            offset == 0 && length == value.length
                                    ? value
                                    : Arrays.copyOfRange(value, offset, offset + length);
                    forEachElement(
                            encoded,
                            (buf, off, len) -> visitor.visit(key, namespace, buf, off, len));
                });
    }

    @Override
    protected SealedStore sealIn(RmwStore instance) throws IOException {
        return instance.seal(false);
    }

    @Override
    public void flush() throws IOException {
        forEachInstance(RmwStore::flush);
    }

    private void requireList() {
        if (!list) {
            throw new IllegalStateException("list operation on a value storage");
        }
    }

    private void requireValue() {
        if (list) {
            throw new IllegalStateException("value operation on a list storage");
        }
    }

    static int readIntBE(byte[] b, int o) {
        return (b[o] & 0xFF) << 24
                | (b[o + 1] & 0xFF) << 16
                | (b[o + 2] & 0xFF) << 8
                | (b[o + 3] & 0xFF);
    }

    static void writeIntBE(byte[] b, int o, int v) {
        b[o] = (byte) (v >>> 24);
        b[o + 1] = (byte) (v >>> 16);
        b[o + 2] = (byte) (v >>> 8);
        b[o + 3] = (byte) v;
    }
}
