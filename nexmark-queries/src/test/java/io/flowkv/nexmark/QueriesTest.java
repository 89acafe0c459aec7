package io.flowkv.nexmark;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every query on every backend (HashMap, RocksDB, FlowKV) at parallelism 1 and 2 must produce
 * exactly the records of the plain-Java {@link Reference}, compared through their count and
 * order-independent checksum. All jobs share one MiniCluster.
 */
class QueriesTest {

    /** 20 s of event time: 20 tumbling windows, 40 slides, many sessions per bidder. */
    static final GeneratorConfig GENERATOR = GeneratorConfig.of(20_000, 1_000);

    static final QueryParams PARAMS =
            new QueryParams(
                    Duration.ofSeconds(1),
                    Duration.ofMillis(500),
                    Duration.ofMillis(500),
                    Duration.ofMillis(10));

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final Map<Query, Fingerprint> EXPECTED = new EnumMap<>(Query.class);

    @BeforeAll
    static void computeReference() {
        EventGenerator generator = new EventGenerator(GENERATOR);
        List<Event> events = new ArrayList<>();
        for (long n = 0; n < GENERATOR.events(); n++) {
            events.add(generator.event(n));
        }
        for (Query q : Query.values()) {
            EXPECTED.put(q, Reference.fingerprint(Reference.compute(q, events, PARAMS)));
        }
    }

    static Stream<Arguments> runs() {
        List<Arguments> runs = new ArrayList<>();
        for (Query q : Query.values()) {
            for (String backend : List.of("hashmap", "rocksdb", "flowkv")) {
                for (int parallelism : new int[] {1, 2}) {
                    runs.add(Arguments.of(q, backend, parallelism));
                }
            }
        }
        return runs.stream();
    }

    @ParameterizedTest
    @EnumSource(Query.class)
    void shouldHaveNonTrivialReferenceOutput(Query query) {
        assertThat(EXPECTED.get(query).records()).isGreaterThan(10);
    }

    @ParameterizedTest(name = "{0} on {1}, parallelism {2}")
    @MethodSource("runs")
    void shouldMatchTheReferenceOnEveryBackend(Query query, String backend, int parallelism)
            throws Exception {
        assertThat(run(query, backend, parallelism))
                .as("%s on %s, parallelism %d", query.id(), backend, parallelism)
                .isEqualTo(EXPECTED.get(query));
    }

    static Fingerprint run(Query query, String backend, int parallelism) throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        Queries.buildJob(env, query, GENERATOR, 0, PARAMS);
        JobExecutionResult result = env.execute(query.id() + "-" + backend + "-p" + parallelism);
        Long records = result.getAccumulatorResult(Checksum.RECORDS);
        Long sum = result.getAccumulatorResult(Checksum.SUM);
        return new Fingerprint(records == null ? 0 : records, sum == null ? 0 : sum);
    }
}
