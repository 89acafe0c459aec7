package io.flowkv.flink.state;

import org.apache.flink.annotation.Internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that object caches ({@link ObjectCache}) share: {@code object-cache.size} for every
 * cached state of every FlowKV backend in one TaskManager (one JVM), whatever the number of slots,
 * operators and states.
 *
 * <p>Each cache charges its estimated bytes here. A cache may grow into what the others leave free,
 * and is always allowed an equal share of the total among the caches that hold entries: a hot state
 * takes the room a cold one does not use, and a state that starts later still gets its share (the
 * others evict down to theirs on their next insertion). So the caches together hold at most the
 * total, plus, while one shrinks towards its share, what it held above it.
 *
 * <p>Thread-safe: caches of different tasks charge it from their own threads.
 */
@Internal
public final class ObjectCacheBudget {
    private static final ConcurrentHashMap<Long, ObjectCacheBudget> SHARED =
            new ConcurrentHashMap<>();

    private final long totalBytes;
    private final AtomicLong usedBytes = new AtomicLong();
    private final AtomicInteger holders = new AtomicInteger();

    /** A budget of its own, shared with nobody (tests, or one cache alone). */
    ObjectCacheBudget(long totalBytes) {
        if (totalBytes < 1) {
            throw new IllegalArgumentException("object cache budget " + totalBytes + " bytes < 1");
        }
        this.totalBytes = totalBytes;
    }

    /** The budget every cache of this JVM configured with {@code totalBytes} shares. */
    public static ObjectCacheBudget shared(long totalBytes) {
        return SHARED.computeIfAbsent(totalBytes, ObjectCacheBudget::new);
    }

    long totalBytes() {
        return totalBytes;
    }

    /** Bytes all caches charged. */
    long usedBytes() {
        return usedBytes.get();
    }

    /** Caches holding entries now. */
    int holders() {
        return holders.get();
    }

    /** A cache's estimated bytes changed by {@code delta}. */
    void charge(long delta) {
        usedBytes.addAndGet(delta);
    }

    /** A cache got its first entry. */
    void joined() {
        holders.incrementAndGet();
    }

    /** A cache lost its last entry. */
    void left() {
        holders.decrementAndGet();
    }

    /**
     * Bytes a cache that charged {@code ownBytes} may hold: what the others leave free of the
     * total, and at least an equal share of it.
     */
    long allowance(long ownBytes) {
        long free = totalBytes - (usedBytes.get() - ownBytes);
        long share = totalBytes / Math.max(1, holders.get());
        return Math.max(share, free);
    }
}
