package io.flowkv.flink;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.util.FlinkRuntimeException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Map state on the general store: the whole user map of one (key, namespace) is one stored value,
 * so every operation reads and rewrites that map. That keeps the store a plain hash store with no
 * prefix scans; it suits the small maps that operators keep per key, and is the trade-off to
 * revisit if large per-key maps show up (a per-entry layout with a key index would then pay off).
 *
 * <pre>
 *   stored value: [entry count:int] then per entry
 *                 [user key length:int][user key bytes][value length:int, -1 = null][value bytes]
 * </pre>
 */
final class FlowKVMapState<K, N, UK, UV> extends AbstractFlowKVState<K, N, Map<UK, UV>>
        implements InternalMapState<K, N, UK, UV> {

    FlowKVMapState(
            FlowKVKeyedStateBackend<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<Map<UK, UV>> valueSerializer) {
        super(backend, storage, namespaceSerializer, valueSerializer);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            FlowKVKeyedStateBackend<K> backend,
            StateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer) {
        return (AbstractFlowKVState)
                new FlowKVMapState<>(
                        backend,
                        storage,
                        namespaceSerializer,
                        (TypeSerializer<Map<Object, Object>>) stateSerializer);
    }

    private MapSerializer<UK, UV> mapSerializer() {
        return (MapSerializer<UK, UV>) valueSerializer;
    }

    private Map<UK, UV> load() throws IOException {
        byte[] bytes = storage.get(keyBytes(), namespaceBytes());
        return bytes == null ? null : decode(bytes, mapSerializer(), in);
    }

    private void store(Map<UK, UV> map) throws IOException {
        if (map == null || map.isEmpty()) {
            storage.remove(keyBytes(), namespaceBytes());
        } else {
            storage.put(keyBytes(), namespaceBytes(), encode(map, mapSerializer(), out));
        }
    }

    static <UK, UV> Map<UK, UV> decode(
            byte[] bytes, MapSerializer<UK, UV> serializer, DataInputDeserializer in)
            throws IOException {
        in.setBuffer(bytes);
        int count = in.readInt();
        Map<UK, UV> map = new HashMap<>(Math.max(4, count * 2));
        for (int i = 0; i < count; i++) {
            in.readInt();
            UK key = serializer.getKeySerializer().deserialize(in);
            int valueLength = in.readInt();
            UV value = valueLength < 0 ? null : serializer.getValueSerializer().deserialize(in);
            map.put(key, value);
        }
        return map;
    }

    static <UK, UV> byte[] encode(
            Map<UK, UV> map, MapSerializer<UK, UV> serializer, DataOutputSerializer out)
            throws IOException {
        out.clear();
        out.writeInt(map.size());
        for (Map.Entry<UK, UV> e : map.entrySet()) {
            int lengthAt = out.length();
            out.writeInt(0);
            serializer.getKeySerializer().serialize(e.getKey(), out);
            patchLength(out, lengthAt);
            lengthAt = out.length();
            out.writeInt(-1);
            if (e.getValue() != null) {
                serializer.getValueSerializer().serialize(e.getValue(), out);
                patchLength(out, lengthAt);
            }
        }
        return out.getCopyOfBuffer();
    }

    private static void patchLength(DataOutputSerializer out, int lengthAt) throws IOException {
        int end = out.length();
        out.setPosition(lengthAt);
        out.writeInt(end - lengthAt - 4);
        // setPosition only moves backwards; the bytes up to end are already written.
        out.setPositionUnsafe(end);
    }

    /** Encodes serialized user keys and values (null for a null value) in the stored layout. */
    static byte[] encodeRaw(List<byte[]> userKeys, List<byte[]> userValues) throws IOException {
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
    interface RawEntryVisitor {
        void visit(byte[] buf, int keyOffset, int keyLength, int valueOffset, int valueLength)
                throws IOException;
    }

    static void forEachRawEntry(byte[] bytes, RawEntryVisitor visitor) throws IOException {
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

    @Override
    public UV get(UK userKey) throws IOException {
        Map<UK, UV> map = load();
        return map == null ? null : map.get(userKey);
    }

    @Override
    public void put(UK userKey, UV userValue) throws IOException {
        Map<UK, UV> map = load();
        if (map == null) {
            map = new HashMap<>();
        }
        map.put(userKey, userValue);
        store(map);
    }

    @Override
    public void putAll(Map<UK, UV> entries) throws IOException {
        if (entries == null || entries.isEmpty()) {
            return;
        }
        Map<UK, UV> map = load();
        if (map == null) {
            map = new HashMap<>();
        }
        map.putAll(entries);
        store(map);
    }

    @Override
    public void remove(UK userKey) throws IOException {
        Map<UK, UV> map = load();
        if (map != null && map.containsKey(userKey)) {
            map.remove(userKey);
            store(map);
        }
    }

    @Override
    public boolean contains(UK userKey) throws IOException {
        Map<UK, UV> map = load();
        return map != null && map.containsKey(userKey);
    }

    @Override
    public Iterable<Map.Entry<UK, UV>> entries() throws IOException {
        return this::iterator;
    }

    @Override
    public Iterable<UK> keys() throws IOException {
        return () -> {
            Iterator<Map.Entry<UK, UV>> it = iterator();
            return new Iterator<UK>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public UK next() {
                    return it.next().getKey();
                }

                @Override
                public void remove() {
                    it.remove();
                }
            };
        };
    }

    @Override
    public Iterable<UV> values() throws IOException {
        return () -> {
            Iterator<Map.Entry<UK, UV>> it = iterator();
            return new Iterator<UV>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public UV next() {
                    return it.next().getValue();
                }

                @Override
                public void remove() {
                    it.remove();
                }
            };
        };
    }

    /**
     * Iterates a copy of the map taken now; {@code remove()} and {@code setValue()} write through
     * to the store under the key and namespace current at creation.
     */
    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() {
        final Map<UK, UV> map;
        final byte[] key;
        final byte[] namespace;
        try {
            map = load();
            key = keyBytes();
            namespace = namespaceBytes();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while reading map state from FlowKV.", e);
        }
        List<Map.Entry<UK, UV>> entries = new ArrayList<>(map == null ? List.of() : map.entrySet());

        /**
         * An entry whose setValue writes through; equal to any Map.Entry with the same contents.
         */
        final class WriteThroughEntry implements Map.Entry<UK, UV> {
            private final UK userKey;

            WriteThroughEntry(UK userKey) {
                this.userKey = userKey;
            }

            @Override
            public UK getKey() {
                return userKey;
            }

            @Override
            public UV getValue() {
                return map.get(userKey);
            }

            @Override
            public UV setValue(UV value) {
                UV old = map.put(userKey, value);
                writeBack(key, namespace, map);
                return old;
            }

            @Override
            public boolean equals(Object o) {
                return o instanceof Map.Entry
                        && Objects.equals(userKey, ((Map.Entry<?, ?>) o).getKey())
                        && Objects.equals(getValue(), ((Map.Entry<?, ?>) o).getValue());
            }

            @Override
            public int hashCode() {
                return Objects.hashCode(userKey) ^ Objects.hashCode(getValue());
            }

            @Override
            public String toString() {
                return userKey + "=" + getValue();
            }
        }

        return new Iterator<Map.Entry<UK, UV>>() {
            private int next;
            private Map.Entry<UK, UV> current;

            @Override
            public boolean hasNext() {
                return next < entries.size();
            }

            @Override
            public Map.Entry<UK, UV> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Map.Entry<UK, UV> e = entries.get(next++);
                current = e;
                return new WriteThroughEntry(e.getKey());
            }

            @Override
            public void remove() {
                if (current == null) {
                    throw new IllegalStateException("next() was not called");
                }
                map.remove(current.getKey());
                current = null;
                writeBack(key, namespace, map);
            }
        };
    }

    private void writeBack(byte[] key, byte[] namespace, Map<UK, UV> map) {
        try {
            if (map.isEmpty()) {
                storage.remove(key, namespace);
            } else {
                storage.put(
                        key, namespace, encode(map, mapSerializer(), new DataOutputSerializer(64)));
            }
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while writing map state to FlowKV.", e);
        }
    }

    @Override
    public boolean isEmpty() throws IOException {
        Map<UK, UV> map = load();
        return map == null || map.isEmpty();
    }

    @Override
    protected byte[] serializedValue(
            byte[] key, byte[] namespace, TypeSerializer<Map<UK, UV>> safeValueSerializer)
            throws Exception {
        byte[] bytes = storage.get(key, namespace);
        if (bytes == null) {
            return null;
        }
        MapSerializer<UK, UV> safe = (MapSerializer<UK, UV>) safeValueSerializer;
        Map<UK, UV> map = decode(bytes, safe, new DataInputDeserializer());
        if (map.isEmpty()) {
            return null;
        }
        return KvStateSerializer.serializeMap(
                map.entrySet(), safe.getKeySerializer(), safe.getValueSerializer());
    }

    @Override
    byte[] migrateValue(
            byte[] stored, TypeSerializer<Map<UK, UV>> prior, TypeSerializer<Map<UK, UV>> current)
            throws IOException {
        Map<UK, UV> map =
                decode(stored, (MapSerializer<UK, UV>) prior, new DataInputDeserializer());
        return encode(map, (MapSerializer<UK, UV>) current, new DataOutputSerializer(64));
    }
}
