package io.flowkv.flink.state;

import io.flowkv.flink.storage.ByteArray;
import io.flowkv.flink.storage.MapStateStorage;
import io.flowkv.flink.storage.StoreSelector;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * Map state on the general store, one record per user entry ({@link MapStateStorage}): get, put,
 * remove and contains cost a few point operations whatever the map's size; iteration reads the user
 * keys 64 at a time and each value as it is reached, so a large map is never on the heap.
 *
 * <p>The map state of Flink SQL's session windows ({@link StoreSelector#SESSION_WINDOW_MAPPING}:
 * one or two entries per key, got, removed and put at nearly every element) uses the object cache
 * ({@link StateKeyContext#objectCacheBudget}): a small map (one the store keeps inline, at most
 * {@link MapStateStorage#INLINE_ENTRIES} entries) is kept whole as live objects per (key,
 * namespace), read with one get on first use and written back with one put when it leaves the cache
 * or a snapshot needs it; its entries are told apart by their serialized user keys, as in the
 * store. A map that outgrows the bound goes to the store for good, and a large map is only marked,
 * so its entries are served by the store as without the cache. Other map states are not cached: the
 * maps of joins and top-N operators, keyed by rows, cost more to load and write back whole than
 * their per-entry store operations (measured on sql-q7, q9 and q20: 0.77x-0.91x).
 *
 * <p>Whole maps cross the storage boundary (snapshots, restore, migration, queryable state) in
 * {@link MapStateStorage}'s raw layout, the same bytes a savepoint's entries are made of.
 */
@Internal
public final class FlowKVMapState<K, N, UK, UV> extends AbstractFlowKVState<K, N, Map<UK, UV>>
        implements InternalMapState<K, N, UK, UV> {
    private final MapStateStorage maps;

    /** The cached object of a (key, namespace) whose map is large: the store serves it. */
    private static final Object LARGE = new Object();

    /** Small maps as live objects ({@link CachedMap}) or {@link #LARGE}; null without a cache. */
    private ObjectCache<K, N, Object> cache;

    /**
     * An entry an iterator hands out: equal to any {@link Map.Entry} with its contents; {@code
     * setValue} writes the value where the map is ({@link #write}).
     */
    private abstract static class IteratedEntry<UK, UV> implements Map.Entry<UK, UV> {
        final UK userKey;
        final byte[] userKeyBytes;
        private UV value;

        IteratedEntry(UK userKey, byte[] userKeyBytes, UV value) {
            this.userKey = userKey;
            this.userKeyBytes = userKeyBytes;
            this.value = value;
        }

        abstract void write(UV newValue) throws IOException;

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
                write(newValue);
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

    /** One cached entry of a small map: the user key, its serialized form, and the value. */
    private static final class Slot<UK, UV> {
        final UK userKey;
        final byte[] userKeyBytes;
        UV value;

        Slot(UK userKey, byte[] userKeyBytes, UV value) {
            this.userKey = userKey;
            this.userKeyBytes = userKeyBytes;
            this.value = value;
        }
    }

    /** A small map: its slots by serialized user key, in insertion order. */
    private static final class CachedMap<UK, UV> extends LinkedHashMap<ByteArray, Slot<UK, UV>> {
        private static final long serialVersionUID = 1L;
    }

    FlowKVMapState(
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<Map<UK, UV>> valueSerializer) {
        super(backend, storage, namespaceSerializer, valueSerializer);
        this.maps = new MapStateStorage(storage);
    }

    /** Keeps this state's small maps as live objects, up to the backend's bound (class comment). */
    void cacheSmallMaps() {
        ObjectCacheBudget budget = backend.objectCacheBudget();
        if (budget != null && cache == null) {
            cache = new ObjectCache<>(budget, this::writeCached);
        }
    }

    /**
     * The small map of the current key and namespace from the cache, read from the store on a miss;
     * null when there is no cache or the map is large.
     */
    @SuppressWarnings("unchecked")
    private CachedMap<UK, UV> cachedMap() throws IOException {
        ObjectCache.Entry<K, N, Object> entry = cachedEntry();
        return entry == null || entry.value == LARGE ? null : (CachedMap<UK, UV>) entry.value;
    }

    private ObjectCache.Entry<K, N, Object> cachedEntry() throws IOException {
        if (cache == null) {
            return null;
        }
        ObjectCache.Entry<K, N, Object> entry =
                cache.get(backend.getCurrentKey(), currentNamespace());
        if (entry != null) {
            return entry;
        }
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] namespace = namespaceBytes();
        byte[] raw = maps.smallMap(keyGroup, key, namespace);
        if (raw == null) {
            return cacheAtCurrentKey(cache, currentNamespace(), LARGE, false, true);
        }
        CachedMap<UK, UV> map = new CachedMap<>();
        if (raw != MapStateStorage.NO_MAP) {
            MapStateStorage.forEachRawEntry(
                    raw,
                    (buf, keyOffset, keyLength, valueOffset, valueLength) -> {
                        byte[] userKeyBytes =
                                Arrays.copyOfRange(buf, keyOffset, keyOffset + keyLength);
                        UV value = null;
                        if (valueLength >= 0) {
                            in.setBuffer(buf, valueOffset, valueLength);
                            value = mapSerializer().getValueSerializer().deserialize(in);
                        }
                        map.put(
                                new ByteArray(userKeyBytes),
                                new Slot<>(userKey(userKeyBytes), userKeyBytes, value));
                    });
            cache.measured(key.length + namespace.length + raw.length);
        }
        return cacheAtCurrentKey(
                cache, currentNamespace(), map, false, raw != MapStateStorage.NO_MAP);
    }

    /** Whether a value handed out may be changed by the job without a put. */
    private boolean valuesMayChange() {
        return !mapSerializer().getValueSerializer().isImmutableType();
    }

    /**
     * Sets ({@code remove}: removes) a user key of the cached small map of {@code entry}, then
     * {@link #changed} if the map changed.
     */
    private void changeCached(
            ObjectCache.Entry<K, N, Object> entry,
            UK userKey,
            byte[] userKeyBytes,
            boolean remove,
            UV value)
            throws IOException {
        CachedMap<UK, UV> map = map(entry);
        if (remove) {
            if (map.remove(new ByteArray(userKeyBytes)) == null) {
                return;
            }
        } else {
            map.put(new ByteArray(userKeyBytes), new Slot<>(userKey, userKeyBytes, value));
        }
        changed(entry, map);
    }

    /** A cached small map changed: marks it, and moves it to the store if it outgrew the bound. */
    private void changed(ObjectCache.Entry<K, N, Object> entry, CachedMap<UK, UV> map)
            throws IOException {
        entry.dirty = true;
        if (map.size() > MapStateStorage.INLINE_ENTRIES) {
            writeCached(entry);
            entry.value = LARGE;
            entry.dirty = false;
            entry.stored = true;
        } else if (cache.sampleDue()) {
            cache.measured(keyBytes().length + namespaceBytes().length + encode(map).length);
        }
    }

    /** The raw layout of a cached small map. */
    private byte[] encode(CachedMap<UK, UV> map) throws IOException {
        List<byte[]> keys = new ArrayList<>(map.size());
        List<byte[]> values = new ArrayList<>(map.size());
        for (Slot<UK, UV> slot : map.values()) {
            keys.add(slot.userKeyBytes);
            values.add(userValueBytes(slot.value));
        }
        return MapStateStorage.encodeRaw(keys, values);
    }

    /**
     * Writes a cached small map to the store (eviction, {@link #writeBackCached}, or a map that
     * outgrew the bound). The store holds the map inline or not at all until then; a map that no
     * longer fits inline is written chunked and stays with the store ({@link #LARGE}).
     */
    @SuppressWarnings("unchecked")
    private void writeCached(ObjectCache.Entry<K, N, Object> entry) throws IOException {
        if (entry.value == LARGE) {
            return;
        }
        byte[] raw = encode((CachedMap<UK, UV>) entry.value);
        byte[] key = keyBytes.key(entry.key, entry.keyGroup);
        byte[] namespace = keyBytes.namespace(entry.namespace);
        cache.measured(key.length + namespace.length + raw.length);
        if (!maps.replaceSmallMap(entry.keyGroup, key, namespace, raw)) {
            entry.value = LARGE;
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            StateKeyContext<K> backend,
            ValueStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer) {
        FlowKVMapState<K, N, Object, Object> state =
                new FlowKVMapState<>(
                        backend,
                        storage,
                        namespaceSerializer,
                        (TypeSerializer<Map<Object, Object>>) stateSerializer);
        if (StoreSelector.SESSION_WINDOW_MAPPING.equals(descriptor.getName())) {
            state.cacheSmallMaps();
        }
        return (AbstractFlowKVState) state;
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
        ObjectCache.Entry<K, N, Object> cached = cachedEntry();
        if (cached != null && cached.value != LARGE) {
            Slot<UK, UV> slot =
                    FlowKVMapState.<UK, UV>map(cached).get(new ByteArray(userKeyBytes(userKey)));
            if (slot == null) {
                return null;
            }
            if (slot.value != null && valuesMayChange()) {
                cached.dirty = true;
            }
            return slot.value;
        }
        byte[] entry =
                maps.getEntry(keyGroup(), keyBytes(), namespaceBytes(), userKeyBytes(userKey));
        return entry == null ? null : userValue(entry);
    }

    @SuppressWarnings("unchecked")
    private static <UK, UV> CachedMap<UK, UV> map(ObjectCache.Entry<?, ?, Object> cached) {
        return (CachedMap<UK, UV>) cached.value;
    }

    @Override
    public void put(UK userKey, UV userValue) throws IOException {
        ObjectCache.Entry<K, N, Object> cached = cachedEntry();
        if (cached != null && cached.value != LARGE) {
            changeCached(cached, userKey, userKeyBytes(userKey), false, userValue);
            return;
        }
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
        ObjectCache.Entry<K, N, Object> cached = cachedEntry();
        if (cached != null && cached.value != LARGE) {
            changeCached(cached, userKey, userKeyBytes(userKey), true, null);
            return;
        }
        maps.removeEntry(keyGroup(), keyBytes(), namespaceBytes(), userKeyBytes(userKey));
    }

    @Override
    public boolean contains(UK userKey) throws IOException {
        CachedMap<UK, UV> map = cachedMap();
        if (map != null) {
            return map.containsKey(new ByteArray(userKeyBytes(userKey)));
        }
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
        final ObjectCache.Entry<K, N, Object> cached;
        try {
            cached = cachedEntry();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while reading map state from FlowKV.", e);
        }
        if (cached != null && cached.value != LARGE) {
            return cachedIterator(cached);
        }
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

        /** An entry whose setValue writes through to the store. */
        final class WriteThroughEntry extends IteratedEntry<UK, UV> {
            WriteThroughEntry(UK userKey, byte[] userKeyBytes, UV value) {
                super(userKey, userKeyBytes, value);
            }

            @Override
            void write(UV newValue) throws IOException {
                maps.putEntry(keyGroup, key, namespace, userKeyBytes, userValueBytes(newValue));
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

    /**
     * Iterates a cached small map: the entries it holds when the iterator is created, in insertion
     * order; {@code remove()} and {@code setValue()} change the cached map. Values handed out that
     * the job may change count as changed.
     */
    private Iterator<Map.Entry<UK, UV>> cachedIterator(ObjectCache.Entry<K, N, Object> cached) {
        CachedMap<UK, UV> map = map(cached);
        if (!map.isEmpty() && valuesMayChange()) {
            cached.dirty = true;
        }
        Iterator<Slot<UK, UV>> slots = new ArrayList<>(map.values()).iterator();

        /** An entry of a cached map, whose setValue changes the map wherever it is now. */
        final class CachedEntry extends IteratedEntry<UK, UV> {
            CachedEntry(Slot<UK, UV> slot) {
                super(slot.userKey, slot.userKeyBytes, slot.value);
            }

            @Override
            void write(UV newValue) throws IOException {
                changeLater(cached, userKey, userKeyBytes, false, newValue);
            }
        }

        return new Iterator<Map.Entry<UK, UV>>() {
            private CachedEntry current;

            @Override
            public boolean hasNext() {
                return slots.hasNext();
            }

            @Override
            public Map.Entry<UK, UV> next() {
                current = new CachedEntry(slots.next());
                return current;
            }

            @Override
            public void remove() {
                if (current == null) {
                    throw new IllegalStateException("next() was not called");
                }
                try {
                    changeLater(cached, current.userKey, current.userKeyBytes, true, null);
                } catch (IOException e) {
                    throw new FlinkRuntimeException("Error while writing map state to FlowKV.", e);
                }
                current = null;
            }
        };
    }

    /**
     * Sets ({@code remove}: removes) a user key of the map an iterator was made on, wherever that
     * map is now: the iterator may outlive its cache entry (evicted, or the map grew large), and
     * the key and namespace current then may differ.
     */
    private void changeLater(
            ObjectCache.Entry<K, N, Object> made,
            UK userKey,
            byte[] userKeyBytes,
            boolean remove,
            UV value)
            throws IOException {
        ObjectCache.Entry<K, N, Object> now = cache.peek(made.key, made.namespace);
        if (now != null && now.value != LARGE) {
            changeCached(now, userKey, userKeyBytes, remove, value);
            return;
        }
        byte[] key = keyBytes.key(made.key, made.keyGroup);
        byte[] namespace = keyBytes.namespace(made.namespace);
        if (remove) {
            maps.removeEntry(made.keyGroup, key, namespace, userKeyBytes);
        } else {
            maps.putEntry(made.keyGroup, key, namespace, userKeyBytes, userValueBytes(value));
        }
    }

    @Override
    public void clear() {
        if (cache != null) {
            ObjectCache.Entry<K, N, Object> cached =
                    cache.remove(backend.getCurrentKey(), currentNamespace());
            if (cached != null && !cached.stored) {
                return; // never written, nothing to remove from the store
            }
        }
        try {
            maps.remove(keyGroup(), keyBytes(), namespaceBytes());
        } catch (IOException e) {
            throw new FlinkRuntimeException("Error while removing data from FlowKV.", e);
        }
    }

    @Override
    public boolean isEmpty() throws IOException {
        CachedMap<UK, UV> map = cachedMap();
        if (map != null) {
            return map.isEmpty();
        }
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
    protected ObjectCache<K, N, ?> objectCache() {
        return cache;
    }

    @Override
    protected boolean servesFromCache(Object cached) {
        return cached != LARGE;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected byte[] serializedCachedValue(
            Object cached, TypeSerializer<Map<UK, UV>> safeValueSerializer) throws IOException {
        CachedMap<UK, UV> map = (CachedMap<UK, UV>) cached;
        if (map.isEmpty()) {
            return null;
        }
        Map<UK, UV> entries = new LinkedHashMap<>();
        for (Slot<UK, UV> slot : map.values()) {
            entries.put(slot.userKey, slot.value);
        }
        MapSerializer<UK, UV> safe = (MapSerializer<UK, UV>) safeValueSerializer;
        return KvStateSerializer.serializeMap(
                entries.entrySet(), safe.getKeySerializer(), safe.getValueSerializer());
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
