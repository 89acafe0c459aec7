package io.flowkv.bench.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A Linux memory cgroup that one child JVM runs in. The kernel charges a cgroup for its processes'
 * memory and for the page cache of the files they read and write, and reclaims that cache once the
 * cgroup reaches its limit. A limit of the child's process size plus a small allowance therefore
 * bounds the page cache the run can use: state larger than that is read from the disk, not served
 * from the machine's free memory.
 *
 * <p>Both cgroup versions are supported: v2 (a {@code memory} entry in {@code cgroup.controllers}
 * at the root; limit {@code memory.max}) and v1 (the {@code memory} hierarchy; limit {@code
 * memory.limit_in_bytes}). Creating a cgroup needs write access to the hierarchy, as root has.
 */
final class MemoryCgroup implements AutoCloseable {
    static final Path SYSFS = Path.of("/sys/fs/cgroup");

    /** Parent group of every run's group. */
    static final String PARENT = "flowkv-bench";

    private final Path dir;
    private final boolean v2;
    private final long limitBytes;

    private MemoryCgroup(Path dir, boolean v2, long limitBytes) {
        this.dir = dir;
        this.v2 = v2;
        this.limitBytes = limitBytes;
    }

    /**
     * Creates the group {@code name} with a limit of {@code limitBytes} under the memory controller
     * found below {@code sysfs}; fails with what is missing when there is none or it is not
     * writable.
     */
    static MemoryCgroup create(Path sysfs, String name, long limitBytes) throws IOException {
        if (limitBytes <= 0) {
            throw new IllegalArgumentException("cgroup memory limit must be > 0: " + limitBytes);
        }
        Path controllers = sysfs.resolve("cgroup.controllers");
        boolean v2 =
                Files.exists(controllers)
                        && List.of(Files.readString(controllers).trim().split("\\s+"))
                                .contains("memory");
        Path root = v2 ? sysfs : sysfs.resolve("memory");
        if (!v2 && !Files.exists(root.resolve("memory.limit_in_bytes"))) {
            throw new IOException(
                    "no cgroup memory controller under "
                            + sysfs
                            + " (neither cgroup v2 with 'memory' in cgroup.controllers nor a v1"
                            + " 'memory' hierarchy)");
        }
        Path parent = root.resolve(PARENT);
        Path dir = parent.resolve(name);
        sweep(parent);
        if (!processes(dir).isEmpty()) {
            throw new IOException(
                    "the memory cgroup "
                            + dir
                            + " still holds processes of an earlier run ("
                            + String.join(", ", processes(dir))
                            + "); stop them before running again");
        }
        try {
            Files.createDirectories(dir);
            if (v2) {
                // v2 hands a controller to the children of a group only when asked.
                enable(root.resolve("cgroup.subtree_control"));
                enable(parent.resolve("cgroup.subtree_control"));
            }
            write(dir.resolve(v2 ? "memory.max" : "memory.limit_in_bytes"), limitBytes);
        } catch (IOException e) {
            throw new IOException(
                    "cannot create the memory cgroup "
                            + dir
                            + " with a limit of "
                            + limitBytes
                            + " bytes (needs root, or write access to the cgroup hierarchy): "
                            + e,
                    e);
        }
        return new MemoryCgroup(dir, v2, limitBytes);
    }

    /**
     * Removes the groups a killed harness left under {@code parent} that no process is in any more.
     * A group left behind would otherwise be reused by the next run of its name, whose reported
     * peak would then be the earlier run's.
     */
    static void sweep(Path parent) throws IOException {
        if (!Files.isDirectory(parent)) {
            return;
        }
        List<Path> groups;
        try (var children = Files.list(parent)) {
            groups = children.filter(Files::isDirectory).toList();
        }
        for (Path group : groups) {
            if (processes(group).isEmpty()) {
                try {
                    Files.deleteIfExists(group);
                } catch (IOException e) {
                    // Busy or not ours: create() reports it if a run needs this name.
                }
            }
        }
    }

    /** The pids in a group, as {@code cgroup.procs} lists them; empty if it cannot be read. */
    static List<String> processes(Path group) {
        try {
            return Files.readAllLines(group.resolve("cgroup.procs")).stream()
                    .map(String::trim)
                    .filter(l -> !l.isEmpty())
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static void enable(Path subtreeControl) throws IOException {
        String enabled = Files.readString(subtreeControl);
        if (!List.of(enabled.trim().split("\\s+")).contains("memory")) {
            Files.writeString(subtreeControl, "+memory");
        }
    }

    private static void write(Path file, long value) throws IOException {
        Files.writeString(file, Long.toString(value));
    }

    long limitBytes() {
        return limitBytes;
    }

    /**
     * {@code command} started through a shell that first moves itself into this group and then
     * becomes the command ({@code exec}): the child's pid is the shell's, and every byte it
     * allocates or caches is charged to the group from its first instruction.
     */
    List<String> wrap(List<String> command) {
        List<String> wrapped = new ArrayList<>(command.size() + 4);
        wrapped.add("/bin/sh");
        wrapped.add("-c");
        wrapped.add("echo $$ > \"$0\" && exec \"$@\"");
        wrapped.add(dir.resolve("cgroup.procs").toString());
        wrapped.addAll(command);
        return wrapped;
    }

    /** The most memory (process and page cache) the group held, bytes; -1 if not reported. */
    long peakBytes() {
        return readLong(dir.resolve(v2 ? "memory.peak" : "memory.max_usage_in_bytes"));
    }

    /** Times the kernel's out-of-memory killer killed a process of this group. */
    long oomKills() {
        Path events = dir.resolve(v2 ? "memory.events" : "memory.oom_control");
        try {
            for (String line : Files.readAllLines(events, StandardCharsets.UTF_8)) {
                String[] kv = line.trim().split("\\s+");
                if (kv.length == 2 && kv[0].equals("oom_kill")) {
                    return Long.parseLong(kv[1]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not reported by this kernel
        }
        return 0;
    }

    private static long readLong(Path file) {
        try {
            return Long.parseLong(Files.readString(file).trim());
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** Removes the group; its processes must have exited. */
    @Override
    public void close() throws IOException {
        // The kernel removes a group's files with the group: rmdir, never a recursive delete.
        for (int attempt = 0; ; attempt++) {
            try {
                Files.deleteIfExists(dir);
                return;
            } catch (IOException e) {
                if (attempt >= 20) {
                    throw new IOException("cannot remove the memory cgroup " + dir + ": " + e, e);
                }
                try {
                    Thread.sleep(50); // a killed child may take a moment to leave the group
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while removing " + dir, ie);
                }
            }
        }
    }
}
