package io.flowkv.flink.timers;

import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;

import javax.annotation.Nullable;

import java.util.AbstractSet;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * One key group's timers kept as longs ({@link TimerPacking}): a record per timer in one {@code
 * long[]}, a binary heap of record ids by timestamp, and an open-addressing hash set of the ids
 * whose slots hold the timer's hash beside its id, so that a probe reads one {@code long} per slot
 * and a timer's longs only when the hashes are equal. Removal shifts the probe run back (no
 * tombstones); freed ids are reused; below an eighth of its capacity the partition packs its
 * records into fewer, so its heap follows the number of timers, not their history.
 *
 * <p>The head is handed out as an object made on first request and kept until the head changes:
 * Flink's timer service peeks at every watermark, and polls the timer it peeked.
 */
final class PackedTimerPartition<T extends HeapPriorityQueueElement>
        extends KeyGroupPartitionedQueueSet.Partition<T> {
    private static final int MIN_CAPACITY = 8;

    private final TimerPacking packing;
    private final int stride;

    /** Timer records, {@link TimerPacking#stride} longs each, by id. */
    private long[] records;

    /** Ids by heap position: a binary min-heap by timestamp. */
    private int[] heap;

    /** Heap position by id; for a free id, {@code -2 - next free id} ({@code -1}: none). */
    private int[] position;

    /** Slots: {@code hash << 32 | (id + 1)}, 0 when empty. A power of two long. */
    private long[] table;

    private int size;

    /** Ids below this have been used. */
    private int highWater;

    private int freeHead = -1;
    private int modifications;

    /** The head as an object, or null until asked for since the head last changed. */
    @Nullable private T headObject;

    PackedTimerPartition(TimerPacking packing) {
        this.packing = packing;
        this.stride = packing.stride;
        allocate(MIN_CAPACITY);
    }

    private void allocate(int capacity) {
        records = new long[capacity * stride];
        heap = new int[capacity];
        position = new int[capacity];
        table = new long[tableLength(capacity)];
    }

    /** Twice the capacity, so the load stays at or below one half. */
    private static int tableLength(int capacity) {
        return Integer.highestOneBit(capacity - 1) << 2;
    }

    @Override
    boolean isEmpty() {
        return size == 0;
    }

    @Override
    int size() {
        return size;
    }

    @Nullable
    @Override
    T peek() {
        if (size == 0) {
            return null;
        }
        T head = headObject;
        if (head == null) {
            head = cast(packing.unpack(records, heap[0] * stride));
            headObject = head;
        }
        return head;
    }

    /** The head's timestamp; the partition is not empty. */
    long headTimestamp() {
        return records[heap[0] * stride];
    }

    @Override
    int compareHeadTo(KeyGroupPartitionedQueueSet.Partition<T> other) {
        return Long.compare(headTimestamp(), ((PackedTimerPartition<T>) other).headTimestamp());
    }

    @Nullable
    @Override
    T poll() {
        if (size == 0) {
            return null;
        }
        T head = peek();
        int id = heap[0];
        unlink(slotOfId(id));
        removeAt(0);
        free(id);
        shrinkIfSparse();
        return head;
    }

    @Override
    int add(T element) {
        TimerHeapInternalTimer<?, ?> timer = (TimerHeapInternalTimer<?, ?>) element;
        int hash = packing.hash(timer);
        int slot = find(timer, hash);
        if (slot >= 0) {
            return UNCHANGED;
        }
        if (size == heap.length) {
            resize(heap.length << 1);
            return add(element);
        }
        int id = newId();
        packing.pack(timer, records, id * stride);
        table[-slot - 1] = ((long) hash << 32) | (id + 1);
        heap[size] = id;
        position[id] = size;
        size++;
        modifications++;
        siftUp(size - 1);
        return heap[0] == id ? HEAD_CHANGED : CHANGED;
    }

    @Override
    int remove(T element) {
        TimerHeapInternalTimer<?, ?> timer = (TimerHeapInternalTimer<?, ?>) element;
        int slot = find(timer, packing.hash(timer));
        if (slot < 0) {
            return UNCHANGED;
        }
        int id = (int) table[slot] - 1;
        int at = position[id];
        unlink(slot);
        removeAt(at);
        free(id);
        shrinkIfSparse();
        return at == 0 ? HEAD_CHANGED : CHANGED;
    }

    @Override
    boolean holds(T element) {
        return contains(element);
    }

    @Override
    void adjust(T element) {
        throw new UnsupportedOperationException(
                "FlowKV keeps this queue's timers as values (key and namespace packed as longs):"
                        + " a timer cannot be modified in place, remove it and add the new one");
    }

    @Override
    Set<T> asSet() {
        return new View();
    }

    // ---------------------------------------------------------------- hash set

    private static int home(int hash, int mask) {
        int h = hash * 0x9E3779B9;
        return (h ^ (h >>> 16)) & mask;
    }

    private boolean contains(Object o) {
        if (!(o instanceof TimerHeapInternalTimer)) {
            return false;
        }
        TimerHeapInternalTimer<?, ?> timer = (TimerHeapInternalTimer<?, ?>) o;
        return find(timer, packing.hash(timer)) >= 0;
    }

    /**
     * The slot of the timer equal to {@code timer}, or {@code -slot - 1} for the empty slot that
     * ends its probe run (where it would go). Reads a timer's longs only when the hashes are equal.
     */
    private int find(TimerHeapInternalTimer<?, ?> timer, int hash) {
        int mask = table.length - 1;
        int slot = home(hash, mask);
        while (true) {
            long v = table[slot];
            if (v == 0) {
                return -slot - 1;
            }
            if ((int) (v >>> 32) == hash
                    && packing.matches(timer, records, ((int) v - 1) * stride)) {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /** The slot of id {@code id}, which is in the table. */
    private int slotOfId(int id) {
        int mask = table.length - 1;
        int slot = home(packing.hash(records, id * stride), mask);
        while ((int) table[slot] - 1 != id) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    /**
     * Empties slot {@code hole} and moves later entries of its probe run back into it, so that
     * every entry stays reachable from its home slot without crossing an empty one.
     */
    private void unlink(int hole) {
        int mask = table.length - 1;
        int at = hole;
        while (true) {
            at = (at + 1) & mask;
            long v = table[at];
            if (v == 0) {
                break;
            }
            int home = home((int) (v >>> 32), mask);
            // The entry at `at` may fill the hole if its home is not cyclically in (hole, at].
            if (((at - home) & mask) >= ((at - hole) & mask)) {
                table[hole] = v;
                hole = at;
            }
        }
        table[hole] = 0;
    }

    // ---------------------------------------------------------------- ids

    private void shrinkIfSparse() {
        if (heap.length > MIN_CAPACITY && size < (heap.length >>> 3)) {
            resize(heap.length >>> 1);
        }
    }

    private int newId() {
        if (freeHead >= 0) {
            int id = freeHead;
            freeHead = -2 - position[id];
            return id;
        }
        return highWater++;
    }

    private void free(int id) {
        position[id] = -2 - freeHead;
        freeHead = id;
    }

    /**
     * Moves the records into arrays for {@code capacity} timers, ids renumbered in heap order (the
     * heap stays a heap, the head the same record), and rebuilds the hash set.
     */
    private void resize(int capacity) {
        long[] oldRecords = records;
        int[] oldHeap = heap;
        allocate(Math.max(MIN_CAPACITY, capacity));
        int mask = table.length - 1;
        for (int i = 0; i < size; i++) {
            System.arraycopy(oldRecords, oldHeap[i] * stride, records, i * stride, stride);
            heap[i] = i;
            position[i] = i;
            int hash = packing.hash(records, i * stride);
            int slot = home(hash, mask);
            while (table[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            table[slot] = ((long) hash << 32) | (i + 1);
        }
        highWater = size;
        freeHead = -1;
        modifications++;
    }

    // ---------------------------------------------------------------- heap

    /** Removes the id at heap position {@code at}; the caller frees the id. */
    private void removeAt(int at) {
        size--;
        modifications++;
        if (at == 0) {
            headObject = null;
        }
        if (at == size) {
            return;
        }
        int moved = heap[size];
        place(moved, at);
        siftUp(at);
        if (heap[at] == moved) {
            siftDown(at);
        }
    }

    private void siftUp(int at) {
        int id = heap[at];
        long time = records[id * stride];
        while (at > 0) {
            int parent = (at - 1) >>> 1;
            int parentId = heap[parent];
            if (records[parentId * stride] <= time) {
                break;
            }
            place(parentId, at);
            at = parent;
        }
        place(id, at);
    }

    private void siftDown(int at) {
        int id = heap[at];
        long time = records[id * stride];
        int half = size >>> 1;
        while (at < half) {
            int child = 2 * at + 1;
            int childId = heap[child];
            long childTime = records[childId * stride];
            int right = child + 1;
            if (right < size) {
                int rightId = heap[right];
                long rightTime = records[rightId * stride];
                if (rightTime < childTime) {
                    child = right;
                    childId = rightId;
                    childTime = rightTime;
                }
            }
            if (childTime >= time) {
                break;
            }
            place(childId, at);
            at = child;
        }
        place(id, at);
    }

    private void place(int id, int at) {
        if (at == 0 && heap[0] != id) {
            headObject = null;
        }
        heap[at] = id;
        position[id] = at;
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object o) {
        return (T) o;
    }

    /** The timers as objects, made as the iteration reaches them (snapshots, key-group subsets). */
    private final class View extends AbstractSet<T> {
        @Override
        public int size() {
            return size;
        }

        @Override
        public boolean contains(Object o) {
            return PackedTimerPartition.this.contains(o);
        }

        @Override
        public Iterator<T> iterator() {
            return new Iterator<T>() {
                private final int expected = modifications;
                private int next;

                @Override
                public boolean hasNext() {
                    check();
                    return next < size;
                }

                @Override
                public T next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    return cast(packing.unpack(records, heap[next++] * stride));
                }

                private void check() {
                    if (modifications != expected) {
                        throw new ConcurrentModificationException();
                    }
                }
            };
        }
    }
}
