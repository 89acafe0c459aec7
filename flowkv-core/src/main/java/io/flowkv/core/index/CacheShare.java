package io.flowkv.core.index;

import io.flowkv.core.Checks;
import io.flowkv.core.memory.OffHeapBuffer;

import java.util.function.Supplier;

/**
 * Page-cache bytes that the page caches of one store ({@link PagedRecords}, {@link PagedHashIndex})
 * may take beyond their own caps, first come first served. Each cache keeps what it takes until it
 * closes, as it keeps its own chunks; so the caches of a store that outgrow their own caps at
 * different rates end up sharing the store's cache in proportion to what they hold, instead of in a
 * fixed split that leaves one spilling while another has room.
 *
 * <p>Bytes only: the chunks themselves still come from the memory budget, which may refuse them.
 * Not thread-safe: like the caches it serves, it belongs to one store's thread.
 */
public final class CacheShare {
    private final long bytes;
    private long taken;

    /** A share of {@code bytes} (0: nothing to share). */
    public CacheShare(long bytes) {
        Checks.checkRange("shared cache bytes", bytes, 0, Long.MAX_VALUE);
        this.bytes = bytes;
    }

    /** One cache's account with this share: what it took, all given back when it closes. */
    Account account() {
        return new Account(this);
    }

    /** What one cache took from a share. Single-threaded like the cache. */
    static final class Account {
        private final CacheShare share;
        private long taken;

        private Account(CacheShare share) {
            this.share = share;
        }

        /** Takes {@code n} bytes for this cache if the share has them; returns whether it did. */
        boolean tryTake(long n) {
            if (!share.tryTake(n)) {
                return false;
            }
            taken += n;
            return true;
        }

        /** Gives back {@code n} bytes this cache took. */
        void give(long n) {
            if (n > taken) {
                throw new IllegalStateException(
                        "gives back " + n + " bytes of " + taken + " taken");
            }
            share.give(n);
            taken -= n;
        }

        /** Gives back everything this cache took. */
        void close() {
            give(taken);
        }
    }

    /**
     * One more chunk of {@code chunkBytes} for a page cache that holds {@code chunks} chunks: from
     * {@code allocate} while the cache is under its own cap of {@code ownChunks}; beyond it only
     * with bytes taken from {@code shared} (null: no share) and while its frame numbers have room
     * ({@code maxChunks}), the bytes given back if the budget refuses the chunk. Null if the cache
     * gets no chunk; it then evicts a page instead.
     */
    static OffHeapBuffer growChunk(
            Account shared,
            int chunks,
            int ownChunks,
            int maxChunks,
            long chunkBytes,
            Supplier<OffHeapBuffer> allocate) {
        boolean own = chunks < ownChunks;
        if (!own && (shared == null || chunks >= maxChunks || !shared.tryTake(chunkBytes))) {
            return null;
        }
        OffHeapBuffer c = allocate.get();
        if (c == null && !own) {
            shared.give(chunkBytes);
        }
        return c;
    }

    /** Takes {@code n} bytes if that many are left; returns whether it did. */
    private boolean tryTake(long n) {
        if (n > bytes - taken) {
            return false;
        }
        taken += n;
        return true;
    }

    /** Gives back {@code n} bytes taken before. */
    private void give(long n) {
        if (n > taken) {
            throw new IllegalStateException("gives back " + n + " bytes of " + taken + " taken");
        }
        taken -= n;
    }

    /** Bytes taken and not given back. */
    public long taken() {
        return taken;
    }

    /** Bytes the share holds in all. */
    public long bytes() {
        return bytes;
    }
}
