package io.flowkv.flink.state;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Objects;

/**
 * The live values of one read-modify-write state (reducing or aggregating) on the Java heap, so
 * that a hot (key, namespace) is updated as an object, not read, deserialized, serialized and
 * appended on every access.
 *
 * <p>Bounded in bytes, by a budget it shares with the caches of other states ({@link
 * ObjectCacheBudget}): an entry is taken to cost {@value #ENTRY_OVERHEAD} bytes of bookkeeping plus
 * twice the serialized size of its key, namespace and value (objects are larger than their bytes),
 * averaged over the sizes the owner measures ({@link #measured}) whenever it has the bytes anyway
 * (a read from the store, a write-back) and, on one access in {@value #SAMPLE_EVERY}, by
 * serializing the value ({@link #sampleDue}). The number of entries follows: a state with large
 * accumulators keeps few of them, one with counters keeps many. The entry that leaves is chosen by
 * second chance (CLOCK): entries queue in the order they came in, a hit only sets a flag, and the
 * oldest entry whose flag is clear leaves (a flagged one goes to the back with its flag cleared).
 * So a hit touches nothing but its entry, and an entry in use stays. The entry that leaves is
 * written to the store if it changed since it was last written. A window that fires and is cleared
 * while its entry is here never touches the store.
 *
 * <p>Entries are keyed by the key and namespace objects ({@code equals} and {@code hashCode}, as in
 * Flink's heap backend), copied with their serializers when they enter, so a key object the caller
 * mutates later does not move an entry. Not thread-safe: the task thread owns it.
 *
 * @param <K> key type
 * @param <N> namespace type
 * @param <V> value type
 */
@Internal
final class ObjectCache<K, N, V> {

    /** Writes one entry's value into the store. */
    @FunctionalInterface
    interface WriteBack<K, N, V> {
        void write(Entry<K, N, V> entry) throws IOException;
    }

    /** One cached (key, namespace) and its value. */
    static final class Entry<K, N, V> {
        K key;
        N namespace;
        int hash;
        int keyGroup;
        V value;

        /** Changed since it was last written to (or read from) the store. */
        boolean dirty;

        /** The store may hold a value for this (key, namespace): a clear must remove it there. */
        boolean stored;

