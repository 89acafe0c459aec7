package io.flowkv.flink.timers;

import io.flowkv.core.queue.SortedQueueStore;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.util.CloseableIterator;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * A timer queue stored by FlowKV: the timers live in a {@link SortedQueueStore} (off the Java heap,
 * spilling to local disk), not in Java objects, so the heap does not grow with the number of
 * timers. Elements come out by timestamp and, among equal timestamps, key group by key group in
 * ascending order, like {@link KeyGroupPartitionedQueueSet}.
 *
 * <p>An element is stored as its byte-ordered serialization ({@code TimerSerializer}: timestamp
 * with the sign bit flipped, key, namespace) with the key group inserted after the timestamp:
 *
 * <pre>
 *   [timestamp ^ sign bit: 8 bytes BE][key group: 2 bytes BE][serialized key][serialized namespace]
 * </pre>
 *
 * so that unsigned byte order is (timestamp, key group, key, namespace). {@link #peek} hands out a
 * deserialized copy, cached until the head changes.
 *
 * <p>Full snapshots stream the timers from the store ({@link #forEachSerialized}); {@link #toArray}
 * and {@link #iterator} materialise every timer and are there for Flink's generic paths only.
 */
@Internal
public final class FlowKVTimerQueue<T extends HeapPriorityQueueElement> extends TimerQueueSet<T>
        implements Closeable {
    /** Bytes of the priority prefix of a {@code TimerSerializer} record (the timestamp). */
    static final int PRIORITY_BYTES = Long.BYTES;

    private final SortedQueueStore store;
    private final TypeSerializer<T> serializer;
    private final KeyExtractorFunction<T> keyExtractor;
    private final KeyGroupRange keyGroupRange;
    private final int totalKeyGroups;
    private final DataOutputSerializer out = new DataOutputSerializer(64);
    private final DataInputDeserializer in = new DataInputDeserializer();

    /** The current head and its stored bytes; valid only while {@link #headKnown}. */
    private T head;

    private byte[] headBytes;
    private boolean headKnown;

    /**
     * The last element added and found or made present, while nothing was polled or removed since:
     * a window operator registers the same timer for every element of a window, and such a repeat
     * is answered by {@code equals} without serializing it.
     */
    private T lastAdded;

    FlowKVTimerQueue(
            SortedQueueStore store,
            TypeSerializer<T> serializer,
            KeyExtractorFunction<T> keyExtractor,
            KeyGroupRange keyGroupRange,
            int totalKeyGroups) {
        super(keyExtractor, keyGroupRange, totalKeyGroups);
        this.store = store;
        this.serializer = serializer;
        this.keyExtractor = keyExtractor;
        this.keyGroupRange = keyGroupRange;
        this.totalKeyGroups = totalKeyGroups;
    }

    @Nullable
    @Override
    public T peek() {
        if (!headKnown) {
            try {
                byte[] bytes = store.peek();
                headBytes = bytes;
                head = bytes == null ? null : decode(bytes);
            } catch (IOException e) {
                throw failure("peek", e);
            }
            headKnown = true;
        }
        return head;
    }

    @Nullable
    @Override
    public T poll() {
        lastAdded = null;
        T polled = peek();
        if (polled == null) {
            return null;
        }
        try {
            store.poll();
        } catch (IOException e) {
            throw failure("poll", e);
        }
        forgetHead();
        return polled;
    }

    @Override
    public boolean add(@Nonnull T element) {
        if (lastAdded != null && lastAdded.equals(element)) {
            return false;
        }
        byte[] bytes = encode(element);
        try {
            boolean added = store.add(bytes);
            lastAdded = element;
            if (!added) {
                return false;
            }
        } catch (IOException e) {
            lastAdded = null;
            throw failure("add", e);
        }
        if (!headKnown) {
            return true;
        }
        if (headBytes == null || Arrays.compareUnsigned(bytes, headBytes) < 0) {
            head = element;
            headBytes = bytes;
            return true;
        }
        return false;
    }

    @Override
    public boolean remove(@Nonnull T element) {
        lastAdded = null;
        byte[] bytes = encode(element);
        try {
            if (!store.remove(bytes)) {
                return false;
            }
        } catch (IOException e) {
            throw failure("remove", e);
        }
        if (!headKnown || Arrays.equals(bytes, headBytes)) {
            forgetHead();
            return true;
        }
        return false;
    }

    @Override
    public void adjustModifiedElement(@Nonnull T element) {
        throw new UnsupportedOperationException(
                "FlowKV's stored timer queue keeps no element objects to adjust in place");
    }

    @Override
    public boolean isEmpty() {
        return store.isEmpty();
    }

    @Override
    public int size() {
        return (int) Math.min(Integer.MAX_VALUE, store.size());
    }

    @Override
    public <O> O[] toArray(O[] array) {
        return materialize(-1).toArray(array);
    }

    @Nonnull
    @Override
    public CloseableIterator<T> iterator() {
        return CloseableIterator.adapterForIterator(materialize(-1).iterator());
    }

    @Override
    public void clear() {
        lastAdded = null;
        try {
            store.clear();
        } catch (IOException e) {
            throw failure("clear", e);
        }
        forgetHead();
    }

    @Nonnull
    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        return new HashSet<>(materialize(keyGroupId));
    }

    /**
     * Fills this empty queue with every timer of {@code source}, polling it empty. A heap queue
     * polls in (timestamp, key group) order, the prefix of the stored order; the timers of each
     * (timestamp, key group) are sorted by their bytes here, so the store receives them ascending
     * and writes them once, as one run ({@link SortedQueueStore#loadAscending}). If that fails the
     * timers polled so far are gone from both: the caller must fail the task, whose restore brings
     * them back from the last checkpoint.
     */
    void moveFrom(HeapPriorityQueueSet<T> source) throws IOException {
        lastAdded = null;
        forgetHead();
        store.loadAscending(
                new Iterator<>() {
                    private final List<byte[]> group = new ArrayList<>();
                    private int next;

                    @Override
                    public boolean hasNext() {
                        if (next == group.size()) {
                            fill();
                        }
                        return next < group.size();
                    }

                    @Override
                    public byte[] next() {
                        if (!hasNext()) {
                            throw new NoSuchElementException();
                        }
                        return group.get(next++);
                    }

                    /** The timers of the next (timestamp, key group), sorted. */
                    private void fill() {
                        group.clear();
                        next = 0;
                        T first = source.poll();
                        if (first == null) {
                            return;
                        }
                        byte[] firstBytes = encode(first);
                        group.add(firstBytes);
                        for (T peeked = source.peek(); peeked != null; peeked = source.peek()) {
                            byte[] bytes = encode(peeked);
                            if (Arrays.compareUnsigned(
                                            bytes,
                                            0,
                                            PRIORITY_BYTES + 2,
                                            firstBytes,
                                            0,
                                            PRIORITY_BYTES + 2)
                                    != 0) {
                                break;
                            }
                            source.poll();
                            group.add(bytes);
                        }
                        group.sort(Arrays::compareUnsigned);
                    }
                });
    }

    /**
     * Fills this queue, which must never have held a timer, with timers in ascending stored order
     * ({@link #storedForm}), as a stored queue's snapshot lists them: written once as one sorted
     * run, no timer deserialized. Returns false, having read nothing, if the queue is not pristine.
     */
    boolean loadAscending(Iterator<byte[]> ascending) throws IOException {
        if (!store.isPristine()) {
            return false;
        }
        lastAdded = null;
        forgetHead();
        store.loadAscending(ascending);
        return true;
    }

    /**
     * Restores a stored queue's snapshot ({@code ascending}, as {@link #loadAscending} takes it)
     * straight into the store behind {@code queue}: a {@code FlowKVTimerQueue} that never held a
     * timer, or a {@link SpillingTimerQueue} that holds none, which moves into its store at once.
     * Returns false, having read nothing, for any other queue (the caller then adds the timers one
     * by one), including a spilling queue whose store the budget cannot pay for now.
     */
    public static boolean loadSnapshot(Object queue, Iterator<byte[]> ascending)
            throws IOException {
        if (queue instanceof FlowKVTimerQueue) {
            return ((FlowKVTimerQueue<?>) queue).loadAscending(ascending);
        }
        if (queue instanceof SpillingTimerQueue) {
            return ((SpillingTimerQueue<?>) queue).loadStored(ascending);
        }
        return false;
    }

    /**
     * The stored queue behind a registered timer queue: {@code queue} itself, the store a {@link
     * SpillingTimerQueue} moved into, or null for a queue whose timers are on the heap.
     */
    @Nullable
    public static FlowKVTimerQueue<?> storedBehind(Object queue) {
        if (queue instanceof FlowKVTimerQueue) {
            return (FlowKVTimerQueue<?>) queue;
        }
        if (queue instanceof SpillingTimerQueue) {
            return ((SpillingTimerQueue<?>) queue).stored();
        }
        return null;
    }

    /**
     * Visits every timer as (key group, its serialization by the queue's serializer), in no
     * particular order, without deserializing it: what snapshots write.
     */
    public void forEachSerialized(BiConsumer<Integer, byte[]> visitor) throws IOException {
        store.forEach(bytes -> visitor.accept(keyGroupOf(bytes), strip(bytes)));
    }

    /** Bytes of native memory charged to the budget. */
    long memoryUsed() {
        return store.memoryUsed();
    }

    @Override
    public void close() throws IOException {
        lastAdded = null;
        forgetHead();
        store.close();
    }

    private void forgetHead() {
        headKnown = false;
        head = null;
        headBytes = null;
    }

    private List<T> materialize(int keyGroup) {
        List<T> all = new ArrayList<>();
        try {
            store.forEach(
                    bytes -> {
                        if (keyGroup < 0 || keyGroupOf(bytes) == keyGroup) {
                            all.add(decode(bytes));
                        }
                    });
        } catch (IOException e) {
            throw failure("read", e);
        }
        return all;
    }

    private byte[] encode(T element) {
        int keyGroup =
                KeyGroupRangeAssignment.assignToKeyGroup(
                        keyExtractor.extractKeyFromElement(element), totalKeyGroups);
        if (!keyGroupRange.contains(keyGroup)) {
            throw new IllegalArgumentException(
                    "Timer of key group " + keyGroup + " outside this backend's " + keyGroupRange);
        }
        out.clear();
        try {
            serializer.serialize(element, out);
        } catch (IOException e) {
            throw failure("serialize", e);
        }
        return storedForm(keyGroup, out.getSharedBuffer(), 0, out.length());
    }

    /**
     * The bytes the store keeps for a timer: the {@code length} bytes of {@code serialized} from
     * {@code offset}, its serializer's, with the key group (two bytes, big-endian) after the
     * timestamp. The inverse of {@link #strip}.
     */
    public static byte[] storedForm(int keyGroup, byte[] serialized, int offset, int length) {
        if (length < PRIORITY_BYTES) {
            throw new IllegalArgumentException(
                    "A timer of " + length + " bytes, fewer than its timestamp");
        }
        byte[] bytes = new byte[length + 2];
        System.arraycopy(serialized, offset, bytes, 0, PRIORITY_BYTES);
        bytes[PRIORITY_BYTES] = (byte) (keyGroup >>> 8);
        bytes[PRIORITY_BYTES + 1] = (byte) keyGroup;
        System.arraycopy(
                serialized,
                offset + PRIORITY_BYTES,
                bytes,
                PRIORITY_BYTES + 2,
                length - PRIORITY_BYTES);
        return bytes;
    }

    private T decode(byte[] bytes) {
        in.setBuffer(strip(bytes));
        try {
            return serializer.deserialize(in);
        } catch (IOException e) {
            throw failure("deserialize", e);
        }
    }

    static int keyGroupOf(byte[] stored) {
        return ((stored[PRIORITY_BYTES] & 0xFF) << 8) | (stored[PRIORITY_BYTES + 1] & 0xFF);
    }

    /** The serializer's bytes of a stored element (the key group taken out). */
    static byte[] strip(byte[] stored) {
        byte[] plain = new byte[stored.length - 2];
        System.arraycopy(stored, 0, plain, 0, PRIORITY_BYTES);
        System.arraycopy(
                stored,
                PRIORITY_BYTES + 2,
                plain,
                PRIORITY_BYTES,
                stored.length - PRIORITY_BYTES - 2);
        return plain;
    }

    private static UncheckedIOException failure(String what, IOException e) {
        return new UncheckedIOException(
                "FlowKV timer queue: " + what + " failed: " + e.getMessage(), e);
    }
}
