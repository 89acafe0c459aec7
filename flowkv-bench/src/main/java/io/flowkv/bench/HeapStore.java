package io.flowkv.bench;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.ListStore;
import io.flowkv.core.SealedStore;
import io.flowkv.core.Store;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.ValueStore;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The upper bound: objects in a {@link HashMap}, as Flink's HashMap backend keeps them (no
 * serialization on access, nothing on disk, no memory budget: it lives in the JVM heap). A baseline
 * for trace replays: it is never checkpointed, so {@link #seal} is not supported.
 */
abstract class HeapStore<V> implements Store {
    final Map<ByteKey, V> map = new HashMap<>();
    final ByteKey probe = new ByteKey();
    private final StoreStats stats = new StoreStats();

    /** The store of a pattern's state: lists for the append patterns, values for RMW. */
    static Store open(Pattern pattern) {
        return pattern == Pattern.RMW ? new Values() : new Lists();
    }

    /** Lists of element copies. */
    static final class Lists extends HeapStore<List<byte[]>> implements ListStore {
        @Override
        public void append(byte[] key, byte[] window, byte[] value, long timestamp) {
            List<byte[]> list = map.get(probe.set(key, window));
            if (list == null) {
                list = new ArrayList<>(4);
                map.put(probe.copy(), list);
            }
            list.add(value.clone());
        }

        @Override
        public boolean get(byte[] key, byte[] window, ValueConsumer consumer) {
            List<byte[]> list = map.get(probe.set(key, window));
            if (list == null) {
                return false;
            }
            for (int i = 0; i < list.size(); i++) {
                byte[] v = list.get(i);
                consumer.accept(v, 0, v.length);
            }
            return true;
        }

        @Override
        public void remove(byte[] key, byte[] window) {
            map.remove(probe.set(key, window));
        }

        @Override
        public void forEach(EntryVisitor visitor) {
            map.forEach(
                    (k, list) -> {
                        for (byte[] v : list) {
                            visitor.visit(k.key(), k.window(), v, 0, v.length);
                        }
                    });
        }
    }

    /** One value copy per (key, window). */
    static final class Values extends HeapStore<byte[]> implements ValueStore {
        @Override
        public boolean get(byte[] key, byte[] window, ValueConsumer consumer) {
            byte[] v = map.get(probe.set(key, window));
            if (v == null) {
                return false;
            }
            consumer.accept(v, 0, v.length);
            return true;
        }

        @Override
        public void put(byte[] key, byte[] window, byte[] value) {
            map.put(probe.set(key, window).copy(), value.clone());
        }

        @Override
        public boolean remove(byte[] key, byte[] window) {
            return map.remove(probe.set(key, window)) != null;
        }

        @Override
        public void forEach(EntryVisitor visitor) {
            map.forEach((k, v) -> visitor.visit(k.key(), k.window(), v, 0, v.length));
        }
    }

    /** Nothing to flush: the maps are the state. */
    @Override
    public void flush() {}

    @Override
    public SealedStore seal(boolean durable) {
        throw new UnsupportedOperationException(
                "The benchmark never checkpoints its heap baseline");
    }

    /** Empty: the heap baseline counts nothing. */
    @Override
    public StoreStats stats() {
        return stats;
    }

    /** Zero: the maps live on the Java heap, outside any memory budget. */
    @Override
    public long memoryUsed() {
        return 0;
    }

    @Override
    public void close() {
        map.clear();
    }

    /** Key and window bytes; the probe instance is refilled for lookups, copies go into maps. */
    static final class ByteKey {
        private byte[] bytes = new byte[0];
        private int keyLength;
        private int hash;

        ByteKey set(byte[] key, byte[] window) {
            int n = key.length + window.length;
            if (bytes.length != n) {
                bytes = new byte[n];
            }
            System.arraycopy(key, 0, bytes, 0, key.length);
            System.arraycopy(window, 0, bytes, key.length, window.length);
            keyLength = key.length;
            hash = Arrays.hashCode(bytes);
            return this;
        }

        ByteKey copy() {
            ByteKey k = new ByteKey();
            k.bytes = bytes.clone();
            k.keyLength = keyLength;
            k.hash = hash;
            return k;
        }

        byte[] key() {
            return Arrays.copyOfRange(bytes, 0, keyLength);
        }

        byte[] window() {
            return Arrays.copyOfRange(bytes, keyLength, bytes.length);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ByteKey other
                    && other.hash == hash
                    && Arrays.equals(other.bytes, bytes);
        }
    }
}
