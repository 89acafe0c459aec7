package io.flowkv.bench;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every target must read back exactly what the heap map reads for the same trace: otherwise the
 * benchmark would compare different work.
 */
class TargetEquivalenceTest {
    /** Far below the tiny traces' data, so the disk-backed targets flush and read back. */
    private static final long BUDGET = 512L << 10;

    @TempDir Path dir;

    @ParameterizedTest
    @EnumSource(Pattern.class)
    void shouldReadTheSameBytesOnEveryTarget(Pattern pattern) throws IOException {
        Trace trace =
                TraceGenerator.generate(TraceSpec.of(pattern, "tiny", TraceSpec.DEFAULT_SEED));
        TraceRunner runner = new TraceRunner();
        Map<Backend, TraceRunner.Result> results = new EnumMap<>(Backend.class);
        for (Backend backend : Backend.values()) {
            TargetConfig config =
                    new TargetConfig(dir.resolve(backend.id()), BUDGET, Double.NaN, Double.NaN);
            try (Target target = Target.open(backend, pattern, config)) {
                results.put(backend, runner.run(trace, target));
            }
        }

        TraceRunner.Result heap = results.get(Backend.HEAP);
        assertThat(heap.valuesRead()).as("values read by the heap target").isPositive();
        for (Map.Entry<Backend, TraceRunner.Result> e : results.entrySet()) {
            assertThat(e.getValue().checksum())
                    .as("checksum of %s on %s vs heap", pattern, e.getKey())
                    .isEqualTo(heap.checksum());
            assertThat(e.getValue().valuesRead())
                    .as("values read by %s on %s", e.getKey(), pattern)
                    .isEqualTo(heap.valuesRead());
        }
    }

    @ParameterizedTest
    @EnumSource(Pattern.class)
    void shouldGenerateTheSameTraceForTheSameSeed(Pattern pattern) {
        TraceSpec spec = TraceSpec.of(pattern, "tiny", 42);
        Trace a = TraceGenerator.generate(spec);
        Trace b = TraceGenerator.generate(spec);

        assertThat(a.ops).isEqualTo(b.ops);
        assertThat(a.keys).isEqualTo(b.keys);
        assertThat(a.windows).isEqualTo(b.windows);
        assertThat(a.times).isEqualTo(b.times);
    }

    @ParameterizedTest
    @EnumSource(Pattern.class)
    void shouldReadAndRemoveEveryWindowItWrote(Pattern pattern) {
        Trace trace = TraceGenerator.generate(TraceSpec.of(pattern, "tiny", 7));
        Set<String> live = new HashSet<>();
        for (int i = 0; i < trace.size; i++) {
            String id = trace.keys[i] + "@" + trace.windows[i];
            switch (trace.ops[i]) {
                case Trace.APPEND, Trace.UPDATE -> live.add(id);
                case Trace.GET_LIST, Trace.GET_VALUE ->
                        assertThat(live).as("read of %s at op %d", id, i).contains(id);
                case Trace.REMOVE -> assertThat(live.remove(id)).as("remove of %s", id).isTrue();
                default -> {}
            }
        }
        assertThat(live).as("windows never fired").isEmpty();
    }
}
