package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Map state over a value storage (the RMW store): a small map is one record, a large one a record
 * per entry, so that {@code get}, {@code put}, {@code remove} and {@code contains} of a user key
 * cost a few point operations whatever the map's size, and iteration reads the map's user keys up
 * to 64 at a time instead of the whole map.
 *
 * <p>A map of (key, namespace) is up to three kinds of records under the same store key, told apart
 * by a tag byte at the end of the store namespace (the map's namespace bytes come first,
 * unchanged):
 *
 * <pre>
 *   header  namespace: [ns]['H']                     value, inline:  [entries][-2] then the entries
 *                                                    value, chunked: [entries][first chunk][last chunk][next id]
 *   chunk c namespace: [ns][c:int]['C']              value: [prev][next][n] n x [uk length:int][uk]
 *   entry   namespace: [ns][uk][uk length:int]['E']  value: [chunk][v length:int, -1 = null][v]
 * </pre>
 *
 * <p><b>Inline</b>, a new map's layout: the header holds the whole map, its entries as the raw
 * layout below writes them, in insertion order; there are no chunk or entry records. A put or
 * remove is one get and one put, an iteration one get. A put that would take the map past {@link
 * #INLINE_ENTRIES} entries or its header past {@link #INLINE_BYTES} bytes moves it to the chunked
 * layout, for good: it stays chunked until it is empty (its header is then deleted).
 *
 * <p><b>Chunked:</b> the chunks, a doubly linked list, hold the user keys in insertion order, at
 * most 64 and at most {@link #CHUNK_BYTES} of them each (a longer key gets a chunk of its own);
 * every entry names its chunk. A new key is appended to the last chunk (a new chunk when it is
 * full); a removed key leaves its chunk, and an emptied chunk is unlinked. Iteration walks the
 * chunks from the first: insertion order, as Flink's tests expect of small maps. All integers
 * big-endian; chunk ids are ints, -1 for none. The storage-level operations keep the contract of a
 * value storage of whole maps in the raw layout below, so snapshots, restores, migration and key
 * iteration need no special case: {@link #forEach} visits each entry as a one-entry map, {@link
 * #put} merges a map's entries, {@link #get} assembles the whole map and {@link #remove} clears it.
 *
 * <p>The raw layout of a whole map, in which maps cross the storage boundary (snapshots, restore,
 * migration, queryable state), the same bytes a savepoint's entries are made of:
 *
 * <pre>
 *   [entry count:int] then per entry
 *   [user key length:int][user key bytes][value length:int, -1 = null][value bytes]
 * </pre>
 *
 * <p>Not a store of its own: a view over {@code inner}, which holds the records. Single writer.
 */
@Internal
public final class MapStateStorage implements ValueStateStorage {
    static final int CHUNK_KEYS = 64;

    /** Most entries an inline map holds. */
    public static final int INLINE_ENTRIES = 32;

    /** Most bytes an inline map's header takes. */
    static final int INLINE_BYTES = 4096;

    /** The header field after the entry count in an inline map, where a chunked one has a chunk. */
    static final int INLINE = -2;

    /** Where an inline header's entries begin. */
    private static final int INLINE_ENTRIES_AT = 8;

    /**
     * User-key bytes (with their length fields) a chunk takes before a new chunk starts. Every new
     * key rewrites the last chunk, so the chunk's size is what an insert writes beside the entry:
     * maps keyed by whole rows (a SQL join's records) would otherwise rewrite up to 64 rows per
     * insert. A chunk always takes its first key, however long.
     */
    static final int CHUNK_BYTES = 1024;

    /** No chunk. */
    public static final int NONE = -1;

    private static final int H_COUNT = 0;
    private static final int H_FIRST = 4;
    private static final int H_LAST = 8;
    private static final int H_NEXT_ID = 12;
    private static final byte HEADER = 'H';
    private static final byte CHUNK = 'C';
    private static final byte ENTRY = 'E';

    /** Offset of the value in an entry record's value. */
    public static final int ENTRY_VALUE = 8;

    private final ValueStateStorage inner;

    public MapStateStorage(ValueStateStorage inner) {
        this.inner = inner;
    }

    // ------------------------------------------------------------------ per entry

    /** The entry record of {@code userKey} ({@link #entryValueLength}, then the value), or null. */
    public byte[] getEntry(int keyGroup, byte[] key, byte[] namespace, byte[] userKey)
            throws IOException {
        byte[] header = inner.get(keyGroup, key, headerName(namespace));
        if (header == null) {
            return null;
        }
        if (!isInline(header)) {
            return inner.get(keyGroup, key, entryName(namespace, userKey));
        }
        int at = findInline(header, userKey);
        return at < 0 ? null : inlineEntry(header, at);
    }

    /**
     * The entry record of {@code userKey} in a chunked map, or null: for a key read from one of its
     * chunks, which skips the header {@link #getEntry} reads first.
     */
    public byte[] getChunkedEntry(int keyGroup, byte[] key, byte[] namespace, byte[] userKey)
            throws IOException {
        return inner.get(keyGroup, key, entryName(namespace, userKey));
    }

    /** -1 for a null user value. */
    public static int entryValueLength(byte[] entry) {
        return readInt(entry, 4);
    }

    /** Sets {@code userKey} to {@code value} (null: a null user value). */
    public void putEntry(int keyGroup, byte[] key, byte[] namespace, byte[] userKey, byte[] value)
            throws IOException {
        byte[] headerName = headerName(namespace);
        byte[] header = inner.get(keyGroup, key, headerName);
        if (header == null || isInline(header)) {
            byte[] updated = inlinePut(header, userKey, value);
            if (updated != null) {
                inner.put(keyGroup, key, headerName, updated);
                return;
            }
            header = toChunked(keyGroup, key, namespace, header);
        }
        putChunked(keyGroup, key, namespace, header, userKey, value);
    }

    /**
     * Writes the entries of inline map {@code inline} in the chunked layout, in their order, and
     * returns the chunked header (written too).
     */
    private byte[] toChunked(int keyGroup, byte[] key, byte[] namespace, byte[] inline)
            throws IOException {
        byte[] header = newHeader();
        int count = readInt(inline, 0);
        for (int i = 0, at = INLINE_ENTRIES_AT; i < count; i++) {
            int keyLength = readInt(inline, at);
            byte[] userKey = Arrays.copyOfRange(inline, at + 4, at + 4 + keyLength);
            int valueAt = at + 4 + keyLength;
            int valueLength = readInt(inline, valueAt);
            byte[] userValue =
                    valueLength < 0
                            ? null
                            : Arrays.copyOfRange(inline, valueAt + 4, valueAt + 4 + valueLength);
            putChunked(keyGroup, key, namespace, header, userKey, userValue);
            at = valueAt + 4 + Math.max(0, valueLength);
        }
        return header;
    }

    /** Sets {@code userKey} in a chunked map whose header is {@code header} (updated in place). */
    private void putChunked(
            int keyGroup, byte[] key, byte[] namespace, byte[] header, byte[] userKey, byte[] value)
            throws IOException {
        byte[] name = entryName(namespace, userKey);
        byte[] old = inner.get(keyGroup, key, name);
        int chunkId;
        if (old != null) {
            chunkId = readInt(old, 0);
        } else {
            int last = readInt(header, H_LAST);
            Chunk tail = last == NONE ? null : chunk(keyGroup, key, namespace, last);
            if (tail != null && tail.accepts(userKey)) {
                chunkId = last;
                tail.keys.add(userKey);
                inner.put(keyGroup, key, chunkName(namespace, last), tail.encode());
            } else {
                chunkId = readInt(header, H_NEXT_ID);
                writeInt(header, H_NEXT_ID, chunkId + 1);
                Chunk fresh = new Chunk(last, NONE, new ArrayList<>());
                fresh.keys.add(userKey);
                inner.put(keyGroup, key, chunkName(namespace, chunkId), fresh.encode());
                if (tail != null) {
                    tail.next = chunkId;
                    inner.put(keyGroup, key, chunkName(namespace, last), tail.encode());
                } else {
                    writeInt(header, H_FIRST, chunkId);
                }
                writeInt(header, H_LAST, chunkId);
            }
            writeInt(header, H_COUNT, readInt(header, H_COUNT) + 1);
            inner.put(keyGroup, key, headerName(namespace), header);
        }
        inner.put(
                keyGroup,
                key,
                name,
                entryValue(chunkId, value, 0, value == null ? -1 : value.length));
    }

    /** Removes {@code userKey}; returns whether it was there. */
    public boolean removeEntry(int keyGroup, byte[] key, byte[] namespace, byte[] userKey)
            throws IOException {
        byte[] headerName = headerName(namespace);
        byte[] header = inner.get(keyGroup, key, headerName);
        if (header == null) {
            return false;
        }
        if (isInline(header)) {
            int at = findInline(header, userKey);
            if (at < 0) {
                return false;
            }
            if (readInt(header, 0) == 1) {
                inner.remove(keyGroup, key, headerName);
            } else {
                inner.put(keyGroup, key, headerName, inlineRemove(header, at));
            }
            return true;
        }
        byte[] name = entryName(namespace, userKey);
        byte[] old = inner.get(keyGroup, key, name);
        if (old == null) {
            return false;
        }
        int chunkId = readInt(old, 0);
        Chunk chunk = chunk(keyGroup, key, namespace, chunkId);
        if (!chunk.remove(userKey)) {
            throw new IllegalStateException(
                    "map state entry names chunk " + chunkId + ", which does not list its key");
        }
        if (chunk.keys.isEmpty()) {
            inner.remove(keyGroup, key, chunkName(namespace, chunkId));
            if (chunk.prev == NONE) {
                writeInt(header, H_FIRST, chunk.next);
            } else {
                Chunk prev = chunk(keyGroup, key, namespace, chunk.prev);
                prev.next = chunk.next;
                inner.put(keyGroup, key, chunkName(namespace, chunk.prev), prev.encode());
            }
            if (chunk.next == NONE) {
                writeInt(header, H_LAST, chunk.prev);
            } else {
                Chunk next = chunk(keyGroup, key, namespace, chunk.next);
                next.prev = chunk.prev;
                inner.put(keyGroup, key, chunkName(namespace, chunk.next), next.encode());
            }
        } else {
            inner.put(keyGroup, key, chunkName(namespace, chunkId), chunk.encode());
        }
        inner.remove(keyGroup, key, name);
        int count = readInt(header, H_COUNT) - 1;
        if (count == 0) {
            inner.remove(keyGroup, key, headerName);
        } else {
            writeInt(header, H_COUNT, count);
            inner.put(keyGroup, key, headerName, header);
        }
        return true;
    }

    /** Entries in the map of (key, namespace); 0 when there is none. */
    public int size(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        byte[] header = inner.get(keyGroup, key, headerName(namespace));
        return header == null ? 0 : readInt(header, H_COUNT);
    }

    /**
     * The map's first chunk, or null for an empty map. An inline map is one chunk that holds its
     * entries too ({@link Chunk#entry}), read in this one get.
     */
    public Chunk firstChunk(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        byte[] header = inner.get(keyGroup, key, headerName(namespace));
        if (header == null) {
            return null;
        }
        if (isInline(header)) {
            int count = readInt(header, 0);
            List<byte[]> keys = new ArrayList<>(count);
            List<byte[]> entries = new ArrayList<>(count);
            for (int i = 0, at = INLINE_ENTRIES_AT; i < count; i++) {
                int keyLength = readInt(header, at);
                keys.add(Arrays.copyOfRange(header, at + 4, at + 4 + keyLength));
                entries.add(inlineEntry(header, at));
                at = nextInline(header, at);
            }
            return new Chunk(NONE, NONE, keys, entries);
        }
        return chunkOrNull(keyGroup, key, namespace, readInt(header, H_FIRST));
    }

    /** Chunk {@code id} of the map, or null if it is gone (emptied since its id was read). */
    public Chunk chunkOrNull(int keyGroup, byte[] key, byte[] namespace, int id)
            throws IOException {
        byte[] bytes = inner.get(keyGroup, key, chunkName(namespace, id));
        return bytes == null ? null : Chunk.decode(bytes);
    }

    private Chunk chunk(int keyGroup, byte[] key, byte[] namespace, int id) throws IOException {
        Chunk chunk = chunkOrNull(keyGroup, key, namespace, id);
        if (chunk == null) {
            throw new IllegalStateException("map state chunk " + id + " is missing");
        }
        return chunk;
    }

    /**
     * User keys in insertion order, linked to the chunks before and after; an inline map's one
     * chunk holds their entry records too.
     */
    public static final class Chunk {
        int prev;
        public int next;
        public final List<byte[]> keys;
        private final List<byte[]> entries;

        Chunk(int prev, int next, List<byte[]> keys) {
            this(prev, next, keys, null);
        }

        private Chunk(int prev, int next, List<byte[]> keys, List<byte[]> entries) {
            this.prev = prev;
            this.next = next;
            this.keys = keys;
            this.entries = entries;
        }

        /**
         * The entry record of the {@code i}-th key as it was when the chunk was read (inline maps),
         * or null: then {@link #getEntry} reads it.
         */
        public byte[] entry(int i) {
            return entries == null ? null : entries.get(i);
        }

        /** Whether {@code userKey} joins this chunk rather than a new one. */
        boolean accepts(byte[] userKey) {
            if (keys.size() >= CHUNK_KEYS) {
                return false;
            }
            long bytes = 4L + userKey.length;
            for (byte[] k : keys) {
                bytes += 4 + k.length;
            }
            return keys.isEmpty() || bytes <= CHUNK_BYTES;
        }

        boolean remove(byte[] userKey) {
            for (int i = 0; i < keys.size(); i++) {
                if (Arrays.equals(keys.get(i), userKey)) {
                    keys.remove(i);
                    return true;
                }
            }
            return false;
        }

        byte[] encode() {
            int size = 12;
            for (byte[] k : keys) {
                size += 4 + k.length;
            }
            byte[] chunk = new byte[size];
            writeInt(chunk, 0, prev);
            writeInt(chunk, 4, next);
            writeInt(chunk, 8, keys.size());
            int at = 12;
            for (byte[] k : keys) {
                writeInt(chunk, at, k.length);
                System.arraycopy(k, 0, chunk, at + 4, k.length);
                at += 4 + k.length;
            }
            return chunk;
        }

        static Chunk decode(byte[] chunk) {
            int n = readInt(chunk, 8);
            List<byte[]> keys = new ArrayList<>(n + 1);
            int at = 12;
            for (int i = 0; i < n; i++) {
                int length = readInt(chunk, at);
                keys.add(Arrays.copyOfRange(chunk, at + 4, at + 4 + length));
                at += 4 + length;
            }
            return new Chunk(readInt(chunk, 0), readInt(chunk, 4), keys);
        }
    }

    // ------------------------------------------------------------------ whole maps

    /** What {@link #smallMap} returns when (key, namespace) has no map. */
    public static final byte[] NO_MAP = new byte[0];

    /**
     * For a cache of small maps: the map of (key, namespace) in the raw layout if it is inline,
     * {@link #NO_MAP} if there is none, or null if it is chunked (large). One get.
     */
    public byte[] smallMap(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        byte[] header = inner.get(keyGroup, key, headerName(namespace));
        if (header == null) {
            return NO_MAP;
        }
        return isInline(header) ? inlineToRaw(header) : null;
    }

    /**
     * An inline map's header in the raw layout: the count, then the entries as the header holds
     * them.
     */
    private static byte[] inlineToRaw(byte[] header) {
        byte[] raw = new byte[header.length - INLINE_ENTRIES_AT + 4];
        System.arraycopy(header, 0, raw, 0, 4);
        System.arraycopy(header, INLINE_ENTRIES_AT, raw, 4, raw.length - 4);
        return raw;
    }

    /**
     * Replaces the map of (key, namespace), which is absent or inline (as {@link #smallMap} found
     * it), with {@code raw}, a map in the raw layout: one put when it fits inline, one remove when
     * it is empty; otherwise the map is cleared and written entry by entry (chunked), and this
     * returns false: the map is large from then on.
     */
    public boolean replaceSmallMap(int keyGroup, byte[] key, byte[] namespace, byte[] raw)
            throws IOException {
        int count = readInt(raw, 0);
        int headerLength = raw.length - 4 + INLINE_ENTRIES_AT;
        if (count == 0) {
            remove(keyGroup, key, namespace);
        } else if (count <= INLINE_ENTRIES && headerLength <= INLINE_BYTES) {
            byte[] header = new byte[headerLength];
            System.arraycopy(raw, 0, header, 0, 4);
            writeInt(header, 4, INLINE);
            System.arraycopy(raw, 4, header, INLINE_ENTRIES_AT, raw.length - 4);
            inner.put(keyGroup, key, headerName(namespace), header);
        } else {
            remove(keyGroup, key, namespace);
            put(keyGroup, key, namespace, raw);
            return false;
        }
        return true;
    }

    @Override
    public byte[] get(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        byte[] header = inner.get(keyGroup, key, headerName(namespace));
        if (header == null) {
            return null;
        }
        if (isInline(header)) {
            return inlineToRaw(header);
        }
        List<byte[]> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (int c = readInt(header, H_FIRST); c != NONE; ) {
            Chunk chunk = chunk(keyGroup, key, namespace, c);
            for (byte[] userKey : chunk.keys) {
                byte[] entry = getChunkedEntry(keyGroup, key, namespace, userKey);
                int length = entryValueLength(entry);
                keys.add(userKey);
                values.add(
                        length < 0
                                ? null
                                : Arrays.copyOfRange(entry, ENTRY_VALUE, ENTRY_VALUE + length));
            }
            c = chunk.next;
        }
        return keys.isEmpty() ? null : encodeRaw(keys, values);
    }

    /** Merges the entries of {@code value}, a map in the raw layout. */
    @Override
    public void put(int keyGroup, byte[] key, byte[] namespace, byte[] value) throws IOException {
        forEachRawEntry(
                value,
                (buf, keyOffset, keyLength, valueOffset, valueLength) ->
                        putEntry(
                                keyGroup,
                                key,
                                namespace,
                                Arrays.copyOfRange(buf, keyOffset, keyOffset + keyLength),
                                valueLength < 0
                                        ? null
                                        : Arrays.copyOfRange(
                                                buf, valueOffset, valueOffset + valueLength)));
    }

    /** Clears the whole map: every entry, chunk and the header. */
    @Override
    public void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        byte[] header = inner.get(keyGroup, key, headerName(namespace));
        if (header == null) {
            return;
        }
        for (int c = isInline(header) ? NONE : readInt(header, H_FIRST); c != NONE; ) {
            Chunk chunk = chunk(keyGroup, key, namespace, c);
            for (byte[] userKey : chunk.keys) {
                inner.remove(keyGroup, key, entryName(namespace, userKey));
            }
            inner.remove(keyGroup, key, chunkName(namespace, c));
            c = chunk.next;
        }
        inner.remove(keyGroup, key, headerName(namespace));
    }

    /** Visits every entry as a one-entry map under the map's own namespace. */
    @Override
    public void forEach(EntryVisitor visitor) throws IOException {
        inner.forEach(
                (key, name, value, offset, length) -> {
                    if (name.length > 0
                            && name[name.length - 1] == HEADER
                            && length >= INLINE_ENTRIES_AT
                            && readInt(value, offset + 4) == INLINE) {
                        visitInline(key, name, value, offset, visitor);
                        return;
                    }
                    if (name.length == 0 || name[name.length - 1] != ENTRY) {
                        return;
                    }
                    int userKeyLength = readInt(name, name.length - 5);
                    int namespaceEnd = name.length - 5 - userKeyLength;
                    byte[] namespace = Arrays.copyOfRange(name, 0, namespaceEnd);
                    int valueLength = readInt(value, offset + 4);
                    byte[] one = new byte[4 + 4 + userKeyLength + 4 + Math.max(0, valueLength)];
                    writeInt(one, 0, 1);
                    writeInt(one, 4, userKeyLength);
                    System.arraycopy(name, namespaceEnd, one, 8, userKeyLength);
                    writeInt(one, 8 + userKeyLength, valueLength);
                    if (valueLength > 0) {
                        System.arraycopy(
                                value, offset + ENTRY_VALUE, one, 12 + userKeyLength, valueLength);
                    }
                    visitor.visit(key, namespace, one, 0, one.length);
                });
    }

    /** Encodes serialized user keys and values (null for a null value) in the raw layout. */
    public static byte[] encodeRaw(List<byte[]> userKeys, List<byte[]> userValues)
            throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeInt(userKeys.size());
        for (int i = 0; i < userKeys.size(); i++) {
            byte[] k = userKeys.get(i);
            byte[] v = userValues.get(i);
            out.writeInt(k.length);
            out.write(k);
            out.writeInt(v == null ? -1 : v.length);
            if (v != null) {
                out.write(v);
            }
        }
        return out.getCopyOfBuffer();
    }

    /** Visits the entries of a stored map as raw bytes; a null value has {@code valueLength -1}. */
    public interface RawEntryVisitor {
        void visit(byte[] buf, int keyOffset, int keyLength, int valueOffset, int valueLength)
                throws IOException;
    }

    public static void forEachRawEntry(byte[] bytes, RawEntryVisitor visitor) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        int count = in.readInt();
        for (int i = 0; i < count; i++) {
            int keyLength = in.readInt();
            int keyOffset = in.getPosition();
            in.skipBytesToRead(keyLength);
            int valueLength = in.readInt();
            int valueOffset = in.getPosition();
            if (valueLength > 0) {
                in.skipBytesToRead(valueLength);
            }
            visitor.visit(bytes, keyOffset, keyLength, valueOffset, valueLength);
        }
    }

    // ------------------------------------------------------------------ delegation

    @Override
    public StorePattern pattern() {
        return inner.pattern();
    }

    @Override
    public void flush() throws IOException {
        inner.flush();
    }

    @Override
    public int parts() {
        return inner.parts();
    }

    @Override
    public void flushPart(int part) throws IOException {
        inner.flushPart(part);
    }

    @Override
    public List<SealedStore> seal() throws IOException {
        return inner.seal();
    }

    @Override
    public Path directory() {
        return inner.directory();
    }

    @Override
    public List<StoreStats> stats() {
        return inner.stats();
    }

    @Override
    public long memoryUsed() {
        return inner.memoryUsed();
    }

    /** A view: closing it leaves {@code inner} open. */
    @Override
    public void close() {}

    // ------------------------------------------------------------------ inline maps

    private static boolean isInline(byte[] header) {
        return readInt(header, 4) == INLINE;
    }

    /** Where the entry of {@code userKey} begins in an inline header, or -1. */
    private static int findInline(byte[] header, byte[] userKey) {
        int count = readInt(header, 0);
        for (int i = 0, at = INLINE_ENTRIES_AT; i < count; i++) {
            int keyLength = readInt(header, at);
            if (keyLength == userKey.length
                    && Arrays.equals(
                            header, at + 4, at + 4 + keyLength, userKey, 0, userKey.length)) {
                return at;
            }
            at = nextInline(header, at);
        }
        return -1;
    }

    /** Where the entry after the one at {@code at} begins. */
    private static int nextInline(byte[] header, int at) {
        int valueAt = at + 4 + readInt(header, at);
        return valueAt + 4 + Math.max(0, readInt(header, valueAt));
    }

    /** The entry record of the inline entry at {@code at}, as {@link #getEntry} returns it. */
    private static byte[] inlineEntry(byte[] header, int at) {
        int valueAt = at + 4 + readInt(header, at);
        return entryValue(INLINE, header, valueAt + 4, readInt(header, valueAt));
    }

    /**
     * The inline header of the map {@code header} (null: an empty map) with {@code userKey} set to
     * {@code value} (a new key goes last), or null if the map would outgrow the inline layout.
     */
    private static byte[] inlinePut(byte[] header, byte[] userKey, byte[] value) {
        int count = header == null ? 0 : readInt(header, 0);
        int at = header == null ? -1 : findInline(header, userKey);
        int valueLength = value == null ? -1 : value.length;
        int entryLength = 8 + userKey.length + Math.max(0, valueLength);
        int before = header == null ? INLINE_ENTRIES_AT : header.length;
        int after =
                at < 0
                        ? before + entryLength
                        : before - (nextInline(header, at) - at) + entryLength;
        if (after > INLINE_BYTES || (at < 0 && count + 1 > INLINE_ENTRIES)) {
            return null;
        }
        byte[] updated = new byte[after];
        int write;
        if (at < 0) {
            if (header != null) {
                System.arraycopy(header, 0, updated, 0, before);
            }
            writeInt(updated, 0, count + 1);
            write = before;
        } else {
            int next = nextInline(header, at);
            System.arraycopy(header, 0, updated, 0, at);
            // The entry keeps its place: the value changes, the insertion order does not.
            System.arraycopy(header, next, updated, at + entryLength, before - next);
            write = at;
        }
        writeInt(updated, 4, INLINE);
        writeInt(updated, write, userKey.length);
        System.arraycopy(userKey, 0, updated, write + 4, userKey.length);
        writeInt(updated, write + 4 + userKey.length, valueLength);
        if (valueLength > 0) {
            System.arraycopy(value, 0, updated, write + 8 + userKey.length, valueLength);
        }
        return updated;
    }

    /** The inline header without the entry at {@code at}; the map keeps at least one entry. */
    private static byte[] inlineRemove(byte[] header, int at) {
        int next = nextInline(header, at);
        byte[] updated = new byte[header.length - (next - at)];
        System.arraycopy(header, 0, updated, 0, at);
        System.arraycopy(header, next, updated, at, header.length - next);
        writeInt(updated, 0, readInt(header, 0) - 1);
        return updated;
    }

    /** Visits each entry of the inline header record {@code name} as a one-entry map. */
    private static void visitInline(
            byte[] key, byte[] name, byte[] value, int offset, EntryVisitor visitor) {
        byte[] namespace = Arrays.copyOf(name, name.length - 1);
        int count = readInt(value, offset);
        int at = offset + INLINE_ENTRIES_AT;
        for (int i = 0; i < count; i++) {
            int next = nextInline(value, at);
            byte[] one = new byte[4 + next - at];
            writeInt(one, 0, 1);
            System.arraycopy(value, at, one, 4, next - at);
            visitor.visit(key, namespace, one, 0, one.length);
            at = next;
        }
    }

    // ------------------------------------------------------------------ record layout

    static byte[] headerName(byte[] namespace) {
        byte[] name = Arrays.copyOf(namespace, namespace.length + 1);
        name[namespace.length] = HEADER;
        return name;
    }

    static byte[] chunkName(byte[] namespace, int chunk) {
        byte[] name = Arrays.copyOf(namespace, namespace.length + 5);
        writeInt(name, namespace.length, chunk);
        name[namespace.length + 4] = CHUNK;
        return name;
    }

    static byte[] entryName(byte[] namespace, byte[] userKey) {
        int n = namespace.length;
        byte[] name = Arrays.copyOf(namespace, n + userKey.length + 5);
        System.arraycopy(userKey, 0, name, n, userKey.length);
        writeInt(name, n + userKey.length, userKey.length);
        name[name.length - 1] = ENTRY;
        return name;
    }

    static byte[] entryValue(int chunk, byte[] value, int offset, int length) {
        byte[] entry = new byte[ENTRY_VALUE + Math.max(0, length)];
        writeInt(entry, 0, chunk);
        writeInt(entry, 4, length);
        if (length > 0) {
            System.arraycopy(value, offset, entry, ENTRY_VALUE, length);
        }
        return entry;
    }

    private static byte[] newHeader() {
        byte[] header = new byte[16];
        writeInt(header, H_FIRST, NONE);
        writeInt(header, H_LAST, NONE);
        return header;
    }

    static int readInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24
                | (b[at + 1] & 0xFF) << 16
                | (b[at + 2] & 0xFF) << 8
                | (b[at + 3] & 0xFF);
    }

    static void writeInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }
}
