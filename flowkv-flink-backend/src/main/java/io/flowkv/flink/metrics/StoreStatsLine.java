package io.flowkv.flink.metrics;

import io.flowkv.core.StoreStats;
import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.annotation.Internal;

import java.util.List;
import java.util.Locale;

/**
 * The one INFO line the keyed backend logs per state when it disposes it: the statistics of the
 * state's store instances, summed, as {@code key=value} pairs after the marker {@value #MARKER}, so
 * that a benchmark harness can collect them from the log (io.flowkv.bench.harness.FlowKvStats).
 */
@Internal
public final class StoreStatsLine {

    static final String MARKER = "flowkv-store-stats";

    private StoreStatsLine() {}

    public static String of(String state, StorePattern pattern, List<StoreStats> stats) {
        long hits = 0;
        long misses = 0;
        long loads = 0;
        long prefetched = 0;
        long read = 0;
        long appended = 0;
        long flushed = 0;
        long flushes = 0;
        long compactions = 0;
        long compactionWritten = 0;
        long live = 0;
        long dead = 0;
        long streamed = 0;
        long partitionLoads = 0;
        long served = 0;
        long files = 0;
        long entries = 0;
        long readAheads = 0;
        for (StoreStats s : stats) {
            hits += s.prefetchHits();
            misses += s.prefetchMisses();
            loads += s.prefetchLoads();
            prefetched += s.bytesPrefetched();
            read += s.bytesRead();
            appended += s.bytesAppended();
            flushed += s.bytesFlushed();
            flushes += s.flushes();
            compactions += s.compactions();
            compactionWritten += s.bytesCompactionWritten();
            live += s.liveBytes();
            dead += s.deadBytes();
            streamed += s.partitionsStreamed();
            partitionLoads += s.partitionLoads();
            served += s.valueBytesServedFromDisk();
            files += s.files();
            entries += s.entries();
            readAheads += s.readAheads();
        }
        return String.format(
                Locale.ROOT,
                "%s state=%s pattern=%s instances=%d prefetch_hits=%d prefetch_misses=%d"
                        + " prefetch_loads=%d bytes_prefetched=%d bytes_read=%d"
                        + " bytes_appended=%d bytes_flushed=%d flushes=%d compactions=%d"
                        + " bytes_compaction_written=%d live_bytes=%d dead_bytes=%d"
                        + " partitions_streamed=%d partition_loads=%d"
                        + " value_bytes_served_from_disk=%d files=%d entries=%d read_aheads=%d",
                MARKER,
                state.replaceAll("\\s+", "_"),
                pattern,
                stats.size(),
                hits,
                misses,
                loads,
                prefetched,
                read,
                appended,
                flushed,
                flushes,
                compactions,
                compactionWritten,
                live,
                dead,
                streamed,
                partitionLoads,
                served,
                files,
                entries,
                readAheads);
    }
}
