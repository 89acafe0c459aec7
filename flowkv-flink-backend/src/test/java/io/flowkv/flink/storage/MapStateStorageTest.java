package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The chunk layout of per-entry map state over a value storage (docs/FORMAT.md). */
class MapStateStorageTest {
    private static final int KEY_GROUP = 0;
    private static final byte[] KEY = {1, 2, 3};
    private static final byte[] NS = {9};

    /**
     * A SQL join keys its maps by whole rows. Each new key rewrites the last chunk, so a chunk
     * stops at 1 KiB of keys: 300-byte keys go three to a chunk, and what an insert writes stays
     * near the key's own size instead of growing to 64 keys' worth.
     */
    @Test
    void shouldBoundAChunkByItsBytesForLargeUserKeys() throws Exception {
        Recording inner = new Recording();
        MapStateStorage maps = new MapStateStorage(inner);
        List<byte[]> inserted = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            byte[] userKey = userKey(i, 300);
            inserted.add(userKey);
            maps.putEntry(KEY_GROUP, KEY, NS, userKey, new byte[] {(byte) i});
        }
        byte[] huge = userKey(99, 2000);
        inserted.add(huge);
        maps.putEntry(KEY_GROUP, KEY, NS, huge, null);
        maps.putEntry(KEY_GROUP, KEY, NS, userKey(100, 8), new byte[0]);
        inserted.add(userKey(100, 8));

        List<Integer> sizes = new ArrayList<>();
        List<byte[]> walked = new ArrayList<>();
        for (MapStateStorage.Chunk chunk : chunks(maps)) {
            sizes.add(chunk.keys.size());
            walked.addAll(chunk.keys);
        }
        assertThat(sizes).as("keys per chunk").containsExactly(3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1);
        assertThat(walked).as("insertion order").containsExactlyElementsOf(inserted);
        assertThat(maps.size(KEY_GROUP, KEY, NS)).isEqualTo(32);
        assertThat(inner.largestChunkWrite).isLessThanOrEqualTo(12 + 2004);
        assertThat(inner.largestChunkWriteOfSmallKeys).isLessThanOrEqualTo(12 + 1024);

        // Small keys still fill a chunk to 64.
        MapStateStorage small = new MapStateStorage(new Recording());
        for (int i = 0; i < 65; i++) {
            small.putEntry(KEY_GROUP, KEY, NS, userKey(i, 4), new byte[] {1});
        }
        assertThat(small.firstChunk(KEY_GROUP, KEY, NS).keys).hasSize(MapStateStorage.CHUNK_KEYS);

