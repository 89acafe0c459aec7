package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
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
        for (int c = maps.firstChunk(KEY_GROUP, KEY, NS); c != MapStateStorage.NONE; ) {
            MapStateStorage.Chunk chunk = maps.chunkOrNull(KEY_GROUP, KEY, NS, c);
            sizes.add(chunk.keys.size());
            walked.addAll(chunk.keys);
            c = chunk.next;
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
        int first = small.firstChunk(KEY_GROUP, KEY, NS);
        assertThat(small.chunkOrNull(KEY_GROUP, KEY, NS, first).keys)
                .hasSize(MapStateStorage.CHUNK_KEYS);

        // Removing keys keeps the rest in order; an emptied chunk is unlinked.
        for (int i = 0; i < 3; i++) {
            assertThat(maps.removeEntry(KEY_GROUP, KEY, NS, inserted.get(i))).isTrue();
        }
        List<byte[]> left = new ArrayList<>();
        for (int c = maps.firstChunk(KEY_GROUP, KEY, NS); c != MapStateStorage.NONE; ) {
            MapStateStorage.Chunk chunk = maps.chunkOrNull(KEY_GROUP, KEY, NS, c);
            left.addAll(chunk.keys);
            c = chunk.next;
        }
        assertThat(left).containsExactlyElementsOf(inserted.subList(3, inserted.size()));
    }

    private static byte[] userKey(int i, int length) {
        byte[] k = new byte[length];
        Arrays.fill(k, (byte) 'x');
        ByteBuffer.wrap(k).putInt(0, i);
        return k;
    }

    /** A value storage in a map that remembers the largest chunk record written. */
    private static final class Recording implements ValueStateStorage {
        private final Map<String, byte[]> records = new HashMap<>();
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
            byte[] v = records.get(name(key, namespace));
            return v == null ? null : v.clone();
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
            records.put(name(key, namespace), value.clone());
        }

        @Override
        public void remove(int keyGroup, byte[] key, byte[] namespace) {
            records.remove(name(key, namespace));
        }

        @Override
        public void forEach(EntryVisitor visitor) {
            throw new UnsupportedOperationException();
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
