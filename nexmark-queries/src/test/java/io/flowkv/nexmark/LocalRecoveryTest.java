package io.flowkv.nexmark;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.jobmaster.JobResult;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Task-local recovery in a running job: with {@code execution.state-recovery.from-local} the
 * TaskManagers keep a local copy of every FlowKV incremental checkpoint and a failed task restores
 * from it. To prove the local copy is what restores, the test deletes every file the checkpoints
 * upload as shared state as soon as it appears: a restore from the checkpoint storage could then
 * only fail, so a job that reaches the failure-free output after a task failure, without a failed
 * restore, got its stores back from the local copies.
 */
class LocalRecoveryTest {
    private static FaultyCluster cluster;

    @TempDir static Path localState;
    @TempDir Path temp;

    @BeforeAll
    static void start() throws Exception {
        cluster = new FaultyCluster(localState);
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** One query per store pattern in the full suite (AAR, AUR, RMW); AAR in the default build. */
    static Stream<Query> queries() {
        return FailureInjectionTest.FULL
                ? Stream.of(Query.Q7, Query.Q7_SESSION, Query.Q11)
                : Stream.of(Query.Q7);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("queries")
    void shouldRestoreAFailedTaskFromItsLocalCopy(Query query) throws Exception {
        EventGenerator generator = new EventGenerator(FailureInjectionTest.GENERATOR);
        List<Event> events = new ArrayList<>();
        for (long n = 0; n < FailureInjectionTest.GENERATOR.events(); n++) {
            events.add(generator.event(n));
        }
        var expected =
                FaultyCluster.format(Reference.compute(query, events, FailureInjectionTest.PARAMS));

        String runId = "local-recovery-" + query.id();
        Path checkpoints = Files.createDirectories(temp.resolve("checkpoints"));
        JobID job =
                cluster.submit(
                        new FaultyCluster.JobSpec(
                                query,
                                FailureInjectionTest.GENERATOR,
                                FailureInjectionTest.PARAMS,
                                FailureInjectionTest.EVENTS_PER_SECOND,
                                "flowkv",
                                FaultyCluster.Checkpoints.INCREMENTAL,
                                2,
                                checkpoints,
                                runId),
                        null);
        assertThat(cluster.awaitCheckpoints(job, 0, 1, Duration.ofSeconds(60)))
                .as("a first checkpoint")
                .isTrue();

        // From now on every file a checkpoint uploads as shared state is deleted at once (an
        // upload still completes: its file is unlinked, not truncated).
        Path shared = checkpoints.resolve(job.toHexString()).resolve("shared");
        AtomicInteger deleted = new AtomicInteger();
        ScheduledExecutorService deleter = Executors.newSingleThreadScheduledExecutor();
        try {
            deleter.scheduleWithFixedDelay(
                    () -> deleted.addAndGet(deleteFiles(shared)), 0, 10, TimeUnit.MILLISECONDS);
            long completed = cluster.completedCheckpoints(job);
            assertThat(cluster.awaitCheckpoints(job, completed, 2, Duration.ofSeconds(60)))
                    .isTrue();
            assertThat(deleted.get()).as("uploaded shared files deleted").isPositive();
            assertThat(cluster.finished(job)).as("job still running when the fault hits").isFalse();

            FaultyCluster.USER_FAULT.set(true);
            boolean failed =
                    FaultyCluster.waitFor(
                            () -> cluster.rootFailures(job) > 0, Duration.ofSeconds(15));
            FaultyCluster.USER_FAULT.set(false);
            assertThat(failed).as("the user-function fault failed the job").isTrue();
            FaultyCluster.waitFor(
                    () -> cluster.restoredCheckpoints(job) > 0 || cluster.finished(job),
                    Duration.ofSeconds(60));
        } finally {
            deleter.shutdownNow();
        }

        JobResult result = cluster.await(job);
        assertThat(result.isSuccess())
                .as("%s finished: %s", runId, result.getSerializedThrowable())
                .isTrue();
        assertThat(cluster.restoredCheckpoints(job)).as("restores from a checkpoint").isPositive();
        assertThat(cluster.rootFailures(job))
                .as("one failure, no failed restore attempts: %s", cluster.failures(job))
                .isEqualTo(1);
        assertThat(FaultyCluster.results(runId)).isEqualTo(expected);
    }

    /** Deletes every file under {@code dir}; how many it deleted. */
    private static int deleteFiles(Path dir) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        int n = 0;
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path f : walk.filter(Files::isRegularFile).toList()) {
                if (Files.deleteIfExists(f)) {
                    n++;
                }
            }
        } catch (IOException | UncheckedIOException e) {
            // Flink deleted a file or directory meanwhile: the next round sees the rest.
        }
        return n;
    }
}
