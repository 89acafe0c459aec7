package io.flowkv.core.aar;

import io.flowkv.core.StoreStats;
import io.flowkv.core.index.Hashing;
import io.flowkv.core.index.LongHashIndex;
import io.flowkv.core.memory.MemoryBudget;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The write buffer's top level: window bytes to window state, hashed by window (not by key), as in
 * the paper's AAR write buffer. Aligned windows are few at any time, so the table is small; the
 * last window used is cached because consecutive appends usually hit the same window.
 */
final class WindowTable {
    private final LongHashIndex index;
    private final List<AarWindow> byId = new ArrayList<>();
    private final int partitions;
    private final StoreStats stats;
    private int freeIds;
    private int[] freeIdStack = new int[8];
    private AarWindow last;
    private byte[] probe;
    private final LongHashIndex.KeyMatcher matcher = this::matchesProbe;

    /** {@code stats} gets the window count as the store's entries ({@link StoreStats#entries}). */
    WindowTable(MemoryBudget budget, int partitions, StoreStats stats) {
        this.index = new LongHashIndex(budget, 16);
        this.partitions = partitions;
        this.stats = stats;
    }

    AarWindow find(byte[] window) {
        if (last != null && Arrays.equals(last.bytes, window)) {
            return last;
        }
        probe = window;
        long id = index.get(Hashing.hash64(window), matcher);
        probe = null;
        if (id == LongHashIndex.NONE) {
            return null;
        }
        last = byId.get((int) id);
        return last;
    }

    AarWindow getOrCreate(byte[] window) {
        AarWindow w = find(window);
        return w != null ? w : create(window.clone());
    }

    /** Adds a window known to be absent; {@code bytes} is kept, not copied. */
    AarWindow create(byte[] bytes) {
        int id = freeIds > 0 ? freeIdStack[freeIds - 1] : byId.size();
        AarWindow w = new AarWindow(bytes, Hashing.hash64(bytes), id, partitions);
        // Index first: growing the index can be refused by the budget, and a window registered
        // by id but missing from the index would be unreachable yet never freed.
        probe = bytes;
        try {
            index.put(w.hash, id, matcher);
        } finally {
            probe = null;
        }
        if (id == byId.size()) {
            byId.add(w);
        } else {
            freeIds--;
            byId.set(id, w);
        }
        last = w;
        stats.setEntries(index.size());
        return w;
    }

    void remove(AarWindow w) {
        probe = w.bytes;
        index.remove(w.hash, matcher);
        probe = null;
        byId.set(w.id, null);
        if (freeIds == freeIdStack.length) {
            freeIdStack = Arrays.copyOf(freeIdStack, freeIds * 2);
        }
        freeIdStack[freeIds++] = w.id;
        if (last == w) {
            last = null;
        }
        stats.setEntries(index.size());
    }

    /** Live windows, in id order; a copy, so callers may remove while iterating. */
    List<AarWindow> windows() {
        List<AarWindow> live = new ArrayList<>(index.size());
        for (AarWindow w : byId) {
            if (w != null) {
                live.add(w);
            }
        }
        return live;
    }

    int size() {
        return index.size();
    }

    long memoryBytes() {
        return index.memoryBytes();
    }

    void release() {
        index.release();
    }

    private boolean matchesProbe(long id) {
        return Arrays.equals(byId.get((int) id).bytes, probe);
    }
}
