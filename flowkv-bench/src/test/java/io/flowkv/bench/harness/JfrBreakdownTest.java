package io.flowkv.bench.harness;

import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class JfrBreakdownTest {

    @Test
    void shouldTakeTheTopMostFrameThatBelongsToAGroup() {
        assertThat(
                        CpuGroup.ofStack(
                                List.of(
                                        "java.util.HashMap",
                                        "org.apache.flink.runtime.state.heap.CopyOnWriteStateMap",
                                        "org.apache.flink.streaming.runtime.operators.windowing"
                                                + ".WindowOperator")))
                .isEqualTo(CpuGroup.HEAP);
        assertThat(
                        CpuGroup.ofStack(
                                List.of(
                                        "org.apache.flink.core.memory.DataOutputSerializer",
                                        "io.flowkv.flink.state.FlowKVListState",
                                        "io.flowkv.core.aar.AarStore")))
                .isEqualTo(CpuGroup.SERDE);
        assertThat(
                        CpuGroup.ofStack(
                                List.of("org.rocksdb.RocksDB", "org.apache.flink.state.rocksdb.X")))
                .isEqualTo(CpuGroup.ROCKSDB);
        assertThat(CpuGroup.ofStack(List.of("org.forstdb.RocksDB"))).isEqualTo(CpuGroup.ROCKSDB);
        assertThat(CpuGroup.ofStack(List.of("sun.nio.ch.FileChannelImpl", "io.flowkv.core.log.X")))
                .isEqualTo(CpuGroup.FLOWKV);
        assertThat(CpuGroup.ofStack(List.of("io.flowkv.nexmark.EventSerializers$BidSerializer")))
                .isEqualTo(CpuGroup.SERDE);
        assertThat(CpuGroup.ofStack(List.of("io.flowkv.nexmark.EventGenerator")))
                .isEqualTo(CpuGroup.OTHER);
        assertThat(CpuGroup.ofStack(List.of())).isEqualTo(CpuGroup.OTHER);
        assertThat(CpuGroup.FLOWKV.isStateAccess()).isTrue();
        assertThat(CpuGroup.SERDE.isStateAccess()).isFalse();
    }

    @Test
    void shouldCountNativeSamplesOnlyInAGroup() {
        JfrBreakdown b = new JfrBreakdown();
        b.add(List.of("sun.nio.ch.EPoll", "org.apache.flink.shaded.netty4.X"), true);
        b.add(List.of("org.rocksdb.RocksDB"), true);
        b.add(List.of("io.flowkv.nexmark.EventGenerator"), false);
        b.add(List.of("io.flowkv.core.aur.AurStore"), false);

        assertThat(b.total()).isEqualTo(3);
        assertThat(b.share(CpuGroup.ROCKSDB)).isEqualTo(1.0 / 3);
        assertThat(b.share(CpuGroup.FLOWKV)).isEqualTo(1.0 / 3);
        assertThat(b.share(CpuGroup.OTHER)).isEqualTo(1.0 / 3);
        assertThat(new JfrBreakdown().share(CpuGroup.OTHER)).isNaN();
    }

    @Test
    void shouldAttributeTheSamplesOfARealRecording(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.jfr");
        try (Recording r = new Recording()) {
            r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            r.start();
            DataOutputSerializer out = new DataOutputSerializer(1 << 16);
            long deadline = System.nanoTime() + 400_000_000L;
            long sink = 0;
            while (System.nanoTime() < deadline) {
                out.clear();
                for (long i = 0; i < 4096; i++) {
                    LongSerializer.INSTANCE.serialize(i, out);
                }
                sink += out.length();
            }
            assertThat(sink).isPositive();
            r.stop();
            r.dump(file);
        }

        JfrBreakdown b = JfrBreakdown.of(file, null, null);

        assertThat(b.total()).isPositive();
        assertThat(b.counts().get(CpuGroup.SERDE)).isPositive();
        Row row = new Row();
        b.fill(row);
        assertThat(row.getLong(Column.JFR_SAMPLES)).isEqualTo(b.total());
        assertThat(row.getDouble(Column.JFR_SERDE)).isGreaterThan(0.0);
    }
}
