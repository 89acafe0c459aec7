package io.flowkv.bench.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs one {@link RunSpec} in its own JVM (NexmarkRunner on an embedded MiniCluster) sized by the
 * {@link MemoryBudget}, watches it through /proc, and turns what it printed into a {@link Row}.
 */
final class ChildRun {

    /** The JVM flags scripts/nexmark.sh runs NexmarkRunner with (Flink's). */
    static final List<String> JVM_FLAGS =
            List.of(
                    "-XX:+UseG1GC",
                    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
                    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    /** Paced runs: event time starts about this long after the job (NexmarkSource's delay). */
    static final long START_DELAY_MS = 3_000;

    /** Paced runs: the latency records go to files with this prefix in the run's directory. */
    static final String LATENCY_PREFIX = "latency";

    private static final Pattern PROGRESS = Pattern.compile("events=(\\d+)/\\d+");

    /**
     * When the child submitted its job and saw it finish, with its /proc counters at those moments,
     * so that CPU, disk and JFR samples can be counted for the job alone, without the JVM's and the
     * MiniCluster's start-up and shutdown.
     */
    static final class Marks {
        volatile Instant submitted;
        volatile ProcStats atSubmit;
        volatile Instant finished;
        volatile ProcStats atFinish;

        /** {epoch ms, events generated} whenever the child reported its progress. */
        final List<long[]> progress = java.util.Collections.synchronizedList(new ArrayList<>());
    }

    /**
     * Where and how children run. {@code baseClasspath} is the classpath of backend {@link
     * RunSpec#BASE} (the build of {@code --base-rev}), empty when there is none.
     */
    record Env(
            String javaBin,
            String classpath,
            String baseClasspath,
            MemoryBudget budget,
            Path runRoot,
            boolean jfr,
            boolean keepRunDirs,
            long stallSeconds,
            long timeoutSeconds,
            long cgroupLimitBytes) {}

    private ChildRun() {}

    /**
     * The classpath of the run's build: {@code --base-rev}'s for {@link RunSpec#BASE} and its
     * variants ({@link RunSpec#onBase}).
     */
    private static String classpath(RunSpec spec, Env env) {
        if (!RunSpec.onBase(spec.backend())) {
            return env.classpath();
        }
        if (env.baseClasspath().isEmpty()) {
            throw new IllegalStateException(
                    RunSpec.BASE
                            + " has no build: scripts/bench.sh builds --base-rev REV and passes its"
                            + " classpath");
        }
        return env.baseClasspath();
    }

    /** The child's command line. */
    static List<String> command(RunSpec spec, Env env, Path runDir) {
        MemoryBudget b = env.budget();
        List<String> cmd = new ArrayList<>();
        cmd.add(env.javaBin());
        cmd.add("-Xmx" + b.xmxBytes());
        cmd.add("-XX:MaxDirectMemorySize=" + b.maxDirectBytes());
        cmd.add("-XX:MaxMetaspaceSize=" + b.metaspaceBytes());
        // An OutOfMemoryError ends the run at once, recognisably, instead of a job that limps on.
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        cmd.addAll(JVM_FLAGS);
        if (env.jfr()) {
            cmd.add(
                    "-XX:StartFlightRecording=settings=default,dumponexit=true,filename="
                            + runDir.resolve("run.jfr"));
            cmd.add("-Xlog:jfr+startup=warning");
        }
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=error");
        // FlowKV's per-store summary at dispose (prefetch hits, bytes read).
        cmd.add("-Dorg.slf4j.simpleLogger.log.io.flowkv.flink=info");
        // what each AUR store's restore spent on its manifest and its index logs
        cmd.add("-Dorg.slf4j.simpleLogger.log.io.flowkv.core.aur=info");
        // the paced source logs its base time (latency runs)
        cmd.add("-Dorg.slf4j.simpleLogger.log.io.flowkv.nexmark=info");
        cmd.add("-cp");
        cmd.add(classpath(spec, env));
        cmd.add("io.flowkv.nexmark.NexmarkRunner");
        ScalePlan.QueryPlan p = spec.plan();
        add(cmd, "--query", spec.query().id());
        add(cmd, "--backend", RunSpec.engine(spec.backend()));
        add(cmd, "--events", Long.toString(p.events()));
        add(cmd, "--rate", Long.toString(p.eventRate()));
        add(cmd, "--window", p.windowMs() + "ms");
        add(cmd, "--slide", p.slideMs() + "ms");
        add(cmd, "--gap", p.gapMs() + "ms");
        add(cmd, "--parallelism", Integer.toString(spec.parallelism()));
        add(cmd, "--managed-memory", b.managedBytes() + "b");
        add(cmd, "--progress-interval", "1s");
        if (spec.paced()) {
            cmd.add("--pace-to-event-time");
            add(cmd, "--latency-out", runDir.resolve(LATENCY_PREFIX).toString());
        }
        if (spec.failAfterEvents() > 0) {
            add(cmd, "--fail-after", Long.toString(spec.failAfterEvents()));
        }
        if (spec.checkpointIntervalMs() > 0) {
            add(cmd, "--checkpoint-interval", spec.checkpointIntervalMs() + "ms");
            add(cmd, "--checkpoint-dir", runDir.resolve("checkpoints").toUri().toString());
        }
        add(cmd, "--conf", "io.tmp.dirs=" + runDir.resolve("tmp"));
        for (Map.Entry<String, String> e : RunSpec.variantConf(spec.backend()).entrySet()) {
            add(cmd, "--conf", e.getKey() + "=" + e.getValue());
        }
        for (Map.Entry<String, String> e : spec.conf().entrySet()) {
            add(cmd, "--conf", e.getKey() + "=" + e.getValue());
        }
        return cmd;
    }

    private static void add(List<String> cmd, String option, String value) {
        cmd.add(option);
        cmd.add(value);
    }

    /** What a run left: its row, its directory, and when its job ended (null if unknown). */
    record Outcome(Row row, Path runDir, Instant finished, List<long[]> progress) {}

    /** Runs {@code spec}; {@code onEvents} hears the child's progress (events generated so far). */
    static Outcome run(RunSpec spec, Env env, LongConsumer onEvents)
            throws IOException, InterruptedException {
        Path runDir = env.runRoot().resolve(spec.dirName()).toAbsolutePath();
        deleteTree(runDir);
        Files.createDirectories(runDir.resolve("tmp"));
        List<String> cmd = command(spec, env, runDir);
        Row row = spec.baseRow(env.budget().managedBytes());

        MemoryCgroup cgroup = null;
        if (env.cgroupLimitBytes() > 0) {
            cgroup =
                    MemoryCgroup.create(MemoryCgroup.SYSFS, spec.dirName(), env.cgroupLimitBytes());
            cmd = cgroup.wrap(cmd);
            row.set(Column.MEMORY_LIMIT_BYTES, env.cgroupLimitBytes());
        }
        Files.write(runDir.resolve("command.txt"), List.of(String.join(" ", cmd)));

        long start = System.nanoTime();
        Process process;
        try {
            process =
                    new ProcessBuilder(cmd)
                            .redirectOutput(runDir.resolve("stdout.log").toFile())
                            .redirectErrorStream(false)
                            .start();
        } catch (IOException e) {
            if (cgroup != null) {
                cgroup.close();
            }
            throw e;
        }
        // A harness stopped by a signal takes its child (and so the child's cgroup) with it.
        MemoryCgroup group = cgroup;
        Thread onExit =
                new Thread(
                        () -> {
                            try {
                                stop(process, group, 5);
                            } catch (IOException | InterruptedException e) {
                                // exiting anyway; the next run's sweep removes the group
                            }
                        },
                        "child-run-cleanup");
        Runtime.getRuntime().addShutdownHook(onExit);
        long cgroupOomKills = 0;
        double wall;
        int exit;
        boolean stalled = false;
        boolean timedOut = false;
        Marks marks = new Marks();
        try {
            long pid = process.pid();
            AtomicLong lastProgressNanos = new AtomicLong(System.nanoTime());
            AtomicLong lastEvents = new AtomicLong(-1);
            Thread stderrPump =
                    new Thread(
                            () ->
                                    pumpStderr(
                                            process,
                                            runDir,
                                            onEvents,
                                            lastEvents,
                                            lastProgressNanos,
                                            marks),
                            "child-stderr");
            stderrPump.setDaemon(true);
            stderrPump.start();

            ProcStats last = ProcStats.ZERO;
            long peakDisk = 0;
            long lastDiskScan = 0;
            long quietSince = lastProgressNanos.get();
            double quietCpu = 0;
            while (!process.waitFor(250, TimeUnit.MILLISECONDS)) {
                try {
                    last = ProcStats.read(pid);
                } catch (IOException | RuntimeException e) {
                    // the process is exiting; keep the last reading
                }
                long now = System.nanoTime();
                if (now - lastDiskScan > 1_000_000_000L) {
                    peakDisk = Math.max(peakDisk, treeSize(runDir.resolve("tmp")));
                    lastDiskScan = now;
                }
                // Stalled: no progress and (almost) no CPU for stallSeconds. A long window firing
                // makes no progress either, but keeps a core busy.
                if (lastProgressNanos.get() != quietSince) {
                    quietSince = lastProgressNanos.get();
                    quietCpu = last.cpuSeconds();
                }
                double quietSeconds = (now - quietSince) / 1e9;
                if (env.stallSeconds() > 0
                        && quietSeconds > env.stallSeconds()
                        && last.cpuSeconds() - quietCpu < 0.1 * quietSeconds) {
                    stalled = true;
                } else if (env.timeoutSeconds() > 0 && now - start > env.timeoutSeconds() * 1e9) {
                    timedOut = true;
                }
                if (stalled || timedOut) {
                    process.destroyForcibly();
                    process.waitFor();
                    break;
                }
            }
            stderrPump.join(5_000);
            wall = (System.nanoTime() - start) / 1e9;
            exit = process.exitValue();

            row.set(Column.WALL_S, wall);
            // The job's share when the child reported both ends of it, else the whole process.
            ProcStats from = marks.atSubmit != null ? marks.atSubmit : ProcStats.ZERO;
            ProcStats to = marks.atFinish != null ? marks.atFinish : last;
            row.set(Column.CPU_S, to.cpuSeconds() - from.cpuSeconds());
            row.set(Column.READ_BYTES, to.readBytes() - from.readBytes());
            row.set(Column.WRITE_BYTES, to.writeBytes() - from.writeBytes());
            row.set(Column.PEAK_DISK_BYTES, peakDisk);
            // VmHWM only grows: the last reading before the child exited is its peak.
            row.set(Column.PEAK_RSS_BYTES, last.peakRssBytes());

            if (cgroup != null) {
                row.set(Column.CGROUP_PEAK_BYTES, cgroup.peakBytes());
                cgroupOomKills = cgroup.oomKills();
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(onExit);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook runs
            }
            stop(process, cgroup, 10);
        }

        String stderr = tail(runDir.resolve("stderr.log"), 200_000);
        List<String> stdout = Files.readAllLines(runDir.resolve("stdout.log"));
        Map<String, String> result = resultLine(stdout);
        String status;
        if (stalled) {
            status = "failed: stalled (no progress, idle CPU for " + env.stallSeconds() + " s)";
        } else if (timedOut) {
            status = "failed: timeout (" + env.timeoutSeconds() + " s)";
        } else if (cgroupOomKills > 0) {
            status =
                    "failed: OOM (the kernel killed the child at its memory cgroup's limit of "
                            + MemoryBudget.mb(env.cgroupLimitBytes())
                            + ")";
        } else if (stderr.contains("OutOfMemoryError")
                // -XX:+ExitOnOutOfMemoryError reports on stdout
                || stdout.stream().anyMatch(l -> l.contains("OutOfMemoryError"))) {
            status = "failed: OOM";
        } else if (exit != 0 || result == null) {
            status = "failed: exit " + exit + failureReason(stderr);
        } else {
            status = Row.OK;
        }
        row.set(Column.STATUS, status);
        if (result != null && status.equals(Row.OK)) {
            row.set(Column.SECONDS, result.get("seconds"));
            row.set(Column.EVENTS_PER_S, result.get("events_per_s"));
            row.set(Column.OUTPUT_RECORDS, result.get("output_records"));
            row.set(Column.CHECKSUM, result.get("checksum"));
            if (result.containsKey("restore_ms")) {
                row.set(Column.FAILED_AT_EVENTS, result.get("failed_at_events"));
                row.set(Column.RESTORED_BYTES, result.get("restored_bytes"));
                row.set(Column.RESTORE_MS, result.get("restore_ms"));
                row.set(Column.INIT_STATE_MS, result.get("init_state_ms"));
                row.set(Column.STEADY_MS, result.get("steady_ms"));
                row.set(Column.RATE_BEFORE, result.get("rate_before"));
            }
        }
        FlowKvStats.fromLog(stderr).fill(row);
        Path jfr = runDir.resolve("run.jfr");
        if (env.jfr() && Files.exists(jfr)) {
            try {
                JfrBreakdown.of(jfr, marks.submitted, marks.finished).fill(row);
            } catch (IOException e) {
                System.err.println("bench: cannot read " + jfr + ": " + e.getMessage());
            }
        }
        if (!env.keepRunDirs()) {
            deleteTree(runDir.resolve("tmp"));
            deleteTree(runDir.resolve("checkpoints"));
            if (status.equals(Row.OK)) {
                Files.deleteIfExists(jfr);
            }
        }
        return new Outcome(row, runDir, marks.finished, List.copyOf(marks.progress));
    }

    /**
     * Kills the child if it still runs, waits up to {@code waitSeconds} for it to go and removes
     * its cgroup ({@code group} may be null).
     */
    private static void stop(Process process, MemoryCgroup group, long waitSeconds)
            throws IOException, InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(waitSeconds, TimeUnit.SECONDS);
        }
        if (group != null) {
            group.close();
        }
    }

    private static void pumpStderr(
            Process process,
            Path runDir,
            LongConsumer onEvents,
            AtomicLong lastEvents,
            AtomicLong lastProgressNanos,
            Marks marks) {
        try (BufferedReader in =
                        new BufferedReader(
                                new InputStreamReader(
                                        process.getErrorStream(), StandardCharsets.UTF_8));
                PrintWriter log =
                        new PrintWriter(
                                Files.newBufferedWriter(runDir.resolve("stderr.log")), true)) {
            String line;
            while ((line = in.readLine()) != null) {
                log.println(line);
                if (marks.submitted == null && line.contains("] job submitted:")) {
                    marks.atSubmit = readQuietly(process.pid());
                    marks.submitted = Instant.now();
                } else if (marks.finished == null && line.contains("] job finished:")) {
                    marks.atFinish = readQuietly(process.pid());
                    marks.finished = Instant.now();
                }
                Matcher m = PROGRESS.matcher(line);
                if (m.find()) {
                    long events = Long.parseLong(m.group(1));
                    marks.progress.add(new long[] {System.currentTimeMillis(), events});
                    if (events != lastEvents.getAndSet(events)) {
                        lastProgressNanos.set(System.nanoTime());
                    }
                    onEvents.accept(events);
                } else if (line.contains(" running")) {
                    // start-up: the job has not produced events yet, but it is alive
                    lastProgressNanos.set(System.nanoTime());
                }
            }
        } catch (IOException e) {
            // the child is gone; what it printed is in stderr.log
        }
    }

    private static ProcStats readQuietly(long pid) {
        try {
            return ProcStats.read(pid);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The key=value pairs of the last stdout line starting with "query=", or null. */
    static Map<String, String> resultLine(List<String> stdout) {
        for (int i = stdout.size() - 1; i >= 0; i--) {
            String line = stdout.get(i).trim();
            if (line.startsWith("query=")) {
                Map<String, String> m = new HashMap<>();
                for (String kv : line.split("\\s+")) {
                    int eq = kv.indexOf('=');
                    if (eq > 0) {
                        m.put(kv.substring(0, eq), kv.substring(eq + 1));
                    }
                }
                return m;
            }
        }
        return null;
    }

    private static String failureReason(String stderr) {
        int i = stderr.lastIndexOf(" FAILED: ");
        if (i < 0) {
            return "";
        }
        int end = stderr.indexOf('\n', i);
        String reason = stderr.substring(i + 9, end < 0 ? stderr.length() : end).trim();
        return ": " + (reason.length() > 160 ? reason.substring(0, 160) + "..." : reason);
    }

    private static String tail(Path file, int maxChars) throws IOException {
        if (!Files.exists(file)) {
            return "";
        }
        String s = Files.readString(file, StandardCharsets.UTF_8);
        return s.length() <= maxChars ? s : s.substring(s.length() - maxChars);
    }

    /** Flink unpacks its RPC system's jar into the temp dir: the same 23 MB for every backend. */
    static boolean isRpcJar(Path f) {
        String name = f.getFileName().toString();
        return name.startsWith("flink-rpc-") && name.endsWith(".jar");
    }

    /** Bytes of the files under {@code dir} but Flink's RPC jar: the run's state on disk. */
    static long treeSize(Path dir) {
        long[] size = {0};
        try {
            Files.walkFileTree(
                    dir,
                    new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
                            if (!isRpcJar(f)) {
                                size[0] += a.size();
                            }
                            return FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult visitFileFailed(Path f, IOException e) {
                            // files come and go while the job runs
                            return FileVisitResult.CONTINUE;
                        }
                    });
        } catch (IOException e) {
            // the directory went away
        }
        return size[0];
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        Files.walkFileTree(
                dir,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path f, BasicFileAttributes a)
                            throws IOException {
                        Files.deleteIfExists(f);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path f, IOException e)
                            throws IOException {
                        if (e instanceof NoSuchFileException) {
                            return FileVisitResult.CONTINUE;
                        }
                        throw e;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path d, IOException e)
                            throws IOException {
                        Files.deleteIfExists(d);
                        return FileVisitResult.CONTINUE;
                    }
                });
    }
}
