package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
        Path csv = out.resolve(Bench.CSV_DIR);
        Csv.write(csv.resolve("throughput.csv"), throughput);
        Csv.write(csv.resolve("sweeps.csv"), sweeps);
        Files.writeString(out.resolve("store-bench-aar.log"), "x");

        List<Row> rows = Report.readAll(csv);
        Report.write(out, rows, Summary.checksumMismatches(rows));

        String md = Files.readString(out.resolve("README.md"));
        assertThat(md)
                .contains("geomean_flowkv_vs_rocksdb=3.02")
                .contains("| q7 | 1k |")
                .contains("| failed: OOM (2/2) |")
                .contains("[store-bench-aar.log](store-bench-aar.log)")
                .contains("microbench.md")
                .contains("read-batch-ratio=0.1")
                .contains("## Method");
        for (String png : List.of("throughput.png", "cpu.png", "read-batch-ratio.png")) {
            assertThat(csv.resolve(png)).isNotEmptyFile();
        }
    }

    private static Row cpu(Row r) {
        return r.set(Column.CPU_S, 2.0)
                .set(Column.JFR_FLOWKV, 0.25)
                .set(Column.JFR_ROCKSDB, 0.0)
                .set(Column.JFR_HEAP, 0.0)
                .set(Column.JFR_SERDE, 0.25)
                .set(Column.JFR_OTHER, 0.5);
    }
}
