package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.TriggerTimes;

import org.apache.flink.annotation.Internal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Where one registered state's entries live: the FlowKV store chosen for it, split into partition
 * instances by key group. Keys are store keys (key-group prefixed, see {@link KeyBytes}); every
 * operation on a key also takes its key group, which the caller knows (the backend's current key
 * group, or the one a snapshot recorded), and which routes it to its instance.
 *
 * <p>A storage is either a {@link ListStateStorage} (elements appended and read back in order) or a
 * {@link ValueStateStorage} (one value per key and namespace). {@link #forEach} visits one element
 * at a time for list storages and one value at a time for value storages.
 */
@Internal
public interface StateStorage extends Closeable {

    StorePattern pattern();

    /** Whether this storage keeps lists of elements ({@link ListStateStorage}). */
    default boolean isList() {
        return this instanceof ListStateStorage;
    }

    /** Drops the value or the list of elements of (key, namespace). */
    void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException;

    void forEach(EntryVisitor visitor) throws IOException;

    /**
     * Where to tell the store instance of {@code keyGroup} when a window will be read, if it
     * predicts its reads (AUR); null for the others.
     */
    default TriggerTimes triggerTimes(int keyGroup) throws IOException {
        return null;
    }

    void flush() throws IOException;

    /** Store instances that flush on their own ({@link #flushPart}); at least 1. */
    default int parts() {
        return 1;
    }

    /** Flushes the write buffer of one store instance, {@code 0 <= part < parts()}. */
    default void flushPart(int part) throws IOException {
        flush();
    }

    /**
     * Seals every store instance, in instance order: flushes, closes the files being written and
     * writes a manifest per instance (see {@link SealedStore}). The listed files stay immutable,
     * but the store may delete them once it is called again. Nothing is fsynced: a checkpoint's
     * durability is the copy it uploads (see {@code AarStore#seal(boolean)}).
     */
    List<SealedStore> seal() throws IOException;

    /** The directory holding every file of this storage. */
    Path directory();

    /** The statistics of the store instances behind this state; empty when it has none. */
    default List<StoreStats> stats() {
        return List.of();
    }

    /** Bytes of the memory budget the store instances behind this state hold. */
    default long memoryUsed() {
        return 0;
    }
}