        // Removing keys keeps the rest in order; an emptied chunk is unlinked.
        for (int i = 0; i < 3; i++) {
            assertThat(maps.removeEntry(KEY_GROUP, KEY, NS, inserted.get(i))).isTrue();
        }
        List<byte[]> left = new ArrayList<>();
        for (MapStateStorage.Chunk chunk : chunks(maps)) {
            left.addAll(chunk.keys);
        }
        assertThat(left).containsExactlyElementsOf(inserted.subList(3, inserted.size()));
    }

    /**
     * A map of at most 32 small entries is its header alone: a put or remove is one get and one
     * put, the entries stay in insertion order (an update keeps its place), and everything a
     * storage of whole maps offers reads it as it reads a chunked map.
     */
    @Test
    void shouldKeepASmallMapInOneRecord() throws Exception {
        Recording inner = new Recording();
        MapStateStorage maps = new MapStateStorage(inner);
        maps.putEntry(KEY_GROUP, KEY, NS, userKey(1, 4), new byte[] {10});
        maps.putEntry(KEY_GROUP, KEY, NS, userKey(2, 4), null);
        maps.putEntry(KEY_GROUP, KEY, NS, userKey(3, 4), new byte[0]);
        inner.gets = 0;
        inner.puts = 0;
        maps.putEntry(KEY_GROUP, KEY, NS, userKey(1, 4), new byte[] {11, 12});

        assertThat(inner.gets).as("gets of an update").isEqualTo(1);
        assertThat(inner.puts).as("puts of an update").isEqualTo(1);
        assertThat(inner.records).as("records of a small map").hasSize(1);
        assertThat(maps.size(KEY_GROUP, KEY, NS)).isEqualTo(3);
        assertThat(value(maps.getEntry(KEY_GROUP, KEY, NS, userKey(1, 4)))).containsExactly(11, 12);
        assertThat(
                        MapStateStorage.entryValueLength(
                                maps.getEntry(KEY_GROUP, KEY, NS, userKey(2, 4))))
                .as("a null value")
                .isEqualTo(-1);
        assertThat(value(maps.getEntry(KEY_GROUP, KEY, NS, userKey(3, 4)))).isEmpty();
        assertThat(maps.getEntry(KEY_GROUP, KEY, NS, userKey(4, 4))).isNull();

        MapStateStorage.Chunk only = maps.firstChunk(KEY_GROUP, KEY, NS);
        assertThat(only.keys).containsExactly(userKey(1, 4), userKey(2, 4), userKey(3, 4));
        assertThat(only.next).isEqualTo(MapStateStorage.NONE);
        assertThat(value(only.entry(0))).containsExactly(11, 12);

        // The whole map reads as the raw layout, and as one-entry maps when iterated.
        assertThat(maps.get(KEY_GROUP, KEY, NS))
                .isEqualTo(
                        MapStateStorage.encodeRaw(
                                List.of(userKey(1, 4), userKey(2, 4), userKey(3, 4)),
                                Arrays.asList(new byte[] {11, 12}, null, new byte[0])));
        assertThat(visitedEntries(maps))
                .containsExactly(
                        entryLine(userKey(1, 4), new byte[] {11, 12}),
                        entryLine(userKey(2, 4), null),
                        entryLine(userKey(3, 4), new byte[0]));

        assertThat(maps.removeEntry(KEY_GROUP, KEY, NS, userKey(2, 4))).isTrue();
        assertThat(maps.removeEntry(KEY_GROUP, KEY, NS, userKey(2, 4))).isFalse();
        assertThat(maps.firstChunk(KEY_GROUP, KEY, NS).keys)
                .containsExactly(userKey(1, 4), userKey(3, 4));
        maps.removeEntry(KEY_GROUP, KEY, NS, userKey(1, 4));
        maps.removeEntry(KEY_GROUP, KEY, NS, userKey(3, 4));
        assertThat(inner.records).as("an emptied map leaves no record").isEmpty();
        assertThat(maps.firstChunk(KEY_GROUP, KEY, NS)).isNull();
        assertThat(maps.size(KEY_GROUP, KEY, NS)).isZero();
    }

    /**
     * The 33rd entry, or a header past 4 KiB, moves a map to the chunked layout with its entries in
     * their order; emptied, it starts inline again.
     */
    @Test
    void shouldMoveAGrowingMapToChunksOnce() throws Exception {
        Recording inner = new Recording();
        MapStateStorage maps = new MapStateStorage(inner);
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < MapStateStorage.INLINE_ENTRIES; i++) {
            keys.add(userKey(i, 4));
            maps.putEntry(KEY_GROUP, KEY, NS, keys.get(i), new byte[] {(byte) i});
        }
        assertThat(inner.records).hasSize(1);
        keys.add(userKey(99, 4));
        maps.putEntry(KEY_GROUP, KEY, NS, keys.get(32), new byte[] {99});

        assertThat(inner.records).as("header, one chunk, 33 entries").hasSize(35);
        assertThat(maps.size(KEY_GROUP, KEY, NS)).isEqualTo(33);
        List<byte[]> walked = new ArrayList<>();
        for (MapStateStorage.Chunk chunk : chunks(maps)) {
            walked.addAll(chunk.keys);
            assertThat(chunk.entry(0)).as("chunked entries are read one by one").isNull();
        }
        assertThat(walked).containsExactlyElementsOf(keys);
        assertThat(value(maps.getEntry(KEY_GROUP, KEY, NS, keys.get(7)))).containsExactly(7);
        assertThat(visitedEntries(maps)).hasSize(33);

        // Removing entries keeps it chunked; emptied, its next entry is inline again.
        for (int i = 0; i < 30; i++) {
            maps.removeEntry(KEY_GROUP, KEY, NS, keys.get(i));
        }
        assertThat(maps.firstChunk(KEY_GROUP, KEY, NS).entry(0)).isNull();
        maps.remove(KEY_GROUP, KEY, NS);
        assertThat(inner.records).isEmpty();
        maps.putEntry(KEY_GROUP, KEY, NS, keys.get(0), new byte[] {1});
        assertThat(inner.records).hasSize(1);

        // A large value moves a map of one entry.
        MapStateStorage big = new MapStateStorage(new Recording());
        big.putEntry(KEY_GROUP, KEY, NS, userKey(1, 4), new byte[100]);
        big.putEntry(KEY_GROUP, KEY, NS, userKey(1, 4), new byte[MapStateStorage.INLINE_BYTES]);
        assertThat(big.firstChunk(KEY_GROUP, KEY, NS).entry(0)).isNull();
        assertThat(value(big.getEntry(KEY_GROUP, KEY, NS, userKey(1, 4))))
                .hasSize(MapStateStorage.INLINE_BYTES);
        assertThat(big.size(KEY_GROUP, KEY, NS)).isEqualTo(1);
    }

    private static List<MapStateStorage.Chunk> chunks(MapStateStorage maps) throws Exception {
        List<MapStateStorage.Chunk> chunks = new ArrayList<>();
        for (MapStateStorage.Chunk c = maps.firstChunk(KEY_GROUP, KEY, NS);
                c != null;
                c =
                        c.next == MapStateStorage.NONE
                                ? null
                                : maps.chunkOrNull(KEY_GROUP, KEY, NS, c.next)) {
            chunks.add(c);
        }
        return chunks;
    }

    private static byte[] value(byte[] entry) {
        int length = MapStateStorage.entryValueLength(entry);
        return Arrays.copyOfRange(
                entry, MapStateStorage.ENTRY_VALUE, MapStateStorage.ENTRY_VALUE + length);
    }

    private static String entryLine(byte[] userKey, byte[] value) {
        return Arrays.toString(userKey) + "=" + (value == null ? "null" : Arrays.toString(value));
    }

    /** What forEach visits, each a one-entry map, as "user key=value" lines. */
    private static List<String> visitedEntries(MapStateStorage maps) throws Exception {
        List<byte[]> visited = new ArrayList<>();
        maps.forEach(
                (key, namespace, value, offset, length) -> {
                    assertThat(key).isEqualTo(KEY);
                    assertThat(namespace).isEqualTo(NS);
                    visited.add(Arrays.copyOfRange(value, offset, offset + length));
                });
        List<String> lines = new ArrayList<>();
        for (byte[] raw : visited) {
            assertThat(ByteBuffer.wrap(raw).getInt(0)).as("entries of a visited map").isEqualTo(1);
            MapStateStorage.forEachRawEntry(
                    raw,
                    (buf, ko, kl, vo, vl) ->
                            lines.add(
                                    entryLine(
                                            Arrays.copyOfRange(buf, ko, ko + kl),
                                            vl < 0 ? null : Arrays.copyOfRange(buf, vo, vo + vl))));
        }
        return lines;
    }

    private static byte[] userKey(int i, int length) {
        byte[] k = new byte[length];
        Arrays.fill(k, (byte) 'x');
        ByteBuffer.wrap(k).putInt(0, i);
        return k;
    }

    /** A value storage in a map that remembers the largest chunk record written. */
    private static final class Recording implements ValueStateStorage {
        private final Map<String, byte[][]> records = new java.util.LinkedHashMap<>();
        int gets;
        int puts;
        int largestChunkWrite;
        int largestChunkWriteOfSmallKeys;

        private static String name(byte[] key, byte[] namespace) {
            return Arrays.toString(key) + Arrays.toString(namespace);
        }

        @Override
        public StorePattern pattern() {
            return StorePattern.GENERIC;
        }

        @Override
        public byte[] get(int keyGroup, byte[] key, byte[] namespace) {
            gets++;
            byte[][] v = records.get(name(key, namespace));
            return v == null ? null : v[2].clone();
        }

        @Override
        public void put(int keyGroup, byte[] key, byte[] namespace, byte[] value) {
            if (namespace[namespace.length - 1] == 'C') {
                largestChunkWrite = Math.max(largestChunkWrite, value.length);
                MapStateStorage.Chunk chunk = MapStateStorage.Chunk.decode(value);
                if (chunk.keys.stream().allMatch(k -> k.length < 1000)) {
                    largestChunkWriteOfSmallKeys =
                            Math.max(largestChunkWriteOfSmallKeys, value.length);
                }
            }
            puts++;
            records.put(name(key, namespace), new byte[][] {key, namespace, value.clone()});
        }

        @Override
        public void remove(int keyGroup, byte[] key, byte[] namespace) {
            records.remove(name(key, namespace));
        }

        @Override
        public void forEach(EntryVisitor visitor) throws java.io.IOException {
            for (byte[][] r : records.values()) {
                visitor.visit(r[0], Arrays.copyOf(r[1], r[1].length), r[2], 0, r[2].length);
            }
        }

        @Override
        public void flush() {}

        @Override
        public List<SealedStore> seal() {
            return List.of();
        }

        @Override
        public Path directory() {
            return Path.of(".");
        }

        @Override
        public void close() {}
    }
}
