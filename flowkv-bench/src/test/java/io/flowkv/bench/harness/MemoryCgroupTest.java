package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class MemoryCgroupTest {

    @Test
    void shouldWriteTheLimitOfACgroupV1Group(@TempDir Path sysfs) throws Exception {
        Files.createDirectories(sysfs.resolve("memory"));
        Files.writeString(sysfs.resolve("memory/memory.limit_in_bytes"), "9223372036854771712");

        MemoryCgroup group = MemoryCgroup.create(sysfs, "run-1", 3L << 30);

        Path dir = sysfs.resolve("memory").resolve(MemoryCgroup.PARENT).resolve("run-1");
        assertThat(Files.readString(dir.resolve("memory.limit_in_bytes")))
                .isEqualTo(Long.toString(3L << 30));
        assertThat(group.wrap(List.of("java", "-version")))
                .containsExactly(
                        "/bin/sh",
                        "-c",
                        "echo $$ > \"$0\" && exec \"$@\"",
                        dir.resolve("cgroup.procs").toString(),
                        "java",
                        "-version");
        Files.writeString(dir.resolve("memory.max_usage_in_bytes"), "12345\n");
        Files.writeString(dir.resolve("memory.oom_control"), "oom_kill_disable 0\noom_kill 2\n");
        assertThat(group.peakBytes()).isEqualTo(12345);
        assertThat(group.oomKills()).isEqualTo(2);
    }

    @Test
    void shouldEnableTheControllerForTheGroupsOfACgroupV2Tree(@TempDir Path sysfs)
            throws Exception {
        Files.writeString(sysfs.resolve("cgroup.controllers"), "cpuset cpu io memory pids\n");
        Files.writeString(sysfs.resolve("cgroup.subtree_control"), "cpu\n");
        Path parent = sysfs.resolve(MemoryCgroup.PARENT);
        Files.createDirectories(parent);
        Files.writeString(parent.resolve("cgroup.subtree_control"), "memory\n");

        MemoryCgroup group = MemoryCgroup.create(sysfs, "run-2", 1L << 30);

        // A real v2 tree would add memory to "cpu"; the fake file just takes the request.
        assertThat(Files.readString(sysfs.resolve("cgroup.subtree_control"))).isEqualTo("+memory");
        assertThat(Files.readString(parent.resolve("cgroup.subtree_control")))
                .isEqualTo("memory\n");
        assertThat(Files.readString(parent.resolve("run-2/memory.max")))
                .isEqualTo(Long.toString(1L << 30));
        Files.writeString(parent.resolve("run-2/memory.events"), "low 0\nmax 7\noom_kill 1\n");
        assertThat(group.oomKills()).isEqualTo(1);
        assertThat(group.peakBytes()).as("no memory.peak on this kernel").isEqualTo(-1);
    }

    @Test
    void shouldRemoveGroupsLeftByAKilledHarnessAndRefuseOnesStillInUse(@TempDir Path sysfs)
            throws Exception {
        Files.createDirectories(sysfs.resolve("memory"));
        Files.writeString(sysfs.resolve("memory/memory.limit_in_bytes"), "9223372036854771712");
        Path parent = sysfs.resolve("memory").resolve(MemoryCgroup.PARENT);
        // On cgroupfs a group without processes can be removed whatever files it shows; the
        // fake tree's stand-in is an empty directory.
        Files.createDirectories(parent.resolve("left-behind"));
        Path busy = Files.createDirectories(parent.resolve("busy"));
        Files.writeString(busy.resolve("cgroup.procs"), "4242\n");

        MemoryCgroup.create(sysfs, "run-3", 1L << 30);

        assertThat(parent.resolve("left-behind")).doesNotExist();
        assertThat(busy).exists();
        assertThatThrownBy(() -> MemoryCgroup.create(sysfs, "busy", 1L << 30))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("still holds processes of an earlier run (4242)");
    }

    @Test
    void shouldNameWhatIsMissingWithoutAMemoryController(@TempDir Path sysfs) {
        assertThatThrownBy(() -> MemoryCgroup.create(sysfs, "run", 1L << 30))
                .hasMessageContaining("no cgroup memory controller under " + sysfs);
        assertThatThrownBy(() -> MemoryCgroup.create(sysfs, "run", 0))
                .hasMessageContaining("must be > 0");
    }

    /**
     * On a machine where this test may create cgroups (root, v1 memory hierarchy): a child writing
     * four times its group's limit to a file on disk keeps no more than the limit in memory. Each
     * write is synced, so what the group holds is clean page cache it can drop; a burst of dirty
     * pages faster than the disk takes them can end in the kernel's OOM killer on a v1 group, which
     * is not what this test is about. The file goes under the build directory: on a tmpfs {@code
     * /tmp} the "page cache" is memory that cannot be dropped at all.
     */
    @Test
    void shouldKeepAChildsPageCacheWithinTheLimit() throws Exception {
        Path v1 = MemoryCgroup.SYSFS.resolve("memory");
        assumeTrue(
                Files.isWritable(v1) && Files.exists(v1.resolve("memory.limit_in_bytes")),
                "needs a writable cgroup v1 memory hierarchy");
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target")), "cgroup");
        String fsType = Files.getFileStore(dir).type();
        assumeTrue(
                !fsType.equals("tmpfs") && !fsType.equals("ramfs"),
                "needs a disk-backed build directory, not " + fsType);
        long limit = 32L << 20;
        try (MemoryCgroup group =
                MemoryCgroup.create(
                        MemoryCgroup.SYSFS, "test-" + ProcessHandle.current().pid(), limit)) {
            Path file = dir.resolve("data");
            Process p =
                    new ProcessBuilder(
                                    group.wrap(
                                            List.of(
                                                    "dd",
                                                    "if=/dev/zero",
                                                    "of=" + file,
                                                    "bs=1M",
                                                    "count=128",
                                                    "oflag=dsync",
                                                    "status=none")))
                            .inheritIO()
                            .start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue())
                    .as("dd's exit status (137: killed, %d OOM kills)", group.oomKills())
                    .isZero();
            assertThat(Files.size(file)).isEqualTo(128L << 20);
            assertThat(group.peakBytes()).isPositive().isLessThanOrEqualTo(limit);
            assertThat(group.oomKills()).isZero();
        } finally {
            Files.deleteIfExists(dir.resolve("data"));
            Files.deleteIfExists(dir);
        }
    }
}
