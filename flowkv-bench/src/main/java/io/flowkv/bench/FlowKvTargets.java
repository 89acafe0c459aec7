package io.flowkv.bench;

/** The FlowKV store of each pattern; the stores are not in this build yet. */
final class FlowKvTargets {
    static final boolean AVAILABLE = false;

    private FlowKvTargets() {}

    static StoreUnderTest open(Pattern pattern, TargetConfig config) {
        throw new UnsupportedOperationException(
                "the FlowKV " + pattern.id() + " store is not in this build yet");
    }
}
