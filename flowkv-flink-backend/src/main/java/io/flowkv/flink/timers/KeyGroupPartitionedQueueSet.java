package io.flowkv.flink.timers;

import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.PriorityComparator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueue;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.util.CloseableIterator;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.util.Arrays;
import java.util.Collections;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * A timer queue set that keeps one heap per key group and a small heap of the key groups ordered by
 * (head priority, key group): elements come out by priority and, among equal priorities, key group
 * by key group in ascending order.
 *
 * <p>Ordering one heap over all key groups by (priority, key group) would compute an element's key
 * group (a murmur hash) at every comparison among equal priorities — nearly all of them when a
 * window ends at the same instant for every key (measured: 19% of a Q8 task thread). Here the key
 * group is computed once per add, poll and remove, heaps compare priorities only, and the heap of
 * key groups compares an int on ties.
 *
 * <p>A key group's elements are either objects (a heap and a {@link MemberTable}) or, for Flink
 * timers of numeric keys and simple namespaces, longs ({@link PackedTimerPartition}).
 */
final class KeyGroupPartitionedQueueSet<T extends HeapPriorityQueueElement>
        extends TimerQueueSet<T> {

    private final PriorityComparator<T> comparator;
    private final KeyExtractorFunction<T> keyExtractor;
    private final KeyGroupRange keyGroupRange;
    private final int totalKeyGroups;
    private final int minimumCapacity;
    @Nullable private final TimerPacking packing;

    /** Per local key group (index = key group - first key group), created on first use. */
    private final Partition<T>[] partitions;

    /** Heap of local key-group indices with a non-empty partition. */
    private final int[] groupHeap;

    /** Position of a local key group in {@link #groupHeap}, -1 when absent. */
    private final int[] heapPosition;

    private int groupCount;
    private int size;

    /**
     * The element the last add stored or found, while it is still queued (null once anything leaves
     * the queue). A window operator registers the same timer twice per element, for its trigger and
     * for its cleanup: the second add then costs an equals, not a key-group hash and a hash-set
     * probe.
     */
    @Nullable private T lastAdded;

    /** A queue that keeps its elements as objects. */
    KeyGroupPartitionedQueueSet(
            PriorityComparator<T> comparator,
            KeyExtractorFunction<T> keyExtractor,
            int minimumCapacity,
            KeyGroupRange keyGroupRange,
            int totalKeyGroups) {
        this(comparator, keyExtractor, minimumCapacity, keyGroupRange, totalKeyGroups, null);
    }

    /**
     * A queue of Flink timers ({@code TimerHeapInternalTimer}) that keeps them packed as longs when
     * {@code packing} is not null ({@link PackedTimerPartition}), else as objects.
     */
    @SuppressWarnings("unchecked")
    KeyGroupPartitionedQueueSet(
            PriorityComparator<T> comparator,
            KeyExtractorFunction<T> keyExtractor,
            int minimumCapacity,
            KeyGroupRange keyGroupRange,
            int totalKeyGroups,
            @Nullable TimerPacking packing) {
        super(comparator, keyExtractor, keyGroupRange, totalKeyGroups);
        this.packing = packing;
        this.comparator = comparator;
        this.keyExtractor = keyExtractor;
        this.keyGroupRange = keyGroupRange;
        this.totalKeyGroups = totalKeyGroups;
        this.minimumCapacity = minimumCapacity;
        int groups = keyGroupRange.getNumberOfKeyGroups();
        this.partitions = (Partition<T>[]) new Partition<?>[groups];
        this.groupHeap = new int[groups];
        this.heapPosition = new int[groups];
        Arrays.fill(heapPosition, -1);
    }

    @Nullable
    @Override
    public T peek() {
        return groupCount == 0 ? null : partitions[groupHeap[0]].peek();
    }

    @Nullable
    @Override
    public T poll() {
        if (groupCount == 0) {
            return null;
        }
        lastAdded = null;
        int group = groupHeap[0];
        Partition<T> partition = partitions[group];
        T head = partition.poll();
        size--;
        if (partition.isEmpty()) {
            removeGroupAt(0);
        } else {
            siftDown(0);
        }
        return head;
    }

    @Override
    public boolean add(@Nonnull T element) {
        T last = lastAdded;
        if (last != null && last.equals(element)) {
            return false;
        }
        int group = localGroup(element);
        Partition<T> partition = partitions[group];
        if (partition == null) {
            partition =
                    packing != null
                            ? new PackedTimerPartition<>(packing)
                            : new ObjectPartition<>(comparator, minimumCapacity);
            partitions[group] = partition;
        }
        int change = partition.add(element);
        // The element stays queued either way, as the one added or the equal one found.
        lastAdded = element;
        if (change == Partition.UNCHANGED) {
            return false;
        }
        size++;
        if (heapPosition[group] < 0) {
            insertGroup(group);
        } else if (change == Partition.HEAD_CHANGED) {
            siftUp(heapPosition[group]);
        }
        // The queue's head is new if and only if the element became its group's head and the
        // group came to the top.
        return change == Partition.HEAD_CHANGED && groupHeap[0] == group;
    }

    @Override
    public boolean remove(@Nonnull T element) {
        lastAdded = null;
        int group = localGroup(element);
        Partition<T> partition = partitions[group];
        if (partition == null) {
            return false;
        }
        boolean groupOnTop = heapPosition[group] == 0;
        int change = partition.remove(element);
        if (change == Partition.UNCHANGED) {
            return false;
        }
        size--;
        if (partition.isEmpty()) {
            removeGroupAt(heapPosition[group]);
        } else if (change == Partition.HEAD_CHANGED) {
            // The group's place in the heap of groups follows its head only.
            reposition(heapPosition[group]);
        }
        // The queue's head left if and only if the element was its group's head, on top.
        return groupOnTop && change == Partition.HEAD_CHANGED;
    }

    @Override
    public void adjustModifiedElement(@Nonnull T element) {
        lastAdded = null;
        int group = localGroup(element);
        Partition<T> partition = partitions[group];
        if (partition == null || !partition.holds(element)) {
            throw new IllegalArgumentException("Element is not in this queue: " + element);
        }
        partition.adjust(element);
        reposition(heapPosition[group]);
    }

    @Override
    public boolean isEmpty() {
        return size == 0;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <O> O[] toArray(O[] out) {
        O[] result = out.length >= size ? out : Arrays.copyOf(out, size);
        int i = 0;
        for (Partition<T> partition : partitions) {
            if (partition != null) {
                for (T element : partition.asSet()) {
                    result[i++] = (O) element;
                }
            }
        }
        if (result.length > size) {
            result[size] = null;
        }
        return result;
    }

    @Nonnull
    @Override
    public CloseableIterator<T> iterator() {
        return new AllElements();
    }

    @Override
    public void clear() {
        lastAdded = null;
        Arrays.fill(partitions, null);
        Arrays.fill(heapPosition, -1);
        groupCount = 0;
        size = 0;
    }

    @Nonnull
    @Override
    public Set<T> getSubsetForKeyGroup(int keyGroupId) {
        Partition<T> partition = partitions[localIndex(keyGroupId)];
        return partition == null ? Collections.emptySet() : partition.asSet();
    }

    private int localGroup(T element) {
        return localIndex(
                KeyGroupRangeAssignment.assignToKeyGroup(
                        keyExtractor.extractKeyFromElement(element), totalKeyGroups));
    }

    private int localIndex(int keyGroup) {
        if (!keyGroupRange.contains(keyGroup)) {
            throw new IllegalArgumentException(
                    keyGroupRange + " does not contain key group " + keyGroup);
        }
        return keyGroup - keyGroupRange.getStartKeyGroup();
    }

    // ---- the heap of key groups, ordered by (head priority, key group) ----

    private boolean less(int groupA, int groupB) {
        int byPriority = partitions[groupA].compareHeadTo(partitions[groupB]);
        return byPriority < 0 || (byPriority == 0 && groupA < groupB);
    }

    private void insertGroup(int group) {
        int at = groupCount++;
        place(group, at);
        siftUp(at);
    }

    private void removeGroupAt(int at) {
        int removed = groupHeap[at];
        heapPosition[removed] = -1;
        int last = --groupCount;
        if (at != last) {
            place(groupHeap[last], at);
            reposition(at);
        }
    }

    private void reposition(int at) {
        int group = groupHeap[at];
        siftUp(at);
        if (groupHeap[at] == group) {
            siftDown(at);
        }
    }

    private void siftUp(int at) {
        int group = groupHeap[at];
        while (at > 0) {
            int parent = (at - 1) >>> 1;
            if (!less(group, groupHeap[parent])) {
                break;
            }
            place(groupHeap[parent], at);
            at = parent;
        }
        place(group, at);
    }

    private void siftDown(int at) {
        int group = groupHeap[at];
        int half = groupCount >>> 1;
        while (at < half) {
            int child = 2 * at + 1;
            int right = child + 1;
            if (right < groupCount && less(groupHeap[right], groupHeap[child])) {
                child = right;
            }
            if (!less(groupHeap[child], group)) {
                break;
            }
            place(groupHeap[child], at);
            at = child;
        }
        place(group, at);
    }

    private void place(int group, int at) {
        groupHeap[at] = group;
        heapPosition[group] = at;
    }

    /** One key group's elements, ordered by priority, each at most once. */
    abstract static class Partition<T extends HeapPriorityQueueElement> {
        /** What an add or remove did: nothing (present already, or absent). */
        static final int UNCHANGED = 0;

        /** It added or removed an element, and the head is the same. */
        static final int CHANGED = 1;

        /** It added or removed an element, and that element is or was the head. */
        static final int HEAD_CHANGED = 2;

        abstract boolean isEmpty();

        abstract int size();

        @Nullable
        abstract T peek();

        @Nullable
        abstract T poll();

        /** Adds {@code element} unless an equal element is present. */
        abstract int add(T element);

        /** Removes the element equal to {@code element}, if there is one. */
        abstract int remove(T element);

        /** Whether {@code element} itself is held (for {@link #adjust}). */
        abstract boolean holds(T element);

        abstract void adjust(T element);

        /** The elements as a read-only set. */
        abstract Set<T> asSet();

        /** Compares the heads' priorities; neither partition is empty. */
        abstract int compareHeadTo(Partition<T> other);
    }

    /** A heap of element objects by priority, and the set that makes the queue a set. */
    private static final class ObjectPartition<T extends HeapPriorityQueueElement>
            extends Partition<T> {
        private final PriorityComparator<T> comparator;
        private final HeapPriorityQueue<T> heap;
        private final MemberTable<T> members = new MemberTable<>();

        ObjectPartition(PriorityComparator<T> comparator, int minimumCapacity) {
            this.comparator = comparator;
            this.heap = new HeapPriorityQueue<>(comparator, minimumCapacity);
        }

        @Override
        boolean isEmpty() {
            return heap.isEmpty();
        }

        @Override
        int size() {
            return heap.size();
        }

        @Nullable
        @Override
        T peek() {
            return heap.peek();
        }

        @Nullable
        @Override
        T poll() {
            T head = heap.poll();
            if (head != null) {
                members.remove(head);
            }
            return head;
        }

        @Override
        int add(T element) {
            if (members.putIfAbsent(element) != null) {
                return UNCHANGED;
            }
            return heap.add(element) ? HEAD_CHANGED : CHANGED;
        }

        @Override
        int remove(T element) {
            T stored = members.remove(element);
            if (stored == null) {
                return UNCHANGED;
            }
            return heap.remove(stored) ? HEAD_CHANGED : CHANGED;
        }

        @Override
        boolean holds(T element) {
            return members.get(element) == element;
        }

        @Override
        void adjust(T element) {
            heap.adjustModifiedElement(element);
        }

        @Override
        Set<T> asSet() {
            return members.asSet();
        }

        @Override
        int compareHeadTo(Partition<T> other) {
            return comparator.comparePriority(heap.peek(), other.peek());
        }
    }

    private final class AllElements implements CloseableIterator<T> {
        private int partition = -1;
        private java.util.Iterator<T> current = Collections.emptyIterator();

        @Override
        public boolean hasNext() {
            while (!current.hasNext()) {
                do {
                    partition++;
                } while (partition < partitions.length && partitions[partition] == null);
                if (partition >= partitions.length) {
                    return false;
                }
                current = partitions[partition].asSet().iterator();
            }
            return true;
        }

        @Override
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return current.next();
        }

        @Override
        public void close() {}
    }
}
