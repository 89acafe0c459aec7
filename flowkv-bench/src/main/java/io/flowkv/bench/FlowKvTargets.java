package io.flowkv.bench;

import java.io.IOException;

/** The FlowKV store of each pattern. */
final class FlowKvTargets {
    private FlowKvTargets() {}

    static StoreUnderTest open(Pattern pattern, TargetConfig config) throws IOException {
        return switch (pattern) {
            case RMW -> new FlowKvRmwTarget(config);
            case AUR -> new FlowKvAurTarget(config);
            case AAR -> new FlowKvAarTarget(config);
        };
    }
}
