package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.flink.config.FlowKVSettings;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * A storage of lists on RMW stores (list state outside windows, or window contents forced onto this
 * store). A list is a tail record and sealed chunks, all under the list's (key, namespace +
 * suffix):
 *
 * <pre>
 *   (key, [namespace]['T'])             [sealed chunks: int BE][elements]   the tail
 *   (key, [namespace][i: int BE]['S'])  [elements]                          chunk i, 0 <= i < sealed
 *   elements: [element length: int BE][element bytes] ...
 * </pre>
 *
 * An append reads and rewrites the tail only; once the tail holds {@link #TAIL_BYTES} it becomes
 * the next sealed chunk. So an append costs O(tail), whatever the list's length, and a read visits
 * the chunks in order, then the tail. {@link #forEach} still yields every list whole and in order,
 * element by element (the canonical form snapshots and rescaling use).
 */
final class RmwListStorage extends RmwStorage implements ListStateStorage {
    /** Tail bytes at which an append first seals the tail as a chunk. */
    static final int TAIL_BYTES = 4096;

    private static final byte TAIL = 'T';
    private static final byte SEALED = 'S';

    RmwListStorage(
            StorePattern pattern,
            Path dir,
            MemoryBudget budget,
            FlowKVSettings settings,
            FileIo fileIo,
            long seed,
            List<Path> manifests)
            throws IOException {
        super(pattern, dir, budget, settings, fileIo, seed, manifests);
    }

    @Override
    public void append(int keyGroup, byte[] key, byte[] namespace, byte[] element)
            throws IOException {
        RmwStore store = instanceFor(keyGroup);
        byte[] tailName = tailName(namespace);
        byte[] tail = store.get(key, tailName);
        int sealed = tail == null ? 0 : readIntBE(tail, 0);
        int tailBytes = tail == null ? 0 : tail.length - 4;
        if (tailBytes > 0 && tailBytes + 4 + element.length > TAIL_BYTES) {
            store.put(key, chunkName(namespace, sealed), Arrays.copyOfRange(tail, 4, tail.length));
            sealed++;
            tailBytes = 0;
        }
        byte[] joined = new byte[4 + tailBytes + 4 + element.length];
        writeIntBE(joined, 0, sealed);
        if (tailBytes > 0) {
            System.arraycopy(tail, 4, joined, 4, tailBytes);
        }
        writeIntBE(joined, 4 + tailBytes, element.length);
        System.arraycopy(element, 0, joined, 8 + tailBytes, element.length);
        store.put(key, tailName, joined);
    }

    @Override
    public boolean getElements(int keyGroup, byte[] key, byte[] namespace, ValueConsumer out)
            throws IOException {
        RmwStore store = instanceFor(keyGroup);
        byte[] tail = store.get(key, tailName(namespace));
        if (tail == null) {
            return false;
        }
        forEachListElement(store, key, namespace, tail, out);
        return true;
    }

    /** The sealed chunks of the list, in order, then its tail (a copy of the tail record). */
    private void forEachListElement(
            RmwStore store, byte[] key, byte[] namespace, byte[] tail, ValueConsumer out)
            throws IOException {
        int sealed = readIntBE(tail, 0);
        for (int i = 0; i < sealed; i++) {
            byte[] chunk = store.get(key, chunkName(namespace, i));
            if (chunk == null) {
                throw new IllegalStateException(
                        "FlowKV list state: chunk "
                                + i
                                + " of "
                                + sealed
                                + " is missing in the store under "
                                + directory());
            }
            forEachElement(chunk, 0, chunk.length, out);
        }
        forEachElement(tail, 4, tail.length, out);
    }

    static void forEachElement(byte[] encoded, ValueConsumer out) {
        forEachElement(encoded, 0, encoded.length, out);
    }

    private static void forEachElement(byte[] encoded, int from, int end, ValueConsumer out) {
        int at = from;
        while (at < end) {
            int length = readIntBE(encoded, at);
            out.accept(encoded, at + 4, length);
            at += 4 + length;
        }
    }

    @Override
    public void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        RmwStore store = instanceFor(keyGroup);
        byte[] tailName = tailName(namespace);
        byte[] tail = store.get(key, tailName);
        if (tail == null) {
            return;
        }
        for (int i = readIntBE(tail, 0) - 1; i >= 0; i--) {
            store.remove(key, chunkName(namespace, i));
        }
        store.remove(key, tailName);
    }

    @Override
    public void forEach(EntryVisitor visitor) throws IOException {
        for (RmwStore instance : instances) {
            forEachList(instance, visitor);
        }
    }

    /**
     * Every list of one instance once, from its tail record: its chunks are read by key, in order.
     */
    private void forEachList(RmwStore instance, EntryVisitor visitor) throws IOException {
        try {
            instance.forEach(
                    (key, name, value, offset, length) -> {
                        if (name.length == 0 || name[name.length - 1] != TAIL) {
                            return;
                        }
                        byte[] namespace = Arrays.copyOf(name, name.length - 1);
                        byte[] tail = Arrays.copyOfRange(value, offset, offset + length);
                        try {
                            forEachListElement(
                                    instance,
                                    key,
                                    namespace,
                                    tail,
                                    (buf, off, len) ->
                                            visitor.visit(key, namespace, buf, off, len));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    static byte[] tailName(byte[] namespace) {
        byte[] name = Arrays.copyOf(namespace, namespace.length + 1);
        name[namespace.length] = TAIL;
        return name;
    }

    static byte[] chunkName(byte[] namespace, int chunk) {
        byte[] name = Arrays.copyOf(namespace, namespace.length + 5);
        writeIntBE(name, namespace.length, chunk);
        name[namespace.length + 4] = SEALED;
        return name;
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
