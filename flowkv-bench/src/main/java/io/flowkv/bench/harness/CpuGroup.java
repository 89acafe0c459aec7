package io.flowkv.bench.harness;

import java.util.List;

/**
 * Where a JFR sample's thread was: the groups of Figure 10's CPU breakdown, and the rule that
 * assigns a stack to one of them.
 *
 * <p>The rule: walk the stack from its top (the executing frame) towards the thread's root and take
 * the group of the first frame whose class belongs to a group; a stack with no such frame is {@link
 * #OTHER}. So {@code HashMap.get} called by Flink's heap state map counts as the heap backend, and
 * a serializer called by a state backend counts as serialization, not as the backend.
 */
enum CpuGroup {
    FLOWKV("FlowKV", "io.flowkv.core.", "io.flowkv.flink."),
    ROCKSDB(
            "RocksDB/ForSt",
            "org.rocksdb.",
            "org.forstdb.",
            "org.apache.flink.state.rocksdb.",
            "org.apache.flink.state.forst.",
            "org.apache.flink.contrib.streaming.state."),
    HEAP("heap backend", "org.apache.flink.runtime.state.heap."),
    SERDE(
            "serialization",
            "org.apache.flink.api.common.typeutils.",
            "org.apache.flink.api.java.typeutils.runtime.",
            "org.apache.flink.core.memory.DataInputSerializer",
            "org.apache.flink.core.memory.DataOutputSerializer",
            "org.apache.flink.core.memory.DataInputDeserializer",
            "org.apache.flink.core.memory.DataInputView",
            "org.apache.flink.core.memory.DataOutputView",
            "io.flowkv.nexmark.EventSerializers"),
    OTHER("the rest");

    final String label;
    private final String[] prefixes;

    CpuGroup(String label, String... prefixes) {
        this.label = label;
        this.prefixes = prefixes;
    }

    /** The group of one class, {@link #OTHER} if none claims it. */
    static CpuGroup ofClass(String className) {
        for (CpuGroup g : values()) {
            for (String p : g.prefixes) {
                if (className.startsWith(p)) {
                    return g;
                }
            }
        }
        return OTHER;
    }

    /** The group of a stack given as class names, executing frame first. */
    static CpuGroup ofStack(List<String> classesTopFirst) {
        for (String c : classesTopFirst) {
            CpuGroup g = ofClass(c);
            if (g != OTHER) {
                return g;
            }
        }
        return OTHER;
    }

    /** The state backends' own groups: the "state access" share. */
    boolean isStateAccess() {
        return this == FLOWKV || this == ROCKSDB || this == HEAP;
    }
}
