package io.flowkv.flink.metrics;

import io.flowkv.core.StoreStats;
import io.flowkv.flink.storage.StorePattern;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class StoreStatsLineTest {

    @Test
    void shouldSumTheInstancesIntoOneLine() {
        StoreStats a = new StoreStats();
        a.addPrefetchHit();
        a.addPrefetchHit();
        a.addPrefetchMiss();
        a.addRead(100);
        a.addFlushed(40);
        a.addPartitionLoad();
        a.setFiles(3);
        a.setEntries(10);
        StoreStats b = new StoreStats();
        b.addPrefetchHit();
        b.addRead(23);
        b.addCompaction(7);
        b.addPrefetchLoad(64);
        b.addValueBytesServedFromDisk(99);
        b.setFiles(2);
        b.setEntries(5);
        b.addReadAhead();
        a.addReadAhead();
        a.addReadAhead();

        String line = StoreStatsLine.of("window contents", StorePattern.AUR, List.of(a, b));

        assertThat(line)
                .startsWith("flowkv-store-stats state=window_contents pattern=AUR instances=2 ")
                .contains(" prefetch_hits=3 prefetch_misses=1 prefetch_loads=1")
                .contains(" bytes_prefetched=64 bytes_read=123 ")
                .contains(" bytes_flushed=40 flushes=1 compactions=1 bytes_compaction_written=7")
                .endsWith(
                        " partitions_streamed=0 partition_loads=1"
                                + " value_bytes_served_from_disk=99 files=5 entries=15"
                                + " read_aheads=3");
    }
}
