package io.flowkv.flink.timers;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The members of one key group's timer heap: a hash set of elements by {@code equals}, with open
 * addressing (linear probing) over two parallel arrays, each element's hash code beside it.
 *
 * <p>A timer queue set adds and removes a timer at nearly every element of a session window and
 * registers one per element on Q12-like triggers. A {@code HashMap<T, T>}, Flink's own choice, pays
 * an allocated node per add and, per probe, a load of the node before the key. Here a probe reads
 * the slot's hash, then the element only if the hash is equal; an add allocates nothing. Removal
 * shifts the probe run back (no tombstones), so probes stay short under any mix of adds and
 * removes. The table doubles past a load of 5/8 and halves below 1/8, never under {@value
 * #MIN_CAPACITY} slots, so its heap follows the number of timers, not their history.
 *
 * <p>Not thread-safe; null elements are refused.
 */
final class MemberTable<T> {
    static final int MIN_CAPACITY = 16;

    private Object[] elements = new Object[MIN_CAPACITY];
    private int[] hashes = new int[MIN_CAPACITY];
    private int mask = MIN_CAPACITY - 1;
    private int size;

    /** Changed by every structural change, so that an iterator used across one fails. */
    private int modifications;

    private final Set<T> view = new View();

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Slots in the table (for tests). */
    int capacity() {
        return elements.length;
    }

    /** The member equal to {@code element}, or null. */
    T get(Object element) {
        int at = find(element, element.hashCode());
        return at >= 0 ? cast(elements[at]) : null;
    }

    /** Adds {@code element} if no equal member is present; returns that member, else null. */
    T putIfAbsent(T element) {
        int hash = element.hashCode();
        int at = find(element, hash);
        if (at >= 0) {
            return cast(elements[at]);
        }
        at = -at - 1;
        elements[at] = element;
        hashes[at] = hash;
        size++;
        modifications++;
        if (size > elements.length - (elements.length >>> 2) - (elements.length >>> 3)) {
            resize(elements.length << 1);
        }
        return null;
    }

    /** Removes the member equal to {@code element} and returns it, or null if there is none. */
    T remove(Object element) {
        int at = find(element, element.hashCode());
        if (at < 0) {
            return null;
        }
        T removed = cast(elements[at]);
        removeAt(at);
        return removed;
    }

    /**
     * The slot of the member equal to {@code element}, or {@code -slot - 1} for the empty slot that
     * ends its probe run (where it would go). Loads a member only when its hash code is equal.
     */
    private int find(Object element, int hash) {
        int at = slot(hash);
        while (true) {
            Object e = elements[at];
            if (e == null) {
                return -at - 1;
            }
            if (hashes[at] == hash && e.equals(element)) {
                return at;
            }
            at = (at + 1) & mask;
        }
    }

    /** A read-only view of the members, as a set (for snapshots and key-group subsets). */
    Set<T> asSet() {
        return view;
    }

    /**
     * Empties slot {@code hole} and moves later members of its probe run back into it, so that
     * every member stays reachable from its home slot without crossing an empty one.
     */
    private void removeAt(int hole) {
        int at = hole;
        while (true) {
            at = (at + 1) & mask;
            Object e = elements[at];
            if (e == null) {
                break;
            }
            int home = slot(hashes[at]);
            // The member at `at` may fill the hole if its home is not cyclically in (hole, at].
            if (((at - home) & mask) >= ((at - hole) & mask)) {
                elements[hole] = e;
                hashes[hole] = hashes[at];
                hole = at;
            }
        }
        elements[hole] = null;
        size--;
        modifications++;
        if (elements.length > MIN_CAPACITY && size < (elements.length >>> 3)) {
            resize(elements.length >>> 1);
        }
    }

    private void resize(int capacity) {
        Object[] oldElements = elements;
        int[] oldHashes = hashes;
        elements = new Object[capacity];
        hashes = new int[capacity];
        mask = capacity - 1;
        for (int i = 0; i < oldElements.length; i++) {
            Object e = oldElements[i];
            if (e != null) {
                int at = slot(oldHashes[i]);
                while (elements[at] != null) {
                    at = (at + 1) & mask;
                }
                elements[at] = e;
                hashes[at] = oldHashes[i];
            }
        }
    }

    /** Home slot: the hash code mixed (Fibonacci hashing), since timers' codes vary in few bits. */
    private int slot(int hash) {
        int h = hash * 0x9E3779B9;
        return (h ^ (h >>> 16)) & mask;
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object e) {
        return (T) e;
    }

    private final class View extends AbstractSet<T> {
        @Override
        public int size() {
            return size;
        }

        @Override
        public boolean contains(Object o) {
            return o != null && get(o) != null;
        }

        @Override
        public Iterator<T> iterator() {
            return new Iterator<T>() {
                private final int expected = modifications;
                private int next = advance(0);

                private int advance(int from) {
                    int at = from;
                    while (at < elements.length && elements[at] == null) {
                        at++;
                    }
                    return at;
                }

                @Override
                public boolean hasNext() {
                    check();
                    return next < elements.length;
                }

                @Override
                public T next() {
                    if (!hasNext()) {
                        throw new NoSuchElementException();
                    }
                    T e = cast(elements[next]);
                    next = advance(next + 1);
                    return e;
                }

                private void check() {
                    if (modifications != expected) {
                        throw new java.util.ConcurrentModificationException(
                                "timer set changed while iterated");
                    }
                }
            };
        }
    }
}
