package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class ReportTest {

    @Test
    void shouldRegenerateTheReportFromCsvsAlone(@TempDir Path out) throws Exception {
        List<Row> throughput = new ArrayList<>();
        for (int rep = 1; rep <= 2; rep++) {
            throughput.add(
                    cpu(
                            SummaryTest.run(
                                    "throughput", "q7", "flowkv", rep, Row.OK, 300 + rep, "a")));
            throughput.add(
                    cpu(SummaryTest.run("throughput", "q7", "rocksdb", rep, Row.OK, 100, "a")));
            throughput.add(
                    SummaryTest.run("throughput", "q7", "hashmap", rep, "failed: OOM", 0, ""));
        }
        List<Row> sweeps = new ArrayList<>();
        for (String v : List.of("0.01", "0.1")) {
            sweeps.add(
                    cpu(SummaryTest.run("read-batch-ratio", "q7", "flowkv", 1, Row.OK, 200, "a"))
                            .set(Column.SETTING, "read-batch-ratio=" + v)
                            .set(Column.PREFETCH_HIT_RATIO, 0.5));
        }
        List<Row> latency = new ArrayList<>();
        latency.add(SummaryTest.run("latency-max", "q11", "rocksdb", 1, Row.OK, 1000, "x"));
        for (String b : List.of("flowkv", "rocksdb")) {
            for (int rate : new int[] {250, 500}) {
                latency.add(
                        SummaryTest.run("latency", "q11", b, 1, Row.OK, rate, "y")
                                .set(Column.SETTING, "rate=" + rate / 10 + "%")
                                .set(Column.TARGET_RATE, rate)
                                .set(Column.P50_MS, 120)
                                .set(Column.P95_MS, 300)
                                .set(Column.P99_MS, 400)
                                .set(Column.P999_MS, 900)
                                .set(Column.ACHIEVED_RATE, rate)
                                .set(Column.SUSTAINED, Boolean.toString(rate == 250)));
            }
        }
        Path csv = out.resolve(Bench.CSV_DIR);
        Csv.write(csv.resolve("latency.csv"), latency);
        Files.writeString(
                csv.resolve(Latency.TIMELINE_CSV),
                Latency.timelineHeader()
                        + "q11,flowkv,250,1,10,400\nq11,flowkv,250,2,10,500\n"
                        + "q11,rocksdb,250,1,10,700\n");
        for (int rep = 1; rep <= 2; rep++) {
            throughput.add(
                    cpu(SummaryTest.run("throughput", "sql-q20", "flowkv", rep, Row.OK, 200, "s"))
                            .set(Column.EVENT_RATE, 1_000_000)
                            .set(Column.PEAK_DISK_BYTES, 900L << 20)
                            .set(Column.MANAGED_BYTES, 100L << 20));
            throughput.add(
                    cpu(SummaryTest.run("throughput", "sql-q20", "rocksdb", rep, Row.OK, 100, "s"))
                            .set(Column.EVENT_RATE, 1_000_000)
                            .set(Column.PEAK_DISK_BYTES, 100L * rep << 20)
                            .set(Column.MANAGED_BYTES, 100L << 20));
        }
        Csv.write(csv.resolve("throughput.csv"), throughput);
        Csv.write(csv.resolve("sweeps.csv"), sweeps);
        Files.writeString(out.resolve("store-bench-aar.log"), "x");
        Files.writeString(out.resolve(Report.MICROBENCH), "x");
        Files.writeString(out.resolve(Report.FINDINGS), "\nQ8 is bound by the generator.\n");

        List<Row> rows = Report.readAll(csv);
        Report.write(out, rows, Summary.checksumMismatches(rows));

        String md = Files.readString(out.resolve("README.md"));
        assertThat(md)
                .contains("geomean_flowkv_vs_rocksdb=3.02")
                .contains("| q7 | 1k |")
                .contains("## nexmark-flink SQL queries (not in the paper geomean)")
                // the state shown is RocksDB's measured disk peak, median of 100 and 200 MiB;
                // the runs' event rate (--event-rate) beside their events
                .contains("| sql-q20 | 1k at 1.0M/s | 150m (1.50x) |")
                .contains("| failed: OOM (2/2) |")
                .contains("[store-bench-aar.log](store-bench-aar.log)")
                .contains("Store-level micro-benchmarks: [microbench.md](microbench.md)")
                .contains("## Findings\n\nWritten by hand in [findings.md](findings.md)")
                .contains("and why.\n\nQ8 is bound by the generator.\n\n## Machine")
                .contains("read-batch-ratio=0.1")
                .contains(
                        "| q11 | 50% (500/s) | flowkv | 120 | 300 | 400 | 900 | 500 | **not sustained** |")
                .contains("q11 1000 events/s")
                .contains("latency-over-time-q11.png")
                .contains("## Method");
        for (String png :
                List.of(
                        "throughput.png",
                        "cpu.png",
                        "read-batch-ratio.png",
                        "latency-q11.png",
                        "latency-over-time-q11.png",
                        "sql.png")) {
            assertThat(csv.resolve(png)).isNotEmptyFile();
        }
    }

    @Test
    void shouldGiveTheRatioToTheBaseBuildPerRepetition(@TempDir Path out) throws Exception {
        List<Row> throughput = new ArrayList<>();
        double[] base = {100, 200, 100};
        for (int rep = 1; rep <= 3; rep++) {
            throughput.add(
                    cpu(SummaryTest.run("throughput", "q7", "flowkv", rep, Row.OK, 110, "a")));
            throughput.add(
                    cpu(
                            SummaryTest.run(
                                    "throughput",
                                    "q7",
                                    RunSpec.BASE,
                                    rep,
                                    Row.OK,
                                    base[rep - 1],
                                    "a")));
        }
        Path csv = out.resolve(Bench.CSV_DIR);
        Csv.write(csv.resolve("throughput.csv"), throughput);
        Properties facts = new Properties();
        facts.setProperty("base", "HEAD~1 (0123abc)");
        try (var w = Files.newBufferedWriter(csv.resolve(Machine.FILE))) {
            facts.store(w, null);
        }

        List<Row> rows = Report.readAll(csv);
        Report.write(out, rows, Summary.checksumMismatches(rows));

        String md = Files.readString(out.resolve("README.md"));
        assertThat(md)
                .contains("| flowkv-base | FlowKV as built at HEAD~1 (0123abc) |")
                .contains("| flowkv | flowkv-base | flowkv/flowkv-base |")
                // medians 110 over 100; per repetition 1.10, 0.55 and 1.10
                .contains("| 1.10x (0.55–1.10) |");
    }

    @Test
    void shouldLinkTheMicroBenchmarksOfTheParentFromAnExperimentsOwnDirectory(@TempDir Path docs)
            throws Exception {
        Path sweeps = docs.resolve("sweeps");
        Files.createDirectories(sweeps);
        assertThat(Report.microbenchLink(sweeps)).isNull();

        Files.writeString(docs.resolve(Report.MICROBENCH), "x");
        assertThat(Report.microbenchLink(sweeps)).isEqualTo("../microbench.md");
        assertThat(Report.microbenchLink(docs)).isEqualTo("microbench.md");
    }

    private static Row cpu(Row r) {
        return r.set(Column.CPU_S, 2.0)
                .set(Column.JFR_FLOWKV, 0.25)
                .set(Column.JFR_ROCKSDB, 0.0)
                .set(Column.JFR_HEAP, 0.0)
                .set(Column.JFR_SERDE, 0.25)
                .set(Column.JFR_OTHER, 0.5);
    }

    @Test
    void shouldMeasureOneSpikePerCheckpointIntervalAboveTheRunsMedian() {
        List<List<String>> timeline = new ArrayList<>();
        // 50 s at 300 ms, with a checkpoint every 10 s lifting one second to 300 + 100 * k.
        for (int second = 0; second < 50; second++) {
            long p999 = second % 10 == 7 ? 300 + 100L * (second / 10) : 300;
            timeline.add(List.of("q11", "flowkv", "1000", "" + second, "50", "" + p999));
            timeline.add(List.of("q11", "rocksdb", "1000", "" + second, "50", "" + 2 * p999));
        }
        var spikes = Report.checkpointSpikes(timeline, 10_000);

        // intervals 1..3 (the first and the last left out): spikes 100, 200, 300 ms
        Report.Spikes flowkv = spikes.get(List.of("q11", "1000", "flowkv"));
        assertThat(flowkv.baseline()).isEqualTo(300);
        assertThat(flowkv.intervals()).isEqualTo(3);
        assertThat(flowkv.median()).isEqualTo(200);
        assertThat(flowkv.max()).isEqualTo(300);
        Report.Spikes rocksdb = spikes.get(List.of("q11", "1000", "rocksdb"));
        assertThat(rocksdb.median()).isEqualTo(400);
        assertThat(Report.checkpointIntervalMs("10000ms")).isEqualTo(10_000);
        assertThat(Report.checkpointIntervalMs("off")).isZero();
    }
}
