package io.flowkv.flink;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.concurrent.FutureUtils;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * FlowKV keyed backends with {@code Integer} keys over mock environments, for tests: each one built
 * from a configuration, optionally restored from handles; {@link #close} disposes them all.
 */
public final class TestBackends implements AutoCloseable {
    private final List<FlowKVKeyedStateBackend<Integer>> open = new ArrayList<>();
    private final List<MockEnvironment> environments = new ArrayList<>();

    /** Checkpoint streams into {@code dir}/chk, shared state into {@code dir}/shared. */
    public static CheckpointStreamFactory streamFactory(Path dir) throws IOException {
        org.apache.flink.core.fs.Path checkpoints =
                new org.apache.flink.core.fs.Path(
                        Files.createDirectories(dir.resolve("chk")).toUri());
        org.apache.flink.core.fs.Path shared =
                new org.apache.flink.core.fs.Path(
                        Files.createDirectories(dir.resolve("shared")).toUri());
        return new FsCheckpointStreamFactory(
                FileSystem.getLocalFileSystem(), checkpoints, shared, 0, 4096);
    }

    /**
     * Checkpoint {@code id} of {@code backend} into {@code dir}/chk-{@code id}, its shared files
     * registered with {@code registry} and the checkpoint completed: the handle a restore takes.
     */
    public static KeyedStateHandle checkpoint(
            FlowKVKeyedStateBackend<Integer> backend,
            long id,
            Path dir,
            SharedStateRegistry registry)
            throws Exception {
        KeyedStateHandle handle =
                FutureUtils.runIfNotDoneAndGet(
                                backend.snapshot(
                                        id,
                                        id,
                                        streamFactory(dir.resolve("chk-" + id)),
                                        CheckpointOptions.forCheckpointWithDefaultLocation()))
                        .getJobManagerOwnedSnapshot();
        if (handle instanceof IncrementalRemoteKeyedStateHandle incremental) {
            incremental.registerSharedStates(registry, id);
        }
        backend.notifyCheckpointComplete(id);
        return handle;
    }

    public FlowKVKeyedStateBackend<Integer> create(
            String operator,
            int keyGroups,
            KeyGroupRange range,
            List<KeyedStateHandle> handles,
            Configuration config)
            throws Exception {
        return create(operator, keyGroups, range, handles, config, new UnregisteredMetricsGroup());
    }

    /** As above, reporting the backend's metrics to {@code metrics}. */
    @SuppressWarnings("unchecked")
    public FlowKVKeyedStateBackend<Integer> create(
            String operator,
            int keyGroups,
            KeyGroupRange range,
            List<KeyedStateHandle> handles,
            Configuration config,
            MetricGroup metrics)
            throws Exception {
        MockEnvironment env = MockEnvironment.builder().build();
        environments.add(env);
        FlowKVStateBackend stateBackend =
                new FlowKVStateBackend().configure(config, getClass().getClassLoader());
        FlowKVKeyedStateBackend<Integer> backend =
                (FlowKVKeyedStateBackend<Integer>)
                        stateBackend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        (Environment) env,
                                        new JobID(),
                                        operator,
                                        IntSerializer.INSTANCE,
                                        keyGroups,
                                        range,
                                        env.getTaskKvStateRegistry(),
                                        TtlTimeProvider.DEFAULT,
                                        metrics,
                                        handles,
                                        new CloseableRegistry()));
        open.add(backend);
        return backend;
    }

    @Override
    public void close() throws IOException {
        for (FlowKVKeyedStateBackend<Integer> backend : open) {
            backend.dispose();
        }
        for (MockEnvironment env : environments) {
            try {
                env.close();
            } catch (Exception e) {
                throw new IOException("Could not close a mock environment", e);
            }
        }
        open.clear();
        environments.clear();
    }
}
