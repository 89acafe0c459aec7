package io.flowkv.bench.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Linux counts for a process: CPU time from {@code /proc/<pid>/stat}, disk traffic from {@code
 * /proc/<pid>/io} ({@code read_bytes}/{@code write_bytes}: bytes that reached the block layer, so
 * page-cache hits are not reads), and the peak resident set from {@code /proc/<pid>/status} ({@code
 * VmHWM}: the largest RSS since the process started, heap, native memory and mapped files
 * together).
 */
record ProcStats(double cpuSeconds, long readBytes, long writeBytes, long peakRssBytes) {

    static final ProcStats ZERO = new ProcStats(0, 0, 0, 0);

    /** Clock ticks per second of /proc/pid/stat's utime and stime (USER_HZ, 100 on Linux). */
    static final double TICKS_PER_SECOND = 100.0;

    static ProcStats read(long pid) throws IOException {
        Path proc = Path.of("/proc", Long.toString(pid));
        String io = Files.readString(proc.resolve("io"));
        return new ProcStats(
                cpuSecondsOfStat(Files.readString(proc.resolve("stat"))),
                ioField(io, "read_bytes"),
                ioField(io, "write_bytes"),
                peakRssOfStatus(Files.readString(proc.resolve("status"))));
    }

    /** utime + stime (fields 14 and 15) of a /proc/pid/stat line, in seconds. */
    static double cpuSecondsOfStat(String stat) {
        // The command name (field 2) is in parentheses and may hold spaces: count after it.
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/pid/stat line: " + stat);
        }
        String[] f = stat.substring(close + 2).trim().split("\\s+");
        // f[0] is field 3 (state), so field n is f[n - 3]
        long utime = Long.parseLong(f[14 - 3]);
        long stime = Long.parseLong(f[15 - 3]);
        return (utime + stime) / TICKS_PER_SECOND;
    }

    static long ioField(String io, String name) {
        for (String line : io.split("\n")) {
            if (line.startsWith(name + ":")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        throw new IllegalArgumentException("no " + name + " in /proc/pid/io: " + io);
    }

    /** {@code VmHWM} of a /proc/pid/status text, in bytes (the kernel gives kB). */
    static long peakRssOfStatus(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("VmHWM:")) {
                String kb = line.substring("VmHWM:".length()).trim();
                return Long.parseLong(kb.substring(0, kb.indexOf(' '))) * 1024;
            }
        }
        throw new IllegalArgumentException("no VmHWM in /proc/pid/status: " + status);
    }
}
