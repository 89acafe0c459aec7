package io.flowkv.flink;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.flink.util.function.SupplierWithException;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import static io.flowkv.flink.FlowKVOptions.FullCheckpointFormat.CANONICAL;
import static io.flowkv.flink.FlowKVOptions.FullCheckpointFormat.NATIVE;
import static io.flowkv.flink.FlowKVOptions.TimerService.AUTO;
import static io.flowkv.flink.FlowKVOptions.TimerService.FLOWKV;
import static io.flowkv.flink.FlowKVOptions.TimerService.HEAP;

/**
 * Flink's own conformance suite for keyed state backends, run on FlowKV with full checkpoints in
 * either format and with incremental checkpoints, on both checkpoint storages, with timers on the
 * heap, stored by FlowKV, or moving from one to the other.
 */
@ExtendWith(ParameterizedTestExtension.class)
class FlowKVStateBackendTest extends StateBackendTestBase<FlowKVStateBackend> {

    @TempDir static java.nio.file.Path tempFolder;

    @Parameter(0)
    public SupplierWithException<CheckpointStorage, IOException> storageSupplier;

    @Parameter(1)
    public boolean incremental;

    @Parameter(2)
    public FlowKVOptions.FullCheckpointFormat fullFormat;

    @Parameter(3)
    public FlowKVOptions.TimerService timers;

    @Parameters(name = "storage={0}, incremental={1}, full={2}, timers={3}")
    public static List<Object[]> checkpointStorages() {
        SupplierWithException<CheckpointStorage, IOException> jobManager =
                JobManagerCheckpointStorage::new;
        SupplierWithException<CheckpointStorage, IOException> fileSystem =
                () ->
                        new FileSystemCheckpointStorage(
                                new Path(tempFolder.resolve("checkpoints").toUri()), 0, -1);
        return Arrays.asList(
                new Object[][] {
                    {jobManager, false, CANONICAL, HEAP},
                    {fileSystem, false, NATIVE, AUTO},
                    {jobManager, true, NATIVE, HEAP},
                    {fileSystem, true, NATIVE, AUTO},
                    {jobManager, false, NATIVE, FLOWKV},
                    {fileSystem, false, CANONICAL, FLOWKV},
                    {fileSystem, true, NATIVE, FLOWKV}
                });
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        config.set(FlowKVOptions.FULL_CHECKPOINT_FORMAT, fullFormat);
        config.set(FlowKVOptions.TIMER_SERVICE, timers);
        // AUTO moves a queue into the store at its second timer: both sides of the move are run.
        config.set(FlowKVOptions.TIMER_HEAP_LIMIT, 1L);
        return new FlowKVStateBackend().configure(config, getClass().getClassLoader());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() throws Exception {
        return storageSupplier.get();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return true;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }
}
