package io.flowkv.flink;

import java.nio.file.Path;

/** A storage of list elements only (the appending stores): value operations are a caller bug. */
abstract class ListStorage<S extends AutoCloseable> extends PartitionedStorage<S> {

    ListStorage(Path directory, int keyGroupPrefixBytes) {
        super(directory, keyGroupPrefixBytes);
    }

    @Override
    public boolean isList() {
        return true;
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
