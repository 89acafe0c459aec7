package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FlowKvStatsTest {

    @Test
    void shouldSumTheStoreLinesOfALog() {
        String log =
                "[q7] backend=flowkv events=10\n"
                        + "[main] INFO io.flowkv.flink.FlowKVKeyedStateBackend - flowkv-store-stats"
                        + " state=a pattern=AUR instances=2 prefetch_hits=30 prefetch_misses=10"
                        + " bytes_read=1000\n"
                        + "noise line\n"
                        + "[main] INFO io.flowkv.flink.FlowKVKeyedStateBackend - flowkv-store-stats"
                        + " state=b pattern=RMW instances=2 prefetch_hits=10 prefetch_misses=0"
                        + " bytes_read=24\n";
        FlowKvStats s = FlowKvStats.fromLog(log);
        assertThat(s.stores()).isEqualTo(2);
        assertThat(s.hitRatio()).isEqualTo(0.8);
        assertThat(s.bytesRead()).isEqualTo(1024);
        Row row = new Row();
        s.fill(row);
        assertThat(row.getDouble(Column.PREFETCH_HIT_RATIO)).isEqualTo(0.8);
    }

    @Test
    void shouldLeaveRowsOfOtherBackendsEmpty() {
        Row row = new Row();
        FlowKvStats.fromLog("no stats here\n").fill(row);
        assertThat(row.has(Column.PREFETCH_HIT_RATIO)).isFalse();
        assertThat(FlowKvStats.fromLog("").hitRatio()).isNaN();
    }
}
