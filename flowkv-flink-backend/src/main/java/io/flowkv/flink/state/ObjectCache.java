package io.flowkv.flink.state;

import org.apache.flink.annotation.Internal;

import java.io.IOException;

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
 * mutates later does not move an entry. The entries are themselves the nodes of the hash table's
 * chains and of the queue (no map node per entry): a lookup reads the table slot, then entries,
 * comparing their stored hash before their key and namespace. Not thread-safe: the task thread owns
 * it.
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

        /** The next entry in this entry's hash chain. */
        Entry<K, N, V> next;

        /** The neighbours in the queue: {@code older} is nearer the head. */
        Entry<K, N, V> older;

        Entry<K, N, V> newer;

        /**
         * Calls {@code equals} from here, not through {@code Objects.equals}: the JIT profiles the
         * receiver types of a call per call site, and {@code Objects.equals}' one site is shared by
         * every caller in the JVM, so it is megamorphic and never inlined; here it sees the state's
         * key and namespace classes only.
         */
        boolean matches(int hash, Object key, Object namespace) {
            return this.hash == hash
                    && (this.key == key || (this.key != null && this.key.equals(key)))
                    && (this.namespace == namespace
                            || (this.namespace != null && this.namespace.equals(namespace)));
        }
    }

    /**
     * Heap bytes of an entry besides its objects: the entry (48 bytes with compressed references)
     * and its share of the table (one to two slots at the table's load of 3/8 to 3/4).
     */
    static final int ENTRY_OVERHEAD = 64;

    private static final int MIN_TABLE = 16;

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

    /** Hash table of the entries, chained through {@link Entry#next}; a power of two long. */
    private Entry<K, N, V>[] table;

    private int size;

    /** The queue: the head is the next candidate to leave, new entries join at the tail. */
    private Entry<K, N, V> head;

    private Entry<K, N, V> tail;

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
        this.table = newTable(MIN_TABLE);
    }

    @SuppressWarnings("unchecked")
    private static <K, N, V> Entry<K, N, V>[] newTable(int length) {
        return (Entry<K, N, V>[]) new Entry<?, ?, ?>[length];
    }

    private int capacityFor(long bytes, double bytesPerEntry) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, bytes / bytesPerEntry));
    }

    /** Charges the budget with the cache's estimated size, when it moved by a step or more. */
    private void account() {
        long estimate = (long) (size * entryBytes);
        long delta = estimate - charged;
        if (delta >= chargeStep || -delta >= chargeStep || size == 0) {
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

    /** Calls {@code hashCode} from here, for the reason {@link Entry#matches} gives. */
    private static int hash(Object key, Object namespace) {
        int h =
                31 * (key == null ? 0 : key.hashCode())
                        + (namespace == null ? 0 : namespace.hashCode());
        return h ^ (h >>> 16);
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

    /**
     * The entry of (key, namespace), or null; counts nothing and flags nothing. Writes nothing
     * either, so a thread other than the task's may call it (queryable state): it reads the table
     * while the task may change it, as queryable state reads Flink's heap backend, and may miss an
     * entry the task moves at that moment.
     */
    Entry<K, N, V> peek(K key, N namespace) {
        int hash = hash(key, namespace);
        Entry<K, N, V>[] t = table;
        for (Entry<K, N, V> e = t[hash & (t.length - 1)]; e != null; e = e.next) {
            if (e.matches(hash, key, namespace)) {
                return e;
            }
        }
        return null;
    }

    /**
     * Adds an entry for a (key, namespace) that has none (the caller looked it up), then writes
     * back and drops one entry (see the class comment) when that passes the capacity; returns the
     * new entry, which stays (it is the newest). {@code key} and {@code namespace} must be objects
     * nobody mutates later (copies).
     */
    Entry<K, N, V> add(K key, int keyGroup, N namespace, V value, boolean dirty, boolean stored)
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
        if (size == 0) {
            budget.joined();
        }
        link(entry);
        int capacity = capacity();
        while (size > capacity) {
            evictOne();
        }
        account();
        return entry;
    }

    /** Puts {@code entry} into the table and at the tail of the queue. */
    private void link(Entry<K, N, V> entry) {
        if (size >= table.length - (table.length >>> 2)) {
            resize(table.length * 2);
        }
        int slot = entry.hash & (table.length - 1);
        entry.next = table[slot];
        table[slot] = entry;
        size++;
        enqueue(entry);
    }

    private void enqueue(Entry<K, N, V> entry) {
        entry.newer = null;
        entry.older = tail;
        if (tail == null) {
            head = entry;
        } else {
            tail.newer = entry;
        }
        tail = entry;
    }

    private void dequeue(Entry<K, N, V> entry) {
        if (entry.older == null) {
            head = entry.newer;
        } else {
            entry.older.newer = entry.newer;
        }
        if (entry.newer == null) {
            tail = entry.older;
        } else {
            entry.newer.older = entry.older;
        }
        entry.older = null;
        entry.newer = null;
    }

    /** Takes {@code entry} out of the table and the queue. */
    private void unlink(Entry<K, N, V> entry) {
        int slot = entry.hash & (table.length - 1);
        Entry<K, N, V> e = table[slot];
        if (e == entry) {
            table[slot] = entry.next;
        } else {
            while (e.next != entry) {
                e = e.next;
            }
            e.next = entry.next;
        }
        entry.next = null;
        size--;
        dequeue(entry);
    }

    private void resize(int length) {
        Entry<K, N, V>[] grown = newTable(length);
        for (Entry<K, N, V> chain : table) {
            for (Entry<K, N, V> e = chain; e != null; ) {
                Entry<K, N, V> next = e.next;
                int slot = e.hash & (length - 1);
                e.next = grown[slot];
                grown[slot] = e;
                e = next;
            }
        }
        table = grown;
    }

    /**
     * Removes the oldest entry not used since it last reached the head, writing it back if it
     * changed. Each entry passed over loses its flag, so this ends within one round of the queue.
     */
    private void evictOne() throws IOException {
        while (true) {
            Entry<K, N, V> candidate = head;
            if (candidate.referenced) {
                candidate.referenced = false;
                dequeue(candidate);
                enqueue(candidate); // to the back of the queue
                continue;
            }
            unlink(candidate);
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
            unlink(entry);
            if (size == 0) {
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
        for (Entry<K, N, V> entry = head; entry != null; entry = entry.newer) {
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
        if (size > 0) {
            table = newTable(MIN_TABLE);
            head = null;
            tail = null;
            size = 0;
            budget.left();
            account();
        }
    }

    int size() {
        return size;
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
        return new AbstractFlowKVState.CacheCounters(hits, misses, evictions, writes, size);
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
                + size
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