        /** Used since it last came to the head of the queue: it gets a second chance there. */
        boolean referenced;

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Entry)) {
                return false;
            }
            Entry<?, ?, ?> other = (Entry<?, ?, ?>) o;
            return hash == other.hash
                    && Objects.equals(key, other.key)
                    && Objects.equals(namespace, other.namespace);
        }
    }

    /** Heap bytes of an entry besides its objects: the entry, its map node and table slot. */
    static final int ENTRY_OVERHEAD = 96;

    /** One access in this many has its value's size measured. A power of two. */
    static final int SAMPLE_EVERY = 256;

    /** Weight of a new measurement in the average entry size. */
    private static final double NEW_SAMPLE_WEIGHT = 0.05;

    private final ObjectCacheBudget budget;
    private final WriteBack<K, N, V> writeBack;

    /** Estimated heap bytes of an entry: a guess until the first measurement. */
    private double entryBytes = ENTRY_OVERHEAD + 2 * 64;

    /**
     * What this cache charged to the budget: its estimated size, in steps of {@link #chargeStep}.
     */
    private long charged;

    private final long chargeStep;
    private boolean measuredOnce;
    private int accesses;
    private final LinkedHashMap<Entry<K, N, V>, Entry<K, N, V>> entries;
    private final Entry<K, N, V> probe = new Entry<>();

    private long hits;
    private long misses;
    private long evictions;
    private long writes;

    /** A cache with a budget of its own. */
    ObjectCache(long maxBytes, WriteBack<K, N, V> writeBack) {
        this(new ObjectCacheBudget(maxBytes), writeBack);
    }

    /** A cache that shares {@code budget} with others (see {@link ObjectCacheBudget}). */
    ObjectCache(ObjectCacheBudget budget, WriteBack<K, N, V> writeBack) {
        this.budget = budget;
        this.writeBack = writeBack;
        // Charging every entry would make the shared counter a point of contention between tasks.
        this.chargeStep = Math.max(1, Math.min(64 << 10, budget.totalBytes() / 64));
        // Insertion order: the head is the next candidate to leave.
        this.entries = new LinkedHashMap<>(Math.min(capacity(), 1 << 16) * 4 / 3 + 1, 0.75f, false);
    }

    private int capacityFor(long bytes, double bytesPerEntry) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, bytes / bytesPerEntry));
    }

    /** Charges the budget with the cache's estimated size, when it moved by a step or more. */
    private void account() {
        long estimate = (long) (entries.size() * entryBytes);
        long delta = estimate - charged;
        if (delta >= chargeStep || -delta >= chargeStep || entries.isEmpty()) {
            budget.charge(delta);
            charged = estimate;
        }
    }

    /**
     * Whether the owner should measure the value it is about to use ({@link #measured}): true for
     * the first access and then one in {@value #SAMPLE_EVERY}.
     */
    boolean sampleDue() {
        return (accesses++ & (SAMPLE_EVERY - 1)) == 0;
    }

    /**
     * An entry's key, namespace and value serialize to {@code serializedBytes}: updates the average
     * entry size, and with it how many entries fit (the next {@link #add} evicts down to it).
     */
    void measured(int serializedBytes) {
        double bytes = ENTRY_OVERHEAD + 2.0 * serializedBytes;
        entryBytes = measuredOnce ? entryBytes + NEW_SAMPLE_WEIGHT * (bytes - entryBytes) : bytes;
        measuredOnce = true;
    }

    private static int hash(Object key, Object namespace) {
        return 31 * Objects.hashCode(key) + Objects.hashCode(namespace);
    }

    /** The entry of (key, namespace), or null; counts a hit or a miss. */
    Entry<K, N, V> get(K key, N namespace) {
        Entry<K, N, V> entry = peek(key, namespace);
        if (entry == null) {
            misses++;
        } else {
            hits++;
            entry.referenced = true;
        }
        return entry;
    }

    /** The entry of (key, namespace), or null; counts nothing and flags nothing. */
    Entry<K, N, V> peek(K key, N namespace) {
        try {
            return find(probe, key, namespace);
        } finally {
            probe.key = null;
            probe.namespace = null;
        }
    }

    /**
     * The entry of (key, namespace), or null, for a thread other than the task's (queryable state):
     * with a probe of its own. It reads the map while the task may change it, as queryable state
     * reads Flink's heap backend: it may miss an entry the task moves at that moment.
     */
    Entry<K, N, V> peekFromAnyThread(K key, N namespace) {
        return find(new Entry<>(), key, namespace);
    }

    /** Looks up (key, namespace) with {@code with} as the probe. */
    private Entry<K, N, V> find(Entry<K, N, V> with, K key, N namespace) {
        with.key = key;
        with.namespace = namespace;
        with.hash = hash(key, namespace);
        return entries.get(with);
    }

    /**
     * Adds an entry for a (key, namespace) that has none (the caller looked it up), then writes
     * back and drops one entry (see the class comment) when that passes the capacity. {@code key}
     * and {@code namespace} must be objects nobody mutates later (copies).
     */
    void add(K key, int keyGroup, N namespace, V value, boolean dirty, boolean stored)
            throws IOException {
        Entry<K, N, V> entry = new Entry<>();
        entry.key = key;
        entry.namespace = namespace;
        entry.hash = hash(key, namespace);
        entry.keyGroup = keyGroup;
        entry.value = value;
        entry.dirty = dirty;
        entry.stored = stored;
        // A new entry starts flagged: were all others flagged, it would otherwise be the first
        // unflagged one the sweep meets, and leave before its second use.
        entry.referenced = true;
        if (entries.isEmpty()) {
            budget.joined();
        }
        entries.put(entry, entry);
        int capacity = capacity();
        while (entries.size() > capacity) {
            evictOne();
        }
        account();
    }

    /**
     * Removes the oldest entry not used since it last reached the head, writing it back if it
     * changed. Each entry passed over loses its flag, so this ends within one round of the queue.
     */
    private void evictOne() throws IOException {
        while (true) {
            Iterator<Entry<K, N, V>> head = entries.values().iterator();
            Entry<K, N, V> candidate = head.next();
            head.remove();
            if (candidate.referenced) {
                candidate.referenced = false;
                entries.put(candidate, candidate); // to the back of the queue
                continue;
            }
            evictions++;
            if (candidate.dirty) {
                writes++;
                writeBack.write(candidate);
            }
            return;
        }
    }

    /** Removes and returns the entry of (key, namespace), or null. */
    Entry<K, N, V> remove(K key, N namespace) {
        Entry<K, N, V> entry = peek(key, namespace);
        if (entry != null) {
            entries.remove(entry);
            if (entries.isEmpty()) {
                budget.left();
            }
            account();
        }
        return entry;
    }

    /**
     * Writes every changed entry to the store; they stay cached, unchanged. After this the store
     * holds every value the cache does (what snapshots and key iteration read).
     */
    void writeBack() throws IOException {
        for (Entry<K, N, V> entry : entries.values()) {
            if (entry.dirty) {
                writes++;
                writeBack.write(entry);
                entry.dirty = false;
                entry.stored = true;
            }
        }
    }

    /** Drops every entry without writing it (after {@link #writeBack}, or when state is gone). */
    void clear() {
        if (!entries.isEmpty()) {
            entries.clear();
            budget.left();
            account();
        }
    }

    int size() {
        return entries.size();
    }

    /**
     * How many entries fit: what the budget allows this cache ({@link ObjectCacheBudget#allowance})
     * at the average entry size measured so far.
     */
    int capacity() {
        return capacityFor(budget.allowance(charged), entryBytes);
    }

    /** The counters, for metrics. */
    AbstractFlowKVState.CacheCounters counters() {
        return new AbstractFlowKVState.CacheCounters(
                hits, misses, evictions, writes, entries.size());
    }

    /** Hits, misses, evictions and values written to the store, for the log. */
    String stats() {
        return "budget_bytes="
                + budget.totalBytes()
                + " holders="
                + budget.holders()
                + " entry_bytes="
                + Math.round(entryBytes)
                + " capacity="
                + capacity()
                + " entries="
                + entries.size()
                + " hits="
                + hits
                + " misses="
                + misses
                + " evictions="
                + evictions
                + " writes="
                + writes;
    }
}
