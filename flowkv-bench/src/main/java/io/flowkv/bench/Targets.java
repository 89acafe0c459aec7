package io.flowkv.bench;

import java.io.IOException;

/** Opens a fresh target of a backend for a pattern. */
public final class Targets {
    private Targets() {}

    public static StoreUnderTest open(Backend backend, Pattern pattern, TargetConfig config)
            throws IOException {
        return switch (backend) {
            case HEAP -> new HeapTarget();
            case ROCKSDB -> new RocksDbTarget(config);
            case FLOWKV -> FlowKvTargets.open(pattern, config);
        };
    }
}
