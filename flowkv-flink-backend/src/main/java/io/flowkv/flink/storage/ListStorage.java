package io.flowkv.flink.storage;

import io.flowkv.core.ListStore;
import io.flowkv.core.ValueConsumer;

import java.io.IOException;
import java.nio.file.Path;

/** A storage of list elements on a list store (AAR or AUR), one instance per partition. */
abstract class ListStorage<S extends ListStore> extends PartitionedStorage<S>
        implements ListStateStorage {

    ListStorage(Path directory) {
        super(directory);
    }

    @Override
    public void append(int keyGroup, byte[] key, byte[] namespace, byte[] element)
            throws IOException {
        instanceFor(keyGroup).append(key, namespace, element);
    }

    @Override
    public boolean getElements(int keyGroup, byte[] key, byte[] namespace, ValueConsumer out)
            throws IOException {
        return instanceFor(keyGroup).get(key, namespace, out);
    }

    @Override
    public void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        instanceFor(keyGroup).remove(key, namespace);
    }
}
