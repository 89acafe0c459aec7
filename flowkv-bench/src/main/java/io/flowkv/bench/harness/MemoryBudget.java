package io.flowkv.bench.harness;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;

import java.util.Locale;

/**
 * The memory split of one TaskManager process, computed with Flink's own memory model ({@link
 * TaskExecutorProcessUtils}) from the process size alone, every other option at its default. A
 * child run's JVM gets the heap and direct memory limits a standalone TaskManager of that size
 * would get, and the job gets the managed memory as its state backend budget.
 *
 * <p>The child runs a MiniCluster, so its JobManager (dispatcher, resource manager, job master)
 * lives in the same JVM; {@link #JOB_MANAGER_HEAP_ALLOWANCE} is added to the heap for it. The
 * MiniCluster sizes its network buffers with its own local defaults (at most the network memory
 * computed here), so the direct memory limit is an upper bound of what it can use.
 */
record MemoryBudget(
        long processBytes,
        long frameworkHeapBytes,
        long taskHeapBytes,
        long frameworkOffHeapBytes,
        long taskOffHeapBytes,
        long networkBytes,
        long managedBytes,
        long metaspaceBytes,
        long overheadBytes) {

    /** Heap added for the MiniCluster's JobManager components in the same JVM. */
    static final long JOB_MANAGER_HEAP_ALLOWANCE = 128L << 20;

    static MemoryBudget forProcessSize(String processSize) {
        return forProcessSize(processSize, null);
    }

    /**
     * As Flink splits {@code processSize}, with managed memory set to {@code managedSize} when it
     * is not null ({@code taskmanager.memory.managed.size}: the task heap takes the difference).
     */
    static MemoryBudget forProcessSize(String processSize, String managedSize) {
        MemorySize size;
        try {
            size = MemorySize.parse(processSize);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--memory: cannot parse '" + processSize + "' as a memory size (e.g. 2g)", e);
        }
        if (size.getBytes() < (1L << 30)) {
            throw new IllegalArgumentException(
                    "--memory must be at least 1g (Flink's fixed framework, metaspace and overhead"
                            + " parts leave nothing for the job below that), got "
                            + processSize);
        }
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.TOTAL_PROCESS_MEMORY, size);
        if (managedSize != null) {
            MemorySize managed;
            try {
                managed = MemorySize.parse(managedSize);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "--managed-memory: cannot parse '" + managedSize + "' as a memory size", e);
            }
            if (managed.getBytes() < (16L << 20) || managed.getBytes() >= size.getBytes() / 2) {
                throw new IllegalArgumentException(
                        "--managed-memory must be at least 16m and below half of --memory ("
                                + processSize
                                + "), got "
                                + managedSize);
            }
            conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, managed);
        }
        TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(conf);
        return new MemoryBudget(
                size.getBytes(),
                spec.getFlinkMemory().getFrameworkHeap().getBytes(),
                spec.getTaskHeapSize().getBytes(),
                spec.getFlinkMemory().getFrameworkOffHeap().getBytes(),
                spec.getTaskOffHeapSize().getBytes(),
                spec.getNetworkMemSize().getBytes(),
                spec.getManagedMemorySize().getBytes(),
                spec.getJvmMetaspaceSize().getBytes(),
                spec.getJvmOverheadSize().getBytes());
    }

    /** The TaskManager's JVM heap (framework + task heap). */
    long jvmHeapBytes() {
        return frameworkHeapBytes + taskHeapBytes;
    }

    /** The child's {@code -Xmx}: the TaskManager heap plus the JobManager allowance. */
    long xmxBytes() {
        return jvmHeapBytes() + JOB_MANAGER_HEAP_ALLOWANCE;
    }

    /** The child's {@code -XX:MaxDirectMemorySize}: framework and task off-heap plus network. */
    long maxDirectBytes() {
        return frameworkOffHeapBytes + taskOffHeapBytes + networkBytes;
    }

    String describe() {
        return String.format(
                Locale.ROOT,
                "TaskManager process %s (Flink's memory model): framework heap %s + task heap %s,"
                        + " framework off-heap %s + task off-heap %s, network %s, managed %s,"
                        + " metaspace %s, overhead %s -> child JVM -Xmx%s (TaskManager heap + %s"
                        + " for the MiniCluster's JobManager), -XX:MaxDirectMemorySize=%s,"
                        + " managed memory (state backend budget) %s",
                mb(processBytes),
                mb(frameworkHeapBytes),
                mb(taskHeapBytes),
                mb(frameworkOffHeapBytes),
                mb(taskOffHeapBytes),
                mb(networkBytes),
                mb(managedBytes),
                mb(metaspaceBytes),
                mb(overheadBytes),
                mb(xmxBytes()),
                mb(JOB_MANAGER_HEAP_ALLOWANCE),
                mb(maxDirectBytes()),
                mb(managedBytes));
    }

    static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.0fm", bytes / 1048576.0);
    }
}
