package io.flowkv.bench;

import io.flowkv.core.memory.MemoryBudget;

import java.io.IOException;

/** The FlowKV store of each pattern. */
final class FlowKvTargets {
    private FlowKvTargets() {}

    /** Closes a FlowKV store and fails if it left any of its budget reserved. */
    static void closeWithoutLeaks(AutoCloseable store, MemoryBudget budget, Pattern pattern)
            throws IOException {
        try {
            store.close();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
        if (budget.used() != 0) {
            throw new IllegalStateException(pattern + " store leaked " + budget);
        }
    }

    static StoreUnderTest open(Pattern pattern, TargetConfig config) throws IOException {
        return switch (pattern) {
            case RMW -> new FlowKvRmwTarget(config);
            case AUR -> new FlowKvAurTarget(config);
            case AAR -> new FlowKvAarTarget(config);
        };
    }
}
