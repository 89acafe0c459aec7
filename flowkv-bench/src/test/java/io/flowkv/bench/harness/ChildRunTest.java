package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChildRunTest {

    @Test
    void shouldSizeTheChildJvmFromTheBudget() {
        MemoryBudget b = MemoryBudget.forProcessSize("2g");
        RunSpec spec =
                new RunSpec(
                        "read-batch-ratio",
                        ScalePlan.plan(Query.Q7_SESSION, "small", b.managedBytes(), 4, 1000),
                        "flowkv",
                        1,
                        2,
                        "read-batch-ratio=0.1",
                        Map.of("state.backend.flowkv.read-batch-ratio", "0.1"),
                        0);
        ChildRun.Env env =
                new ChildRun.Env(
                        "java", "cp", "", b, Path.of("/tmp/runs"), true, false, 60, 600, 0);

        List<String> cmd = ChildRun.command(spec, env, Path.of("/tmp/runs/x"));

        assertThat(cmd)
                .contains(
                        "-Xmx" + b.xmxBytes(),
                        "-XX:MaxDirectMemorySize=" + b.maxDirectBytes(),
                        "-XX:+ExitOnOutOfMemoryError",
                        "io.flowkv.nexmark.NexmarkRunner",
                        b.managedBytes() + "b",
                        "q7-session",
                        "io.tmp.dirs=/tmp/runs/x/tmp",
                        "state.backend.flowkv.read-batch-ratio=0.1")
                .doesNotContain("--checkpoint-interval");
        assertThat(cmd.get(cmd.indexOf("--parallelism") + 1)).isEqualTo("2");
        assertThat(cmd.stream().filter(a -> a.startsWith("-XX:StartFlightRecording"))).hasSize(1);
        assertThat(spec.dirName()).doesNotContain(" ").contains("q7-session");
    }

    @Test
    void shouldRunAVariantOnItsEngineWithItsOption() {
        MemoryBudget b = MemoryBudget.forProcessSize("2g");
        ChildRun.Env env =
                new ChildRun.Env(
                        "java", "cp", "", b, Path.of("/tmp/runs"), true, false, 60, 600, 0);
        for (String variant :
                List.of(
                        "flowkv-storedtimers",
                        "flowkv-heaptimers",
                        "flowkv-onheap",
                        "rocksdb-heaptimers")) {
            RunSpec spec =
                    new RunSpec(
                            "throughput",
                            ScalePlan.plan(Query.TIMERS, "small", b.managedBytes(), 4, 1000),
                            variant,
                            1,
                            1,
                            "",
                            Map.of(),
                            0);
            List<String> cmd = ChildRun.command(spec, env, Path.of("/tmp/runs/x"));
            String engine = variant.substring(0, variant.indexOf('-'));
            assertThat(cmd.get(cmd.indexOf("--backend") + 1)).isEqualTo(engine);
            for (Map.Entry<String, String> option : RunSpec.VARIANTS.get(variant).entrySet()) {
                assertThat(cmd).contains(option.getKey() + "=" + option.getValue());
            }
            assertThat(spec.dirName()).contains(variant);
        }
    }

    @Test
    void shouldRunTheBaseBackendFromTheBaseBuild() {
        MemoryBudget b = MemoryBudget.forProcessSize("2g");
        RunSpec base =
                new RunSpec(
                        "throughput",
                        ScalePlan.plan(Query.Q7, "small", b.managedBytes(), 4, 1000),
                        RunSpec.BASE,
                        1,
                        1,
                        "",
                        Map.of(),
                        0);
        RunSpec current = new RunSpec("throughput", base.plan(), "flowkv", 1, 1, "", Map.of(), 0);
        ChildRun.Env env =
                new ChildRun.Env(
                        "java",
                        "new.jar",
                        "old.jar",
                        b,
                        Path.of("/tmp/runs"),
                        false,
                        false,
                        60,
                        600,
                        0);

        List<String> baseCmd = ChildRun.command(base, env, Path.of("/tmp/runs/x"));
        List<String> currentCmd = ChildRun.command(current, env, Path.of("/tmp/runs/y"));

        assertThat(baseCmd.get(baseCmd.indexOf("-cp") + 1)).isEqualTo("old.jar");
        assertThat(baseCmd.get(baseCmd.indexOf("--backend") + 1)).isEqualTo("flowkv");
        assertThat(currentCmd.get(currentCmd.indexOf("-cp") + 1)).isEqualTo("new.jar");
        // Same options apart from the classpath and the run's directories: an A/B of builds.
        assertThat(baseCmd.subList(baseCmd.indexOf("--query"), baseCmd.size()).toString())
                .isEqualTo(
                        currentCmd
                                .subList(currentCmd.indexOf("--query"), currentCmd.size())
                                .toString()
                                .replace("/tmp/runs/y", "/tmp/runs/x"));
        // A variant of the base build: that build, with the variant's options.
        RunSpec baseStored =
                new RunSpec(
                        "throughput",
                        base.plan(),
                        "flowkv-base-storedtimers",
                        1,
                        1,
                        "",
                        Map.of(),
                        0);
        RunSpec stored =
                new RunSpec(
                        "throughput", base.plan(), "flowkv-storedtimers", 1, 1, "", Map.of(), 0);
        List<String> baseStoredCmd = ChildRun.command(baseStored, env, Path.of("/tmp/runs/x"));
        List<String> storedCmd = ChildRun.command(stored, env, Path.of("/tmp/runs/x"));
        assertThat(baseStoredCmd.get(baseStoredCmd.indexOf("-cp") + 1)).isEqualTo("old.jar");
        assertThat(storedCmd.get(storedCmd.indexOf("-cp") + 1)).isEqualTo("new.jar");
        assertThat(baseStoredCmd.get(baseStoredCmd.indexOf("--backend") + 1)).isEqualTo("flowkv");
        assertThat(baseStoredCmd).contains("state.backend.flowkv.timer-service=FLOWKV");
        assertThat(baseStoredCmd.subList(baseStoredCmd.indexOf("--query"), baseStoredCmd.size()))
                .isEqualTo(storedCmd.subList(storedCmd.indexOf("--query"), storedCmd.size()));
        ChildRun.Env unbuilt =
                new ChildRun.Env(
                        "java", "new.jar", "", b, Path.of("/tmp/runs"), false, false, 60, 600, 0);
        assertThatThrownBy(() -> ChildRun.command(base, unbuilt, Path.of("/tmp/runs/x")))
                .hasMessageContaining("--base-rev");
    }

    @Test
    void shouldTakeTheLastResultLine() {
        Map<String, String> r =
                ChildRun.resultLine(
                        List.of(
                                "noise",
                                "query=q7 backend=flowkv events=10 seconds=1.000 events_per_s=10"
                                        + " output_records=3 checksum=00000000000000ab",
                                "more noise"));
        assertThat(r)
                .containsEntry("events_per_s", "10")
                .containsEntry("checksum", "00000000000000ab");
        assertThat(ChildRun.resultLine(List.of("nothing"))).isNull();
    }
}
