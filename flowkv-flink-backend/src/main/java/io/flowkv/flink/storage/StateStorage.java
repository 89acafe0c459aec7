package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.TriggerTimes;
import io.flowkv.core.ValueConsumer;

import org.apache.flink.annotation.Internal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Where one registered state's entries live: the FlowKV store chosen for it, split into partition
 * instances by key group. Keys are store keys (key-group prefixed, see {@link KeyBytes}).
 *
 * <p>List storages keep elements ({@link #append}, {@link #getElements}); value storages keep one
 * value per (key, namespace) ({@link #get}, {@link #put}). {@link #forEach} visits one element at a
 * time for list storages and one value at a time for value storages.
 */
@Internal
public interface StateStorage extends Closeable {

    StorePattern pattern();

    boolean isList();

    void append(byte[] key, byte[] namespace, byte[] element) throws IOException;

    /** Visits the elements of (key, namespace) in append order; false if there are none. */
    boolean getElements(byte[] key, byte[] namespace, ValueConsumer out) throws IOException;

    byte[] get(byte[] key, byte[] namespace) throws IOException;

    void put(byte[] key, byte[] namespace, byte[] value) throws IOException;

    void remove(byte[] key, byte[] namespace) throws IOException;

    void forEach(EntryVisitor visitor) throws IOException;

    /**
     * Where to tell the store when a window will be read, if it predicts its reads (AUR); null for
     * the others.
     */
    default TriggerTimes triggerTimes() throws IOException {
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
