import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * FlowKV over RocksDB per SQL query, counting the RocksDB runs the time limit cut off at the
 * lower bound their limit proves, and the geomean over the stateful queries.
 *
 * <p>A run killed at {@code t} seconds (its last progress line, counted from before the
 * MiniCluster started) had not processed all its events: its job run time for them would have
 * been more than {@code t - margin}, so its events/s less than {@code events / (t - margin)}, and
 * FlowKV's ratio over it more than FlowKV's events/s over that. {@code margin} covers the time
 * between the progress clock's start and the job's start; the finished runs' "job finished"
 * lines show it (since submission minus job run time), and the program prints their largest.
 *
 * <p>Per query: the median of the per-repetition ratios (a lower bound when any repetition is
 * one, since the median only grows with its inputs). Run from this directory with the JDK only:
 * {@code java CensoredRatios.java nexmark/throughput.csv rocksdb-timeouts.txt
 * job-finished-lines.txt 10}.
 */
public class CensoredRatios {
    /** The suite's stateless queries (docs/nexmark.md): no state, not in the geomean. */
    static final Set<String> STATELESS =
            Set.of("sql-q0", "sql-q1", "sql-q2", "sql-q14", "sql-q21", "sql-q22");

    static final Pattern TIMEOUT =
            Pattern.compile("^(\\S+) (\\S+) r(\\d+): \\[\\S+\\] (\\d+)s events=(\\d+)/(\\d+)");
    static final Pattern FINISHED =
            Pattern.compile(
                    "^throughput-\\S+-p1-r\\d+: .* ([0-9.]+) s job run time, ([0-9.]+) s"
                            + " since submission");

    record Ratio(double value, boolean lowerBound) {}

    public static void main(String[] args) throws IOException {
        Path csv = Path.of(args[0]);
        Path timeouts = Path.of(args[1]);
        Path finished = Path.of(args[2]);
        double margin = Double.parseDouble(args[3]);

        // query -> rep -> backend -> events/s (ok runs only)
        Map<String, Map<String, Map<String, Double>>> rates = new TreeMap<>();
        List<String> lines = Files.readAllLines(csv);
        List<String> header = List.of(lines.get(0).split(",", -1));
        int query = header.indexOf("query");
        int backend = header.indexOf("backend");
        int rep = header.indexOf("rep");
        int status = header.indexOf("status");
        int eps = header.indexOf("events_per_s");
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            if (f[0].equals("throughput") && f[status].equals("ok")) {
                rates.computeIfAbsent(f[query], q -> new TreeMap<>())
                        .computeIfAbsent(f[rep], r -> new TreeMap<>())
                        .put(f[backend], Double.parseDouble(f[eps]));
            }
        }

        double largestDelay = 0;
        for (String line : Files.readAllLines(finished)) {
            Matcher m = FINISHED.matcher(line);
            if (m.find()) {
                largestDelay =
                        Math.max(
                                largestDelay,
                                Double.parseDouble(m.group(2)) - Double.parseDouble(m.group(1)));
            }
        }
        System.out.printf(
                Locale.ROOT,
                "margin %.1f s; largest (since submission - job run time) of the finished"
                        + " runs: %.3f s%n",
                margin,
                largestDelay);
        if (largestDelay >= margin) {
            throw new IllegalArgumentException("the margin must exceed " + largestDelay + " s");
        }

        // query -> rep -> RocksDB's events/s upper bound from a cut-off run
        Map<String, Map<String, Double>> rocksBound = new TreeMap<>();
        for (String line : Files.readAllLines(timeouts)) {
            Matcher m = TIMEOUT.matcher(line);
            if (m.find() && m.group(2).equals("rocksdb")) {
                double seconds = Double.parseDouble(m.group(4));
                long total = Long.parseLong(m.group(6));
                rocksBound
                        .computeIfAbsent(m.group(1), q -> new TreeMap<>())
                        .put(m.group(3), total / (seconds - margin));
            }
        }

        List<Double> medians = new ArrayList<>();
        boolean anyBound = false;
        System.out.println("| query | FlowKV / RocksDB per repetition | median |");
        System.out.println("|---|---|---|");
        for (var q : rates.entrySet()) {
            if (STATELESS.contains(q.getKey())) {
                continue;
            }
            List<Ratio> ratios = new ArrayList<>();
            for (var r : q.getValue().entrySet()) {
                Double flowkv = r.getValue().get("flowkv");
                Double rocks = r.getValue().get("rocksdb");
                Double bound = rocksBound.getOrDefault(q.getKey(), Map.of()).get(r.getKey());
                if (flowkv != null && rocks != null) {
                    ratios.add(new Ratio(flowkv / rocks, false));
                } else if (flowkv != null && bound != null) {
                    ratios.add(new Ratio(flowkv / bound, true));
                }
            }
            if (ratios.isEmpty()) {
                continue;
            }
            List<Double> values = new ArrayList<>();
            boolean bounded = false;
            StringBuilder cells = new StringBuilder();
            for (Ratio ratio : ratios) {
                values.add(ratio.value());
                bounded |= ratio.lowerBound();
                cells.append(cells.length() == 0 ? "" : ", ")
                        .append(ratio.lowerBound() ? ">" : "")
                        .append(String.format(Locale.ROOT, "%.2f", ratio.value()));
            }
            Collections.sort(values);
            double median =
                    values.size() % 2 == 1
                            ? values.get(values.size() / 2)
                            : (values.get(values.size() / 2 - 1) + values.get(values.size() / 2))
                                    / 2;
            medians.add(median);
            anyBound |= bounded;
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s | %s%.2fx |%n",
                    q.getKey(),
                    cells,
                    bounded ? ">" : "",
                    median);
        }
        double log = 0;
        for (double m : medians) {
            log += Math.log(m);
        }
        System.out.printf(
                Locale.ROOT,
                "geomean over %d stateful queries: %s%.2fx%n",
                medians.size(),
                anyBound ? ">" : "",
                Math.exp(log / medians.size()));
    }
}
