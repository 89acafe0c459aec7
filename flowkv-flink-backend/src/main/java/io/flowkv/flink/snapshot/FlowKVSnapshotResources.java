package io.flowkv.flink.snapshot;

import io.flowkv.flink.storage.ByteArray;
import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.MapStateStorage;
import io.flowkv.flink.storage.RegisteredState;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.FullSnapshotResources;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the asynchronous part of a snapshot needs: the meta infos, the spilled entries and the timer
 * copies. Its iterator yields Flink's canonical entries ordered by key group, then state:
 *
 * <ul>
 *   <li>value, reducing, aggregating: {@code key ++ namespace -> value};
 *   <li>list: {@code key ++ namespace -> elements joined by ','} (Flink's delimited list);
 *   <li>map: one entry per user key, {@code key ++ namespace ++ userKey -> [null flag][value]};
 *   <li>timers: {@code [key group][serialized timer] -> empty}.
 * </ul>
 */
final class FlowKVSnapshotResources<K> implements FullSnapshotResources<K> {
    private static final byte[] EMPTY = new byte[0];

    /** Flink's delimited list format joins serialized elements with this byte. */
    private static final int LIST_DELIMITER = ',';

    private final List<StateMetaInfoSnapshot> metaInfos;
    private final boolean[] listStates;
    private final boolean[] mapStates;
    private final List<HeapPriorityQueueStateSnapshot<?>> queues;
    private final SnapshotSpill spill;
    private final TypeSerializer<K> keySerializer;
    private final KeyGroupRange keyGroupRange;
    private final int keyGroupPrefixBytes;
    private final StreamCompressionDecorator compression;

    FlowKVSnapshotResources(
            List<StateMetaInfoSnapshot> metaInfos,
            List<RegisteredState> kvStates,
            List<HeapPriorityQueueStateSnapshot<?>> queues,
            SnapshotSpill spill,
            TypeSerializer<K> keySerializer,
            KeyGroupRange keyGroupRange,
            int keyGroupPrefixBytes,
            StreamCompressionDecorator compression) {
        this.metaInfos = metaInfos;
        this.listStates = new boolean[kvStates.size()];
        this.mapStates = new boolean[kvStates.size()];
        for (int i = 0; i < kvStates.size(); i++) {
            listStates[i] = kvStates.get(i).isList();
            mapStates[i] = kvStates.get(i).metaInfo().getStateType() == StateDescriptor.Type.MAP;
        }
        this.queues = queues;
        this.spill = spill;
        this.keySerializer = keySerializer;
        this.keyGroupRange = keyGroupRange;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.compression = compression;
    }

    @Override
    public List<StateMetaInfoSnapshot> getMetaInfoSnapshots() {
        return metaInfos;
    }

    @Override
    public KeyGroupRange getKeyGroupRange() {
        return keyGroupRange;
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return keySerializer;
    }

    @Override
    public StreamCompressionDecorator getStreamCompressionDecorator() {
        return compression;
    }

    @Override
    public void release() {
        spill.release();
    }

    @Override
    public KeyValueStateIterator createKVStateIterator() {
        return new SpillIterator();
    }

    /** One canonical entry. */
    private record Entry(int keyGroup, int stateId, byte[] key, byte[] value) {}

    private static final Comparator<Entry> ORDER =
            Comparator.comparingInt(Entry::keyGroup).thenComparingInt(Entry::stateId);

    /** Walks the spill bucket by bucket; one bucket's entries are in memory at a time. */
    private final class SpillIterator implements KeyValueStateIterator {
        private int bucket = -1;
        private List<Entry> entries = List.of();
        private int position;
        private Entry previous;
        private Entry current;

        SpillIterator() {
            advance();
        }

        private void advance() {
            previous = current;
            while (position >= entries.size()) {
                if (++bucket >= spill.buckets()) {
                    current = null;
                    return;
                }
                try {
                    entries = load(bucket);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                position = 0;
            }
            current = entries.get(position++);
        }

        @Override
        public void next() throws IOException {
            try {
                advance();
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        }

        @Override
        public int keyGroup() {
            return current.keyGroup();
        }

        @Override
        public byte[] key() {
            return current.key();
        }

        @Override
        public byte[] value() {
            return current.value();
        }

        @Override
        public int kvStateId() {
            return current.stateId();
        }

        @Override
        public boolean isNewKeyValueState() {
            return previous == null
                    || previous.stateId() != current.stateId()
                    || previous.keyGroup() != current.keyGroup();
        }

        @Override
        public boolean isNewKeyGroup() {
            return previous == null || previous.keyGroup() != current.keyGroup();
        }

        @Override
        public boolean isValid() {
            return current != null;
        }

        @Override
        public void close() {}
    }

    /** Identifies one list: its state and its composite key. */
    private record ListId(int stateIndex, ByteArray composite) {}

    private List<Entry> load(int bucket) throws IOException {
        List<Entry> out = new ArrayList<>();
        // List elements of one (state, key, namespace) arrive in order; join them per list.
        Map<ListId, ByteArrayOutputStream> lists = new LinkedHashMap<>();
        spill.read(
                bucket,
                (stateIndex, key, namespace, value) -> {
                    int keyGroup = KeyBytes.keyGroupOf(key, keyGroupPrefixBytes);
                    byte[] composite = concat(key, namespace);
                    if (stateIndex >= listStates.length) {
                        // A timer of a queue FlowKV stores: already a canonical timer entry.
                        out.add(new Entry(keyGroup, stateIndex, key, value));
                    } else if (listStates[stateIndex]) {
                        ListId id = new ListId(stateIndex, new ByteArray(composite));
                        ByteArrayOutputStream joined = lists.get(id);
                        if (joined == null) {
                            lists.put(id, joined = new ByteArrayOutputStream());
                        } else {
                            joined.write(LIST_DELIMITER);
                        }
                        joined.write(value);
                    } else if (mapStates[stateIndex]) {
                        MapStateStorage.forEachRawEntry(
                                value,
                                (buf, keyOffset, keyLength, valueOffset, valueLength) ->
                                        out.add(
                                                new Entry(
                                                        keyGroup,
                                                        stateIndex,
                                                        concat(
                                                                composite, buf, keyOffset,
                                                                keyLength),
                                                        nullFlagged(
                                                                buf, valueOffset, valueLength))));
                    } else {
                        out.add(new Entry(keyGroup, stateIndex, composite, value));
                    }
                });
        for (Map.Entry<ListId, ByteArrayOutputStream> list : lists.entrySet()) {
            byte[] composite = list.getKey().composite().bytes();
            out.add(
                    new Entry(
                            KeyBytes.keyGroupOf(composite, keyGroupPrefixBytes),
                            list.getKey().stateIndex(),
                            composite,
                            list.getValue().toByteArray()));
        }
        addTimers(bucket, out);
        out.sort(ORDER);
        return out;
    }

    /** A map value as Flink's savepoints store it: a null flag, then the value if not null. */
    private static byte[] nullFlagged(byte[] buf, int offset, int length) {
        if (length < 0) {
            return new byte[] {1};
        }
        byte[] flagged = new byte[1 + length];
        System.arraycopy(buf, offset, flagged, 1, length);
        return flagged;
    }

    @SuppressWarnings("unchecked")
    private void addTimers(int bucket, List<Entry> out) throws IOException {
        int firstQueueId = listStates.length;
        DataOutputSerializer keyOut = new DataOutputSerializer(64);
        for (int q = 0; q < queues.size(); q++) {
            HeapPriorityQueueStateSnapshot<Object> queue =
                    (HeapPriorityQueueStateSnapshot<Object>) queues.get(q);
            if (queue == null) {
                continue; // stored by FlowKV: spilled with the key-value states
            }
            TypeSerializer<Object> serializer = queue.getMetaInfo().getElementSerializer();
            for (int kg = spill.firstKeyGroup(bucket); kg <= spill.lastKeyGroup(bucket); kg++) {
                Iterator<Object> timers = queue.getIteratorForKeyGroup(kg);
                while (timers.hasNext()) {
                    keyOut.clear();
                    CompositeKeySerializationUtils.writeKeyGroup(kg, keyGroupPrefixBytes, keyOut);
                    serializer.serialize(timers.next(), keyOut);
                    out.add(new Entry(kg, firstQueueId + q, keyOut.getCopyOfBuffer(), EMPTY));
                }
            }
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        return concat(a, b, 0, b.length);
    }

    private static byte[] concat(byte[] a, byte[] b, int offset, int length) {
        byte[] joined = new byte[a.length + length];
        System.arraycopy(a, 0, joined, 0, a.length);
        System.arraycopy(b, offset, joined, a.length, length);
        return joined;
    }
}
