package io.flowkv.bench.harness;

import java.util.HashMap;
import java.util.Map;

/**
 * FlowKV's store statistics of one run, summed over the per-store summary lines the backend logs
 * when it disposes a store ({@code flowkv-store-stats key=value ...}, see FlowKVKeyedStateBackend).
 */
record FlowKvStats(int stores, long prefetchHits, long prefetchMisses, long bytesRead) {

    static final String MARKER = "flowkv-store-stats";

    static FlowKvStats fromLog(String log) {
        int stores = 0;
        long hits = 0;
        long misses = 0;
        long read = 0;
        for (String line : log.split("\n")) {
            int i = line.indexOf(MARKER);
            if (i < 0) {
                continue;
            }
            Map<String, String> kv = new HashMap<>();
            for (String token : line.substring(i + MARKER.length()).trim().split("\\s+")) {
                int eq = token.indexOf('=');
                if (eq > 0) {
                    kv.put(token.substring(0, eq), token.substring(eq + 1));
                }
            }
            stores++;
            hits += parse(kv.get("prefetch_hits"));
            misses += parse(kv.get("prefetch_misses"));
            read += parse(kv.get("bytes_read"));
        }
        return new FlowKvStats(stores, hits, misses, read);
    }

    private static long parse(String v) {
        if (v == null) {
            return 0;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Hits over lookups that the prefetcher could have served; NaN when there were none. */
    double hitRatio() {
        long lookups = prefetchHits + prefetchMisses;
        return lookups == 0 ? Double.NaN : (double) prefetchHits / lookups;
    }

    void fill(Row row) {
        if (stores == 0) {
            return;
        }
        row.set(Column.PREFETCH_HIT_RATIO, hitRatio());
        row.set(Column.FLOWKV_BYTES_READ, bytesRead);
    }
}
