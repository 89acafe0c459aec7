package io.flowkv.flink.state;

import io.flowkv.flink.storage.MapStateStorage;
import io.flowkv.flink.storage.ValueStateStorage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.util.FlinkRuntimeException;

import java.io.IOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Map state on the general store, one record per user entry ({@link MapStateStorage}): get, put,
 * remove and contains cost a few point operations whatever the map's size; iteration reads the user
 * keys 64 at a time and each value as it is reached, so a large map is never on the heap.
 *
 * <p>Whole maps cross the storage boundary (snapshots, restore, migration, queryable state) in
 * {@link MapStateStorage}'s raw layout, the same bytes a savepoint's entries are made of.
 */
@Internal
public final class FlowKVMapState<K, N, UK, UV> extends AbstractFlowKVState<K, N, Map<UK, UV>>
        implements InternalMapState<K, N, UK, UV> {
    private final MapStateStorage maps;

    FlowKVMapState(
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<Map<UK, UV>> valueSerializer) {
        super(backend, storage, namespaceSerializer, valueSerializer);
        this.maps = new MapStateStorage(storage);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            StateKeyContext<K> backend,
            ValueStateStorage storage,
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

    private byte[] userKeyBytes(UK userKey) throws IOException {
        out.clear();
        mapSerializer().getKeySerializer().serialize(userKey, out);
        return out.getCopyOfBuffer();
    }

    private byte[] userValueBytes(UV userValue) throws IOException {
        if (userValue == null) {
            return null;
        }
        out.clear();
        mapSerializer().getValueSerializer().serialize(userValue, out);
        return out.getCopyOfBuffer();
    }

    private UV userValue(byte[] entry) throws IOException {
        int length = MapStateStorage.entryValueLength(entry);
        if (length < 0) {
            return null;
        }
        in.setBuffer(entry, MapStateStorage.ENTRY_VALUE, length);
        return mapSerializer().getValueSerializer().deserialize(in);
    }

    private UK userKey(byte[] bytes) throws IOException {
        in.setBuffer(bytes);
        return mapSerializer().getKeySerializer().deserialize(in);
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

    @Override
    public UV get(UK userKey) throws IOException {
        byte[] entry =
                maps.getEntry(keyGroup(), keyBytes(), namespaceBytes(), userKeyBytes(userKey));
        return entry == null ? null : userValue(entry);
    }

    @Override
    public void put(UK userKey, UV userValue) throws IOException {
        maps.putEntry(
                keyGroup(),
                keyBytes(),
                namespaceBytes(),
                userKeyBytes(userKey),
                userValueBytes(userValue));
    }

    @Override
    public void putAll(Map<UK, UV> entries) throws IOException {
        if (entries == null) {
            return;
        }
        for (Map.Entry<UK, UV> e : entries.entrySet()) {
            put(e.getKey(), e.getValue());
        }
    }

    @Override
    public void remove(UK userKey) throws IOException {
        maps.removeEntry(keyGroup(), keyBytes(), namespaceBytes(), userKeyBytes(userKey));
    }

    @Override
    public boolean contains(UK userKey) throws IOException {
        return maps.getEntry(keyGroup(), keyBytes(), namespaceBytes(), userKeyBytes(userKey))
                != null;
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
     * Iterates the map of the key and namespace current at creation, chunk by chunk in insertion
     * order, holding one chunk of user keys (at most 64) and reading each value one entry ahead.
     * Weakly consistent: in a chunked map an entry removed before it is reached is skipped, entries
     * added to a chunk already read are not visited; an inline map (at most 32 entries) is read
     * whole when the iterator is created, as RocksDB's iterator reads up to 128 entries at a time.
     * {@code remove()} and {@code setValue()} write through.
     */
    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() {
        final int keyGroup = keyGroup();
        final byte[] key;
        final byte[] namespace;
        final MapStateStorage.Chunk first;
        try {
            key = keyBytes();
            namespace = namespaceBytes();
            first = maps.firstChunk(keyGroup, key, namespace);
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while reading map state from FlowKV.", e);
        }

        /** An entry whose setValue writes through; equal to any Map.Entry with its contents. */
        final class WriteThroughEntry implements Map.Entry<UK, UV> {
            private final UK userKey;
            private final byte[] userKeyBytes;
            private UV value;

            WriteThroughEntry(UK userKey, byte[] userKeyBytes, UV value) {
                this.userKey = userKey;
                this.userKeyBytes = userKeyBytes;
                this.value = value;
            }

            @Override
            public UK getKey() {
                return userKey;
            }

            @Override
            public UV getValue() {
                return value;
            }

            @Override
            public UV setValue(UV newValue) {
                UV old = value;
                try {
                    maps.putEntry(keyGroup, key, namespace, userKeyBytes, userValueBytes(newValue));
                } catch (IOException e) {
                    throw new FlinkRuntimeException("Error while writing map state to FlowKV.", e);
                }
                value = newValue;
                return old;
            }

            @Override
            public boolean equals(Object o) {
                return o instanceof Map.Entry
                        && Objects.equals(userKey, ((Map.Entry<?, ?>) o).getKey())
                        && Objects.equals(value, ((Map.Entry<?, ?>) o).getValue());
            }

            @Override
            public int hashCode() {
                return Objects.hashCode(userKey) ^ Objects.hashCode(value);
            }

            @Override
            public String toString() {
                return userKey + "=" + value;
            }
        }

        return new Iterator<Map.Entry<UK, UV>>() {
            private MapStateStorage.Chunk chunk = first;
            private int index;
            private WriteThroughEntry ahead;
            private WriteThroughEntry current;

            @Override
            public boolean hasNext() {
                if (ahead != null) {
                    return true;
                }
                try {
                    while (chunk != null) {
                        if (index == chunk.keys.size()) {
                            chunk =
                                    chunk.next == MapStateStorage.NONE
                                            ? null
                                            // null if emptied and unlinked since it was named
                                            : maps.chunkOrNull(
                                                    keyGroup, key, namespace, chunk.next);
                            index = 0;
                            continue;
                        }
                        byte[] userKeyBytes = chunk.keys.get(index);
                        byte[] entry = chunk.entry(index++);
                        if (entry == null) {
                            entry = maps.getChunkedEntry(keyGroup, key, namespace, userKeyBytes);
                        }
                        if (entry != null) {
                            ahead =
                                    new WriteThroughEntry(
                                            userKey(userKeyBytes), userKeyBytes, userValue(entry));
                            return true;
                        }
                    }
                    return false;
                } catch (IOException e) {
                    throw new FlinkRuntimeException(
                            "Error while reading map state from FlowKV.", e);
                }
            }

            @Override
            public Map.Entry<UK, UV> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                current = ahead;
                ahead = null;
                return current;
            }

            @Override
            public void remove() {
                if (current == null) {
                    throw new IllegalStateException("next() was not called");
                }
                try {
                    maps.removeEntry(keyGroup, key, namespace, current.userKeyBytes);
                } catch (IOException e) {
                    throw new FlinkRuntimeException("Error while writing map state to FlowKV.", e);
                }
                current = null;
            }
        };
    }

    @Override
    public void clear() {
        try {
            maps.remove(keyGroup(), keyBytes(), namespaceBytes());
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while removing data from FlowKV.", e);
        }
    }

    @Override
    public boolean isEmpty() throws IOException {
        return maps.size(keyGroup(), keyBytes(), namespaceBytes()) == 0;
    }

    @Override
    protected byte[] serializedValue(
            int keyGroup,
            byte[] key,
            byte[] namespace,
            TypeSerializer<Map<UK, UV>> safeValueSerializer)
            throws Exception {
        byte[] bytes = maps.get(keyGroup, key, namespace);
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
    public byte[] migrateValue(
            byte[] stored, TypeSerializer<Map<UK, UV>> prior, TypeSerializer<Map<UK, UV>> current)
            throws IOException {
        Map<UK, UV> map =
                decode(stored, (MapSerializer<UK, UV>) prior, new DataInputDeserializer());
        return encode(map, (MapSerializer<UK, UV>) current, new DataOutputSerializer(64));
    }
}
