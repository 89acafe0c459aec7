package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SummaryTest {

    static Row run(
            String experiment,
            String query,
            String backend,
            int rep,
            String status,
            double eps,
            String checksum) {
        Row r =
                new Row()
                        .set(Column.EXPERIMENT, experiment)
                        .set(Column.QUERY, query)
                        .set(Column.BACKEND, backend)
                        .set(Column.REP, rep)
                        .set(Column.PARALLELISM, 1)
                        .set(Column.EVENTS, 1000)
                        .set(Column.EVENT_RATE, 100)
                        .set(Column.WINDOW_MS, 10)
                        .set(Column.SLIDE_MS, 5)
                        .set(Column.GAP_MS, 10)
                        .set(Column.STATUS, status);
        if (status.equals(Row.OK)) {
            r.set(Column.EVENTS_PER_S, eps)
                    .set(Column.CHECKSUM, checksum)
                    .set(Column.OUTPUT_RECORDS, 5);
        }
        return r;
    }

    @Test
    void shouldPairRunsOfTheSameRepetitionForRatios() {
        List<Row> rows =
                List.of(
                        run("throughput", "q7", "flowkv", 1, Row.OK, 400, "a"),
                        run("throughput", "q7", "rocksdb", 1, Row.OK, 100, "a"),
                        // repetition 2 on a machine running half as fast
                        run("throughput", "q7", "flowkv", 2, Row.OK, 210, "a"),
                        run("throughput", "q7", "rocksdb", 2, Row.OK, 50, "a"),
                        // a failed run pairs with nothing
                        run("throughput", "q7", "flowkv", 3, Row.OK, 300, "a"),
                        run("throughput", "q7", "rocksdb", 3, "failed: OOM", 0, ""),
                        run("throughput", "q8", "flowkv", 1, Row.OK, 300, "b"),
                        run("read-batch-ratio", "q7", "flowkv", 1, Row.OK, 999, "a"));
        Map<String, List<Double>> ratios = Summary.repetitionRatios(rows, "rocksdb");
        assertThat(ratios).containsOnlyKeys("q7");
        assertThat(ratios.get("q7")).containsExactly(4.0, 4.2);
        assertThat(Report.ratioCell(4.1, ratios.get("q7"))).isEqualTo("4.10x (4.00–4.20)");
        assertThat(Report.ratioCell(4.1, List.of(4.1))).isEqualTo("4.10x");
        assertThat(Report.inPlanOrder(rows).stream().map(r -> r.get(Column.QUERY)).distinct())
                .containsExactly("q7", "q8");
        List<Row> late =
                List.of(
                        run("throughput", "q8", "rocksdb", 1, Row.OK, 1, "b"),
                        run("throughput", "q5", "flowkv", 1, Row.OK, 1, "c"),
                        run("throughput", "q8", "flowkv", 1, Row.OK, 1, "b"));
        assertThat(
                        Report.inPlanOrder(late).stream()
                                .map(r -> r.get(Column.QUERY) + "/" + r.get(Column.BACKEND)))
                .containsExactly("q5/flowkv", "q8/flowkv", "q8/rocksdb");
    }

    @Test
    void shouldPrintRatiosOfMediansAndTheirGeomean() {
        List<Row> rows = new ArrayList<>();
        // q7: flowkv median 300 (reps 100, 300, 900), rocksdb median 100 -> 3.0
        rows.add(run("throughput", "q7", "flowkv", 1, Row.OK, 100, "a"));
        rows.add(run("throughput", "q7", "rocksdb", 1, Row.OK, 50, "a"));
        rows.add(run("throughput", "q7", "hashmap", 1, "failed: OOM", 0, ""));
        rows.add(run("throughput", "q7", "flowkv", 2, Row.OK, 300, "a"));
        rows.add(run("throughput", "q7", "rocksdb", 2, Row.OK, 100, "a"));
        rows.add(run("throughput", "q7", "flowkv", 3, Row.OK, 900, "a"));
        rows.add(run("throughput", "q7", "rocksdb", 3, Row.OK, 200, "a"));
        // q8: flowkv 150 vs rocksdb 200 -> 0.75
        rows.add(run("throughput", "q8", "flowkv", 1, Row.OK, 150, "b"));
        rows.add(run("throughput", "q8", "rocksdb", 1, Row.OK, 200, "b"));
        // q11: rocksdb failed -> no ratio
        rows.add(run("throughput", "q11", "flowkv", 1, Row.OK, 150, "c"));
        rows.add(run("throughput", "q11", "rocksdb", 1, "failed: exit 1", 0, ""));
        // dedup: a general-state workload, reported apart and not in the geomean
        rows.add(run("throughput", "dedup", "flowkv", 1, Row.OK, 900, "d"));
        rows.add(run("throughput", "dedup", "rocksdb", 1, Row.OK, 100, "d"));

        assertThat(Summary.checksumMismatches(rows)).isEmpty();
        assertThat(Summary.finalLine(rows, true))
                .isEqualTo(
                        "geomean_flowkv_vs_rocksdb=1.50 min_flowkv_vs_rocksdb=0.75"
                                + " geomean_flowkv_vs_forst=n/a queries=2 checksums_equal=true");

        rows.add(run("throughput", "q7", "forst", 1, Row.OK, 150, "a"));
        assertThat(Summary.finalLine(rows, false))
                .endsWith("geomean_flowkv_vs_forst=2.00 queries=2 checksums_equal=false");

        // RocksDB with heap timers: its own geomean, minimum and count, beside the default's.
        rows.add(run("throughput", "q7", "rocksdb-heaptimers", 1, Row.OK, 200, "a"));
        rows.add(run("throughput", "q8", "rocksdb-heaptimers", 1, Row.OK, 300, "b"));
        assertThat(Summary.finalLine(rows, true))
                .isEqualTo(
                        "geomean_flowkv_vs_rocksdb=1.50 min_flowkv_vs_rocksdb=0.75"
                                + " geomean_flowkv_vs_forst=2.00 queries=2"
                                + " geomean_flowkv_vs_rocksdb_heaptimers=0.87"
                                + " min_flowkv_vs_rocksdb_heaptimers=0.50 queries_heaptimers=2"
                                + " checksums_equal=true");
    }

    @Test
    void shouldReportDisagreeingChecksumsButNotFailedOrLatencyRuns() {
        List<Row> rows = new ArrayList<>();
        rows.add(run("throughput", "q7", "flowkv", 1, Row.OK, 1, "aa"));
        rows.add(run("throughput", "q7", "rocksdb", 1, Row.OK, 1, "aa"));
        rows.add(run("throughput", "q7", "hashmap", 1, "failed: OOM", 0, ""));
        rows.add(run("latency", "q7", "rocksdb", 1, Row.OK, 1, "zz"));
        rows.add(run("scaling", "q7", "flowkv", 1, Row.OK, 1, "aa").set(Column.PARALLELISM, 2));
        assertThat(Summary.checksumMismatches(rows)).isEmpty();

        rows.add(run("throughput", "q7", "forst", 1, Row.OK, 1, "ab"));
        // another input: its own group, no conflict
        rows.add(run("throughput", "q7", "forst", 1, Row.OK, 1, "cc").set(Column.EVENTS, 7));

        List<Summary.Mismatch> m = Summary.checksumMismatches(rows);
        assertThat(m).hasSize(1);
        assertThat(m.get(0).describe())
                .contains("CHECKSUM MISMATCH")
                .contains("q7 events=1000")
                .contains("throughput forst p=1 rep 1 -> 5/ab");
    }
}
