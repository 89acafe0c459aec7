package io.flowkv.bench;

import io.flowkv.core.ValueConsumer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The upper bound: objects in a {@link HashMap}, as Flink's HashMap backend keeps them (no
 * serialization on access, nothing on disk, no memory budget: it lives in the JVM heap).
 */
final class HeapTarget implements StoreUnderTest {
    private final Map<ByteKey, List<byte[]>> lists = new HashMap<>();
    private final Map<ByteKey, byte[]> values = new HashMap<>();
    private final ByteKey probe = new ByteKey();

    @Override
    public void appendList(byte[] key, byte[] window, byte[] value, long timestamp) {
        List<byte[]> list = lists.get(probe.set(key, window));
        if (list == null) {
            list = new ArrayList<>(4);
            lists.put(probe.copy(), list);
        }
        list.add(value.clone());
    }

    @Override
    public boolean getList(byte[] key, byte[] window, ValueConsumer consumer) {
        List<byte[]> list = lists.get(probe.set(key, window));
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
    public boolean get(byte[] key, byte[] window, ValueConsumer consumer) {
        byte[] v = values.get(probe.set(key, window));
        if (v == null) {
            return false;
        }
        consumer.accept(v, 0, v.length);
        return true;
    }

    @Override
    public void put(byte[] key, byte[] window, byte[] value) {
        values.put(probe.set(key, window).copy(), value.clone());
    }

    @Override
    public void removeKey(byte[] key, byte[] window) {
        probe.set(key, window);
        if (lists.remove(probe) == null) {
            values.remove(probe);
        }
    }

    @Override
    public long diskBytes() {
        return 0;
    }

    @Override
    public void close() {
        lists.clear();
        values.clear();
    }

    /** Key and window bytes; the probe instance is refilled for lookups, copies go into maps. */
    private static final class ByteKey {
        private byte[] bytes = new byte[0];
        private int hash;

        ByteKey set(byte[] key, byte[] window) {
            int n = key.length + window.length;
            if (bytes.length != n) {
                bytes = new byte[n];
            }
            System.arraycopy(key, 0, bytes, 0, key.length);
            System.arraycopy(window, 0, bytes, key.length, window.length);
            hash = Arrays.hashCode(bytes);
            return this;
        }

        ByteKey copy() {
            ByteKey k = new ByteKey();
            k.bytes = bytes.clone();
            k.hash = hash;
            return k;
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
