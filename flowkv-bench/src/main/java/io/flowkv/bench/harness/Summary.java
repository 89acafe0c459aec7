package io.flowkv.bench.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** What a set of result rows says: per-query medians, cross-backend checksums, the final line. */
final class Summary {

    private Summary() {}

    /** One query's throughput runs on one backend. */
    record Cell(List<Double> eventsPerSecond, List<String> failures) {
        boolean measured() {
            return !eventsPerSecond.isEmpty();
        }

        double median() {
            return Stats.median(eventsPerSecond);
        }
    }

    /** query -> backend -> cell, from the rows of one experiment, in the order first seen. */
    static Map<String, Map<String, Cell>> cells(List<Row> rows, String experiment) {
        Map<String, Map<String, Cell>> out = new LinkedHashMap<>();
        for (Row r : rows) {
            if (!r.get(Column.EXPERIMENT).equals(experiment)) {
                continue;
            }
            Cell c =
                    out.computeIfAbsent(r.get(Column.QUERY), q -> new LinkedHashMap<>())
                            .computeIfAbsent(
                                    r.get(Column.BACKEND),
                                    b -> new Cell(new ArrayList<>(), new ArrayList<>()));
            if (r.ok()) {
                c.eventsPerSecond().add(r.getDouble(Column.EVENTS_PER_S));
            } else {
                c.failures().add(r.get(Column.STATUS));
            }
        }
        return out;
    }

    /** A checksum disagreement between runs that must agree. */
    record Mismatch(String group, Map<String, String> checksumByRun) {
        String describe() {
            StringBuilder sb = new StringBuilder("CHECKSUM MISMATCH for " + group + ":");
            checksumByRun.forEach(
                    (run, sum) -> sb.append("\n    ").append(run).append(" -> ").append(sum));
            return sb.toString();
        }
    }

    /**
     * Successful runs of the same query on the same input (events, rate, windows) must give the
     * same output records and checksum, whatever the backend, parallelism, setting or repetition.
     * Failed runs have no checksum and are not compared. Latency runs are left out: their event
     * time follows the wall clock, so their windows differ from run to run.
     */
    static List<Mismatch> checksumMismatches(List<Row> rows) {
        Map<String, Map<String, String>> groups = new TreeMap<>();
        for (Row r : rows) {
            if (!r.ok() || r.get(Column.EXPERIMENT).equals("latency")) {
                continue;
            }
            String group =
                    String.format(
                            Locale.ROOT,
                            "%s events=%s rate=%s window=%sms slide=%sms gap=%sms",
                            r.get(Column.QUERY),
                            r.get(Column.EVENTS),
                            r.get(Column.EVENT_RATE),
                            r.get(Column.WINDOW_MS),
                            r.get(Column.SLIDE_MS),
                            r.get(Column.GAP_MS));
            String run =
                    r.get(Column.EXPERIMENT)
                            + " "
                            + r.get(Column.BACKEND)
                            + (r.get(Column.SETTING).isEmpty() ? "" : " " + r.get(Column.SETTING))
                            + " p="
                            + r.get(Column.PARALLELISM)
                            + " rep "
                            + r.get(Column.REP);
            groups.computeIfAbsent(group, g -> new LinkedHashMap<>())
                    .put(run, r.get(Column.OUTPUT_RECORDS) + "/" + r.get(Column.CHECKSUM));
        }
        List<Mismatch> out = new ArrayList<>();
        groups.forEach(
                (group, sums) -> {
                    if (sums.values().stream().distinct().count() > 1) {
                        out.add(new Mismatch(group, sums));
                    }
                });
        return out;
    }

    /** Ratios of median events/s, flowkv over {@code other}, per query where both succeeded. */
    static Map<String, Double> ratios(Map<String, Map<String, Cell>> cells, String other) {
        Map<String, Double> out = new LinkedHashMap<>();
        cells.forEach(
                (query, byBackend) -> {
                    Cell f = byBackend.get("flowkv");
                    Cell o = byBackend.get(other);
                    if (f != null && o != null && f.measured() && o.measured()) {
                        out.put(query, f.median() / o.median());
                    }
                });
        return out;
    }

