package io.flowkv.flink.state;

import io.flowkv.core.TriggerTimes;
import io.flowkv.core.ValueConsumer;
import io.flowkv.flink.storage.ListStateStorage;
import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.Preconditions;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;

/**
 * List state on a list storage: AAR or AUR for window contents, the general store otherwise. Each
 * element is stored serialized on its own; appends never read what is already there.
 */
@Internal
public final class FlowKVListState<K, N, V> extends AbstractFlowKVState<K, N, List<V>>
        implements InternalListState<K, N, V> {
    private TypeSerializer<V> elementSerializer;

    /** Flink's delimited list format joins serialized elements with this byte. */
    private static final int DELIMITER = ',';

    private final ListStateStorage elements;
    private final DataOutputSerializer elementOut = new DataOutputSerializer(64);
    private final ElementReader reader = new ElementReader();

    /** Set for the merging window set of a session operator: where its trigger times go. */
    private FlowKVListState<K, Object, ?> windowContents;

    /**
     * For the merging window set of a session operator: its lists as objects ({@link #cacheLists}),
     * or null.
     */
    private ObjectCache<K, N, List<V>> cachedLists;

    /**
     * The cached value of a (key, namespace) known to hold no list: a session operator empties its
     * merging window set when a key's last session fires, and the key's next element reads it again
     * as the first of a new session. Kept as an entry, that read is a cache hit, not a store lookup
     * that finds nothing. Told apart by identity.
     */
    private static final List<Object> NO_LIST = Collections.unmodifiableList(new ArrayList<>(0));

    FlowKVListState(
            StateKeyContext<K> backend,
            ListStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<List<V>> valueSerializer) {
        super(backend, storage, namespaceSerializer, valueSerializer);
        this.elements = storage;
        this.elementSerializer = ((ListSerializer<V>) valueSerializer).getElementSerializer();
    }

    /** A list state, reported to {@code windows} in case it is one of a window operator's. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K, N, SV> AbstractFlowKVState<K, N, SV> create(
            StateDescriptor<?, SV> descriptor,
            StateKeyContext<K> backend,
            ListStateStorage storage,
            TypeSerializer<N> namespaceSerializer,
            TypeSerializer<SV> stateSerializer,
            WindowStates<K> windows) {
        FlowKVListState<K, N, Object> state =
                new FlowKVListState<>(
                        backend,
                        storage,
                        namespaceSerializer,
                        (TypeSerializer<List<Object>>) stateSerializer);
        windows.listStateCreated(descriptor.getName(), state);
        return (AbstractFlowKVState) state;
    }

    @Override
    protected void setSerializers(
            TypeSerializer<N> namespaceSerializer, TypeSerializer<List<V>> serializer) {
        super.setSerializers(namespaceSerializer, serializer);
        this.elementSerializer = ((ListSerializer<V>) serializer).getElementSerializer();
    }

    /**
     * Keeps this state's lists as live objects, up to the backend's bound: for the merging window
     * set of a session window operator, which the operator reads whole for every element and
     * replaces whole ({@code update}) whenever a window grows or merges, and never changes after
     * reading. {@code get} then returns an unmodifiable list.
     */
    void cacheLists() {
        ObjectCacheBudget budget = backend.objectCacheBudget();
        if (budget != null && cachedLists == null) {
            cachedLists = new ObjectCache<>(budget, this::writeList);
        }
    }

    void feedTriggerTimesTo(FlowKVListState<K, Object, ?> windowContents) {
        this.windowContents = windowContents;
    }

    /** The store the elements are in now, or null before the state's first use. */
    StorePattern pattern() {
        return elements.pattern();
    }

    @Override
    public Iterable<V> get() throws IOException {
        return getInternal();
    }

    @Override
    public List<V> getInternal() throws IOException {
        if (cachedLists == null) {
            return read();
        }
        ObjectCache.Entry<K, N, List<V>> entry =
                cachedLists.get(backend.getCurrentKey(), currentNamespace());
        if (entry != null) {
            if (entry.value == NO_LIST) {
                return null;
            }
            if (cachedLists.sampleDue()) {
                cachedLists.measured(sizeOf(entry.value));
            }
            return handOut(entry.value);
        }
        List<V> read = read();
        if (read == null) {
            cacheAtCurrentKey(cachedLists, currentNamespace(), noList(), false, false);
            return null;
        }
        List<V> stored = cachedCopy(null, read);
        cachedLists.measured(sizeOf(stored));
        cacheAtCurrentKey(cachedLists, currentNamespace(), stored, false, true);
        return handOut(stored);
    }

    /** What {@code get} returns for a cached list: the list, or fresh pairs of a compact one. */
    private static <V> List<V> handOut(List<V> cached) {
        return cached instanceof TimeWindowPairs ? ((TimeWindowPairs) cached).copy() : cached;
    }

    /**
     * The form in which to cache {@code values} at {@code entry} (null: a new entry): a merging
     * window set of time windows as {@link TimeWindowPairs}, in the entry's own array when the size
     * has not changed; any other list as a {@link #compactCopy}.
     */
    @SuppressWarnings("unchecked")
    private static <K, N, V> List<V> cachedCopy(
            ObjectCache.Entry<K, N, List<V>> entry, List<V> values) {
        if (!TimeWindowPairs.fits(values)) {
            return compactCopy(values);
        }
        if (entry != null
                && entry.value instanceof TimeWindowPairs
                && ((TimeWindowPairs) entry.value).refill(values)) {
            return entry.value;
        }
        return (List<V>) TimeWindowPairs.of(values);
    }

    /**
     * An unmodifiable copy of a list to cache, in the JDK's compact immutable lists: a list of one
     * or two elements holds them in its own fields, a longer one in one array. The operator reads a
     * cached list whole at every element, usually after it has aged out of the CPU caches, and
     * every level of indirection (wrapper, list, array) is a dependent memory load on that path.
     * Null elements are refused with the list state's message.
     */
    private static <V> List<V> compactCopy(List<V> values) {
        for (V value : values) {
            Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
        }
        return List.copyOf(values);
    }

    /** The list at the current key and namespace in the store, or null. */
    private List<V> read() throws IOException {
        List<V> result = new ArrayList<>();
        reader.into = result;
        try {
            boolean found = elements.getElements(keyGroup(), keyBytes(), namespaceBytes(), reader);
            return found ? result : null;
        } finally {
            reader.into = null;
        }
    }

    /**
     * Deserializes each stored element into the list {@link #read} is filling. One per state, so
     * that a read does not create a capturing lambda: a session operator's firing reads hundreds of
     * thousands of windows back to back, and a q7-session profile put about 1% of its window thread
     * in making that lambda (its allocation and the {@code invokedynamic} call).
     */
    private final class ElementReader implements ValueConsumer {
        private List<V> into;

        @Override
        public void accept(byte[] buffer, int offset, int length) {
            try {
                in.setBuffer(buffer, offset, length);
                into.add(elementSerializer.deserialize(in));
            } catch (IOException e) {
                throw new FlinkRuntimeException(
                        "Error while deserializing a list element from FlowKV.", e);
            }
        }
    }

    @Override
    public void add(V value) throws IOException {
        Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
        uncache(currentNamespace());
        elements.append(keyGroup(), keyBytes(), namespaceBytes(), serializeElement(value));
    }

    @Override
    public void addAll(List<V> values) throws IOException {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        uncache(currentNamespace());
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] namespace = namespaceBytes();
        for (V value : values) {
            Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
            elements.append(keyGroup, key, namespace, serializeElement(value));
        }
    }

    @SuppressWarnings("unchecked")
    private static <V> List<V> noList() {
        return (List<V>) NO_LIST;
    }

    @Override
    public void update(List<V> values) throws IOException {
        Preconditions.checkNotNull(values, "List of values to add cannot be null.");
        if (cachedLists != null) {
            ObjectCache.Entry<K, N, List<V>> entry =
                    cachedLists.get(backend.getCurrentKey(), currentNamespace());
            if (!values.isEmpty()) {
                List<V> copy = cachedCopy(entry, values);
                if (entry != null) {
                    entry.value = copy;
                    entry.dirty = true;
                } else {
                    // Whether the store holds a list here is not known without a read: assume it
                    // may.
                    cacheAtCurrentKey(cachedLists, currentNamespace(), copy, true, true);
                }
                if (windowContents != null) {
                    windowContents.onMergingWindowSetUpdate(values);
                }
                return;
            }
            if (entry != null && !entry.stored) {
                // Nothing to remove from the store: the entry stays, known to be empty.
                entry.value = noList();
                entry.dirty = false;
                return;
            }
            if (entry != null) {
                // The store may hold a list: it is removed below, and uncache drops the entry
                // without writing its old list first.
                entry.dirty = false;
            }
        }
        uncache(currentNamespace());
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] namespace = namespaceBytes();
        List<byte[]> serialized = new ArrayList<>(values.size());
        for (V value : values) {
            Preconditions.checkNotNull(value, "You cannot add null to a ListState.");
            serialized.add(serializeElement(value));
        }
        elements.remove(keyGroup, key, namespace);
        for (byte[] element : serialized) {
            elements.append(keyGroup, key, namespace, element);
        }
        if (windowContents != null) {
            windowContents.onMergingWindowSetUpdate(values);
        }
    }

    @Override
    public void updateInternal(List<V> values) throws IOException {
        update(values);
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws IOException {
        if (sources == null || sources.isEmpty()) {
            return;
        }
        uncache(target);
        for (N source : sources) {
            uncache(source);
        }
        int keyGroup = keyGroup();
        byte[] key = keyBytes();
        byte[] targetNamespace = namespaceBytes(target);
        for (N source : sources) {
            if (source == null) {
                continue;
            }
            byte[] sourceNamespace = namespaceBytes(source);
            List<byte[]> moved = new ArrayList<>();
            elements.getElements(
                    keyGroup,
                    key,
                    sourceNamespace,
                    (buf, off, len) -> moved.add(Arrays.copyOfRange(buf, off, off + len)));
            elements.remove(keyGroup, key, sourceNamespace);
            for (byte[] element : moved) {
                elements.append(keyGroup, key, targetNamespace, element);
            }
        }
    }

    /**
     * Moves the cached list at (current key, {@code namespace}), if any, back to the store, for an
     * operation that works on the stored elements.
     */
    private void uncache(N namespace) throws IOException {
        if (cachedLists == null) {
            return;
        }
        ObjectCache.Entry<K, N, List<V>> entry =
                cachedLists.remove(backend.getCurrentKey(), namespace);
        if (entry != null && entry.dirty) {
            writeList(entry);
        }
    }

    /** The serialized size of the current key, namespace and {@code list}'s elements. */
    private int sizeOf(List<V> list) throws IOException {
        int bytes = keyBytes().length + namespaceBytes().length;
        for (V value : list) {
            elementOut.clear();
            elementSerializer.serialize(value, elementOut);
            bytes += elementOut.length();
        }
        return bytes;
    }

    /** Replaces the stored list of a cached entry with its elements. */
    private void writeList(ObjectCache.Entry<K, N, List<V>> entry) throws IOException {
        byte[] key = keyBytes.key(entry.key, entry.keyGroup);
        byte[] namespace = keyBytes.namespace(entry.namespace);
        List<byte[]> serialized = new ArrayList<>(entry.value.size());
        int bytes = key.length + namespace.length;
        for (V value : entry.value) {
            byte[] element = serializeElement(value);
            bytes += element.length;
            serialized.add(element);
        }
        cachedLists.measured(bytes);
        elements.remove(entry.keyGroup, key, namespace);
        for (byte[] element : serialized) {
            elements.append(entry.keyGroup, key, namespace, element);
        }
    }

    @Override
    protected ObjectCache<K, N, ?> objectCache() {
        return cachedLists;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected byte[] serializedCachedValue(
            Object cached, TypeSerializer<List<V>> safeValueSerializer) throws IOException {
        if (cached == NO_LIST) {
            return null;
        }
        TypeSerializer<V> element =
                ((ListSerializer<V>) safeValueSerializer).getElementSerializer();
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        for (V value : (List<V>) cached) {
            if (joined.size() > 0) {
                joined.write(DELIMITER);
            }
            joined.write(serializeElement(element, value));
        }
        return joined.toByteArray();
    }

    /**
     * Called on the merging window set of a session operator when it is persisted: every entry maps
     * a (merged) window to the state window its data lives under, and the merged window's end is
     * exactly when its trigger reads that data.
     */
    @SuppressWarnings("unchecked")
    private <W> void onMergingWindowSetUpdate(List<W> mapping) throws IOException {
        int keyGroup = keyGroup();
        TriggerTimes times = elements.triggerTimes(keyGroup);
        if (times == null) {
            return;
        }
        byte[] key = keyBytes();
        for (W entry : mapping) {
            if (entry instanceof Tuple2
                    && ((Tuple2<?, ?>) entry).f0 instanceof TimeWindow
                    && ((Tuple2<?, ?>) entry).f1 instanceof TimeWindow) {
                TimeWindow window = (TimeWindow) ((Tuple2<?, ?>) entry).f0;
                N stateWindow = (N) ((Tuple2<?, ?>) entry).f1;
                times.setTriggerTime(key, namespaceBytes(stateWindow), window.maxTimestamp());
            }
        }
    }

    /**
     * A timer at {@code time} was registered ({@code added}) or deleted for window {@code
     * namespace} of {@code key}: tells the store, which keeps the earliest as the window's trigger
     * time if it holds the window (AUR).
     */
    void triggerTime(K key, N namespace, long time, boolean added) throws IOException {
        boolean current = key.equals(backend.getCurrentKey());
        int keyGroup =
                current
                        ? keyGroup()
                        : KeyGroupRangeAssignment.assignToKeyGroup(
                                key, backend.getNumberOfKeyGroups());
        TriggerTimes times = elements.triggerTimes(keyGroup);
        if (times == null) {
            return;
        }
        byte[] keyBytes = current ? keyBytes() : this.keyBytes.key(key, keyGroup);
        if (added) {
            times.offerTriggerTime(keyBytes, namespaceBytes(namespace), time);
        } else {
            times.withdrawTriggerTime(keyBytes, namespaceBytes(namespace), time);
        }
    }

    private byte[] serializeElement(V value) throws IOException {
        return serializeElement(elementSerializer, value);
    }

    private byte[] serializeElement(TypeSerializer<V> serializer, V value) throws IOException {
        elementOut.clear();
        serializer.serialize(value, elementOut);
        return elementOut.getCopyOfBuffer();
    }

    @Override
    protected byte[] serializedValue(
            int keyGroup, byte[] key, byte[] namespace, TypeSerializer<List<V>> safe)
            throws IOException {
        ByteArrayOutputStream joined = new ByteArrayOutputStream();
        boolean found =
                elements.getElements(
                        keyGroup,
                        key,
                        namespace,
                        (buf, off, len) -> {
                            if (joined.size() > 0) {
                                joined.write(DELIMITER);
                            }
                            joined.write(buf, off, len);
                        });
        return found ? joined.toByteArray() : null;
    }

    @Override
    @SuppressWarnings("unchecked")
    public byte[] migrateValue(
            byte[] stored, TypeSerializer<List<V>> prior, TypeSerializer<List<V>> current)
            throws IOException {
        TypeSerializer<V> priorElement = ((ListSerializer<V>) prior).getElementSerializer();
        TypeSerializer<V> currentElement = ((ListSerializer<V>) current).getElementSerializer();
        in.setBuffer(stored);
        V element = priorElement.deserialize(in);
        return serializeElement(currentElement, element);
    }
}
