package io.flowkv.core.aur;

import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.OffHeapLongArray;

/**
 * Binary max-heap operations and heapsort over pairs of longs in an {@link OffHeapLongArray} (pair
 * {@code i} at {@code 2i} and {@code 2i + 1}), ordered by one long of each pair, the {@code key} (0
 * or 1). In place: nothing is allocated on the heap. The AUR store ranks its bets with it and puts
 * the frames of a batch read in file order.
 */
final class PairHeap {
    private PairHeap() {}

    /**
     * {@code array} with room for {@code needed} pairs, keeping the first {@code keep} (created
     * when null). When the budget refuses, {@code array} as it was: callers check {@link
     * #capacity}.
     */
    static OffHeapLongArray withRoom(
            MemoryBudget budget, OffHeapLongArray array, int needed, int keep) {
        long longs = 2L * Math.max(needed, 16);
        if (array == null) {
            return needed == 0 ? null : OffHeapLongArray.tryAllocate(budget, longs);
        }
        array.tryGrow(2L * needed, 2L * keep);
        return array;
    }

    /** The pairs {@code array} holds room for; 0 when null. */
    static int capacity(OffHeapLongArray array) {
        return array == null ? 0 : (int) Math.min(Integer.MAX_VALUE, array.capacity() / 2);
    }

    /** Moves pair {@code i} up until its parent's key is not smaller. */
    static void siftUp(OffHeapLongArray a, int key, int i) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (keyOf(a, key, parent) >= keyOf(a, key, i)) {
                return;
            }
            swap(a, i, parent);
            i = parent;
        }
    }

    /** Moves pair {@code i} down the heap of the first {@code size} pairs. */
    static void siftDown(OffHeapLongArray a, int key, int i, int size) {
        while (true) {
            int largest = i;
            int left = 2 * i + 1;
            int right = left + 1;
            if (left < size && keyOf(a, key, left) > keyOf(a, key, largest)) {
                largest = left;
            }
            if (right < size && keyOf(a, key, right) > keyOf(a, key, largest)) {
                largest = right;
            }
            if (largest == i) {
                return;
            }
            swap(a, i, largest);
            i = largest;
        }
    }

    /** Puts a max-heap of the first {@code size} pairs in ascending key order. */
    static void sortHeap(OffHeapLongArray a, int key, int size) {
        for (int last = size - 1; last > 0; last--) {
            swap(a, 0, last);
            siftDown(a, key, 0, last);
        }
    }

    /** Sorts the first {@code size} pairs by ascending key. */
    static void sort(OffHeapLongArray a, int key, int size) {
        for (int i = size / 2 - 1; i >= 0; i--) {
            siftDown(a, key, i, size);
        }
        sortHeap(a, key, size);
    }

    private static long keyOf(OffHeapLongArray a, int key, int i) {
        return a.get(2L * i + key);
    }

    private static void swap(OffHeapLongArray a, int x, int y) {
        long first = a.get(2L * x);
        long second = a.get(2L * x + 1);
        a.set(2L * x, a.get(2L * y));
        a.set(2L * x + 1, a.get(2L * y + 1));
        a.set(2L * y, first);
        a.set(2L * y + 1, second);
    }
}