    /**
     * Per query, FlowKV's events/s over {@code other}'s in each repetition where both succeeded:
     * the two runs of a repetition ran minutes apart, so their ratio is robust to the machine's
     * speed drifting between repetitions.
     */
    static Map<String, List<Double>> repetitionRatios(List<Row> rows, String other) {
        Map<String, Map<String, Double>> flowkv = new LinkedHashMap<>();
        Map<String, Map<String, Double>> others = new LinkedHashMap<>();
        for (Row r : rows) {
            if (!r.ok() || !r.get(Column.EXPERIMENT).equals("throughput")) {
                continue;
            }
            Map<String, Map<String, Double>> into =
                    r.get(Column.BACKEND).equals("flowkv")
                            ? flowkv
                            : r.get(Column.BACKEND).equals(other) ? others : null;
            if (into != null) {
                into.computeIfAbsent(r.get(Column.QUERY), q -> new TreeMap<>())
                        .put(r.get(Column.REP), r.getDouble(Column.EVENTS_PER_S));
            }
        }
        Map<String, List<Double>> out = new LinkedHashMap<>();
        flowkv.forEach(
                (query, byRep) ->
                        byRep.forEach(
                                (rep, f) -> {
                                    Double o = others.getOrDefault(query, Map.of()).get(rep);
                                    if (o != null && o > 0) {
                                        out.computeIfAbsent(query, q -> new ArrayList<>())
                                                .add(f / o);
                                    }
                                }));
        return out;
    }

    /** The harness's last stdout line. */
    static String finalLine(List<Row> rows, boolean checksumsEqual) {
        // The paper's queries only: the general-state workloads have their own table.
        Map<String, Map<String, Cell>> cells =
                cells(rows.stream().filter(Summary::isPaperQuery).toList(), "throughput");
        Map<String, Double> vsRocks = ratios(cells, "rocksdb");
        Map<String, Double> vsForst = ratios(cells, "forst");
        Map<String, Double> vsHeapTimers = ratios(cells, "rocksdb-heaptimers");
        List<Double> r = new ArrayList<>(vsRocks.values());
        List<Double> f = new ArrayList<>(vsForst.values());
        List<Double> h = new ArrayList<>(vsHeapTimers.values());
        // RocksDB with its timers on the heap is the faster RocksDB set-up for window queries:
        // when it ran, the line says how FlowKV compares with it too, not only with the default.
        String heapTimers =
                h.isEmpty()
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                " geomean_flowkv_vs_rocksdb_heaptimers=%s"
                                        + " min_flowkv_vs_rocksdb_heaptimers=%s"
                                        + " queries_heaptimers=%d",
                                ratio(Stats.geomean(h)),
                                ratio(Stats.min(h)),
                                vsHeapTimers.size());
        return String.format(
                Locale.ROOT,
                "geomean_flowkv_vs_rocksdb=%s min_flowkv_vs_rocksdb=%s geomean_flowkv_vs_forst=%s"
                        + " queries=%d%s checksums_equal=%s",
                r.isEmpty() ? "n/a" : ratio(Stats.geomean(r)),
                r.isEmpty() ? "n/a" : ratio(Stats.min(r)),
                f.isEmpty() ? "n/a" : ratio(Stats.geomean(f)),
                vsRocks.size(),
                heapTimers,
                checksumsEqual);
    }

    static boolean isPaperQuery(Row r) {
        return io.flowkv.nexmark.Workload.of(r.get(Column.QUERY))
                        instanceof io.flowkv.nexmark.Query q
                && q.isPaperQuery();
    }

    static boolean isSqlQuery(Row r) {
        return io.flowkv.nexmark.sql.SqlQuery.isSqlId(r.get(Column.QUERY));
    }

    static String ratio(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
