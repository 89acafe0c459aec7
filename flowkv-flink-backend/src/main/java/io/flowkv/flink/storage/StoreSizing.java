package io.flowkv.flink.storage;

import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.flink.config.FlowKVSettings;

/**
 * How a state's stores divide the memory budget: the one place that sizes write buffers, prefetch
 * buffers and index caches. Every state's storage is sized against the whole budget, which they all
 * draw on; the budget, not these sizes, is the hard limit.
 *
 * <ul>
 *   <li>Write buffers get half of the budget, in shares: the AAR store takes 1 of 2 shares, each of
 *       n AUR instances 1 of 2n, each of n RMW instances 1 of 4n; never less than 64 KiB.
 *   <li>Read side: an AUR instance may prefetch a quarter of the budget over n, at least 1 MiB; AUR
 *       stat tables and RMW hash indexes cache a quarter of the budget over n in pages.
 * </ul>
 *
 * {@code state.backend.flowkv.write-buffer-size} and {@code index-cache-size}, when set, replace
 * the derived sizes of every instance.
 *
 * @param budgetBytes the capacity of the memory budget the stores draw on
 */
record StoreSizing(FlowKVSettings settings, long budgetBytes) {
    /** The least write buffer a derived size goes down to. */
    static final long MIN_WRITE_BUFFER_BYTES = 64 * 1024;

    long aarWriteBuffer() {
        return writeBuffer(2);
    }

    long aurWriteBuffer(int instances) {
        return writeBuffer(2 * instances);
    }

    long aurPrefetchBuffer(int instances) {
        return Math.max(1 << 20, budgetBytes / (4L * instances));
    }

    long aurStatCache(int instances) {
        return Math.max(AurStoreOptions.MIN_STAT_CACHE_BYTES, indexCache(instances));
    }

    long rmwWriteBuffer(int instances) {
        return writeBuffer(4 * instances);
    }

    long rmwIndexCache(int instances) {
        return indexCache(instances);
    }

    private long writeBuffer(int shares) {
        if (settings.writeBufferBytes() != FlowKVSettings.DERIVED) {
            return settings.writeBufferBytes();
        }
        return Math.max(MIN_WRITE_BUFFER_BYTES, budgetBytes / 2 / Math.max(1, shares));
    }

    private long indexCache(int instances) {
        if (settings.indexCacheBytes() != FlowKVSettings.DERIVED) {
            return settings.indexCacheBytes();
        }
        return Math.max(PagedHashIndex.MIN_CACHE_BYTES, budgetBytes / 4 / Math.max(1, instances));
    }
}
