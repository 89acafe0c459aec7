package io.flowkv.flink.storage;

import io.flowkv.core.ListStore;
import io.flowkv.core.ValueConsumer;

import java.io.IOException;
import java.nio.file.Path;

/** A storage of list elements only (the appending stores): value operations are a caller bug. */
abstract class ListStorage<S extends ListStore> extends PartitionedStorage<S> {

    ListStorage(Path directory, int keyGroupPrefixBytes) {
        super(directory, keyGroupPrefixBytes);
    }

    @Override
    public boolean isList() {
        return true;
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
    public byte[] get(byte[] key, byte[] namespace) {
        throw new IllegalStateException("The " + pattern() + " store holds list state only");
    }

    @Override
    public void put(byte[] key, byte[] namespace, byte[] value) {
        throw new IllegalStateException("The " + pattern() + " store holds list state only");
    }
}
