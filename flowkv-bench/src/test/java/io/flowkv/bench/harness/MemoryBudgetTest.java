package io.flowkv.bench.harness;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemoryBudgetTest {

    @Test
    void shouldSplitTheProcessLikeFlink() {
        MemoryBudget b = MemoryBudget.forProcessSize("2g");
        Configuration conf = new Configuration();
        conf.set(TaskManagerOptions.TOTAL_PROCESS_MEMORY, MemorySize.parse("2g"));
        TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(conf);

        assertThat(b.processBytes()).isEqualTo(2L << 30);
        assertThat(b.jvmHeapBytes()).isEqualTo(spec.getJvmHeapMemorySize().getBytes());
        assertThat(b.maxDirectBytes()).isEqualTo(spec.getJvmDirectMemorySize().getBytes());
        assertThat(b.managedBytes()).isEqualTo(spec.getManagedMemorySize().getBytes());
        assertThat(
                        b.jvmHeapBytes()
                                + b.maxDirectBytes()
                                + b.managedBytes()
                                + b.metaspaceBytes()
                                + b.overheadBytes())
                .isEqualTo(b.processBytes());
        // managed memory is 40% of total Flink memory by default
        long flink = b.processBytes() - b.metaspaceBytes() - b.overheadBytes();
        assertThat((double) b.managedBytes() / flink)
                .isCloseTo(0.4, org.assertj.core.data.Offset.offset(0.001));
        assertThat(b.xmxBytes())
                .isEqualTo(b.jvmHeapBytes() + MemoryBudget.JOB_MANAGER_HEAP_ALLOWANCE);
        assertThat(b.describe()).contains("managed").contains("-Xmx");
    }

    @Test
    void shouldGrowManagedMemoryWithTheProcess() {
        assertThat(MemoryBudget.forProcessSize("4g").managedBytes())
                .isGreaterThan(MemoryBudget.forProcessSize("2g").managedBytes());
    }

    @Test
    void shouldSetManagedMemoryAndGiveTheRestToTheHeap() {
        MemoryBudget derived = MemoryBudget.forProcessSize("2g");
        MemoryBudget cut = MemoryBudget.forProcessSize("2g", "64m");
        assertThat(cut.managedBytes()).isEqualTo(64L << 20);
        assertThat(cut.taskHeapBytes())
                .isEqualTo(derived.taskHeapBytes() + derived.managedBytes() - (64L << 20));
        assertThatThrownBy(() -> MemoryBudget.forProcessSize("2g", "1g"))
                .hasMessageContaining("--managed-memory");
    }

    @Test
    void shouldRejectBadSizes() {
        assertThatThrownBy(() -> MemoryBudget.forProcessSize("lots"))
                .hasMessageContaining("--memory")
                .hasMessageContaining("lots");
        assertThatThrownBy(() -> MemoryBudget.forProcessSize("512m"))
                .hasMessageContaining("at least 1g");
    }
}
