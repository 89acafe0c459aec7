package io.flowkv.bench;

import java.io.IOException;

/** The FlowKV store of each pattern, as far as it is in this build. */
final class FlowKvTargets {
    private FlowKvTargets() {}

    static boolean available(Pattern pattern) {
        return pattern != Pattern.AAR;
    }

    static StoreUnderTest open(Pattern pattern, TargetConfig config) throws IOException {
        return switch (pattern) {
            case RMW -> new FlowKvRmwTarget(config);
            case AUR -> new FlowKvAurTarget(config);
            case AAR ->
                    throw new UnsupportedOperationException(
                            "the FlowKV aar store is not in this build yet");
        };
    }
}
