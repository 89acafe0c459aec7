package io.flowkv.bench.harness;

import org.apache.flink.runtime.util.EnvironmentInformation;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The facts of the machine and the invocation a result set came from, gathered when the harness
 * runs and stored next to the CSVs, so that a regenerated README tells where its numbers were
 * measured.
 */
record Machine(Map<String, String> facts) {

    static final String FILE = "machine.properties";

    /** The facts a report shows in its machine table, in this order. */
    static final List<String> TABLE_FACTS =
            List.of(
                    "date",
                    "cpu",
                    "cores",
                    "memory",
                    "disk",
                    "os",
                    "huge_pages",
                    "jdk",
                    "flink",
                    "git");

    /** Every fact {@link #collect} gathers: the table's, then the invocation's. */
    private static final List<String> ALL_FACTS =
            Stream.concat(
                            TABLE_FACTS.stream(),
                            Stream.of(
                                    "command",
                                    "base",
                                    "memory_split",
                                    "note",
                                    "scale",
                                    "reps",
                                    "jfr",
                                    "checkpoint_interval",
                                    "page_cache"))
                    .toList();

    static Machine collect(BenchOptions o, MemoryBudget budget) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        f.put("command", o.commandLine());
        f.put("cpu", cpuModel());
        f.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
        f.put("memory", meminfo("MemTotal"));
        f.put("disk", disk(o.runsDir()));
        f.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        f.put("huge_pages", transparentHugePages(THP_ENABLED));
        f.put(
                "jdk",
                System.getProperty("java.vm.name")
                        + " "
                        + System.getProperty("java.runtime.version"));
        f.put("flink", EnvironmentInformation.getVersion());
        f.put("git", command(List.of("git", "rev-parse", "--short", "HEAD")));
        f.put("base", baseRev(o));
        f.put("memory_split", budget.describe());
        f.put("note", o.note());
        f.put("scale", o.scale());
        f.put("reps", Integer.toString(o.reps()));
        f.put("jfr", Boolean.toString(o.jfr()));
        f.put(
                "checkpoint_interval",
                o.checkpointIntervalMs() == 0 ? "off" : o.checkpointIntervalMs() + "ms");
        f.put(
                "page_cache",
                o.pageCacheBytes() == 0
                        ? "unbounded"
                        : MemoryBudget.mb(o.pageCacheBytes())
                                + " (memory cgroup of "
                                + MemoryBudget.mb(Bench.cgroupLimit(o, budget))
                                + " per run)");
        return new Machine(f);
    }

    void write(Path file) throws IOException {
        Properties p = new Properties();
        p.putAll(facts);
        try (OutputStream out = Files.newOutputStream(file)) {
            p.store(out, "where and how the results next to this file were measured");
        }
    }

    static Machine read(Path file) throws IOException {
        Map<String, String> f = new LinkedHashMap<>();
        if (Files.exists(file)) {
            Properties p = new Properties();
            try (InputStream in = Files.newInputStream(file)) {
                p.load(in);
            }
            for (String k : ALL_FACTS) {
                f.put(k, p.getProperty(k, defaultFact(k)));
            }
        }
        return new Machine(f);
    }

    /** What an older facts file lacks: no cgroup, no base build. */
    private static String defaultFact(String key) {
        return switch (key) {
            case "page_cache" -> "unbounded";
            case "base" -> "";
            default -> "unknown";
        };
    }

    /** The commit flowkv-base ran: the one scripts/bench.sh built for {@code --base-rev}. */
    private static String baseRev(BenchOptions o) {
        if (o.baseRev().isEmpty()) {
            return "";
        }
        String built = System.getProperty("flowkv.bench.base-commit", "");
        return built.isEmpty() ? o.baseRev() : o.baseRev() + " (" + built + ")";
    }

    String get(String key) {
        return facts.getOrDefault(key, "unknown");
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // not Linux: fall through
        }
        return System.getProperty("os.arch");
    }

    /** Where the kernel reports its transparent huge page mode. */
    static final Path THP_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    /**
     * The kernel's transparent huge page mode ({@code always}, {@code madvise} or {@code never}):
     * the word in brackets of {@code file} ("always [madvise] never"), or "unknown". It decides
     * whether memory nobody advised (the Java heap without {@code -XX:+UseTransparentHugePages},
     * native memory from malloc) gets 2 MiB pages, which changes how much address translation
     * costs; the backends differ in how much of their memory that is.
     */
    static String transparentHugePages(Path file) {
        try {
            Matcher m = BRACKETED.matcher(Files.readString(file));
            return m.find() ? "transparent " + m.group(1) : "unknown";
        } catch (IOException e) {
            return "unknown"; // not Linux, or no THP support
        }
    }

    private static final Pattern BRACKETED = Pattern.compile("\\[(\\w+)]");

    private static String meminfo(String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith(key + ":")) {
                    long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    return String.format(java.util.Locale.ROOT, "%.1f GiB", kb / 1048576.0);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // fall through
        }
        return "unknown";
    }

    private static String disk(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            return "unknown";
        }
        String df =
                command(List.of("df", "-h", "--output=source,fstype,size,avail", dir.toString()));
        String[] lines = df.split("\n");
        String fs = lines.length > 1 ? lines[lines.length - 1].trim().replaceAll("\\s+", " ") : df;
        String lsblk = command(List.of("lsblk", "-d", "-n", "-o", "NAME,MODEL,SIZE,ROTA"));
        return "runs dir on "
                + fs
                + (lsblk.isBlank()
                        ? ""
                        : "; block devices: "
                                + lsblk.trim()
                                        .replaceAll("\\s*\n\\s*", "; ")
                                        .replaceAll("\\s+", " "));
    }

    static String command(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return "";
            }
            return new String(out, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }
}
