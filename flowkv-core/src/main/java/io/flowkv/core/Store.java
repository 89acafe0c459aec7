package io.flowkv.core;

import java.io.Closeable;
import java.io.IOException;

/**
 * What every FlowKV store does besides reading and writing its entries: flush its write buffer,
 * seal its files for a checkpoint, visit every entry, report its counters and its share of the
 * memory budget. Reads and writes are in {@link ListStore} and {@link ValueStore}.
 *
 * <p>A store has a single writer thread: every method, {@link #stats()} excepted, is called from
 * it. {@link #stats()} may be read from a metrics thread and is then slightly stale.
 */
public interface Store extends Closeable {

    /** Writes the write buffer out to the store's log; buffered entries stay readable. */
    void flush() throws IOException;

    /**
     * Flushes, closes the files being written and writes a manifest; see {@link SealedStore} for
     * what the caller may do with the files and for {@code durable}.
     */
    SealedStore seal(boolean durable) throws IOException;

    /** {@link #seal(boolean) seal(true)}: the files and the manifest are fsynced. */
    default SealedStore seal() throws IOException {
        return seal(true);
    }

    /** Visits every live entry (a list store: every element), in no particular order. */
    void forEach(EntryVisitor visitor) throws IOException;

    /** The store's counters; the same instance for the store's lifetime. */
    StoreStats stats();

    /** Bytes of the memory budget the store holds now. */
    long memoryUsed();

    /** Releases every byte of the budget the store holds and closes its files; idempotent. */
    @Override
    void close() throws IOException;
}
