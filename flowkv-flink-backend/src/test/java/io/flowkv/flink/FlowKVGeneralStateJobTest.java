package io.flowkv.flink;

import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * General keyed state in whole jobs under a small managed-memory budget (64 MB, no restarts, so any
 * budget failure fails the test): a dedup over more keys than the RMW index cache holds, and map
 * state per key growing to thousands of entries with puts, removes and scans. Both must give
 * exactly what the HashMap backend gives.
 */
class FlowKVGeneralStateJobTest {
    private static final long DEDUP_RECORDS = 1_500_000;
    private static final long DEDUP_KEYS = 1_000_000;
    private static final long MAP_RECORDS = 60_000;
    private static final int MAP_KEYS = 16;

    @TempDir Path localDir;

    @Test
    void shouldDedupMoreKeysThanTheIndexCacheHolds() throws Exception {
        BitSet keys = new BitSet();
        for (long n = 0; n < DEDUP_RECORDS; n++) {
            keys.set((int) keyOf(n));
        }
        List<Long> flowKv = dedup(configuration("flowkv"));
        assertThat(flowKv).as("first sightings on flowkv").hasSize(keys.cardinality());
        assertThat(flowKv).isEqualTo(dedup(configuration("hashmap")));
    }

    @Test
    void shouldKeepLargeMapsPerKeyLikeHashMap() throws Exception {
        List<Long> flowKv = maps(configuration("flowkv"));
        assertThat(flowKv).as("scan results on flowkv").isNotEmpty();
        assertThat(flowKv).isEqualTo(maps(configuration("hashmap")));
    }

    private Configuration configuration(String backend) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("64m"));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        // A small index cache, so that most of the dedup index lives in page files.
        conf.set(FlowKVOptions.INDEX_CACHE_SIZE, MemorySize.parse("2mb"));
        return conf;
    }

    private static List<Long> dedup(Configuration conf) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
        env.setParallelism(1);
        return sorted(
                env.fromSequence(0, DEDUP_RECORDS - 1)
                        .keyBy(FlowKVGeneralStateJobTest::keyOf, Types.LONG)
                        .process(new FirstSeen(), Types.LONG)
                        .executeAndCollect());
    }

    private static long keyOf(long n) {
        return (n * 0x9E3779B97F4A7C15L >>> 1) % DEDUP_KEYS;
    }

    private static List<Long> maps(Configuration conf) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
        env.setParallelism(1);
        return sorted(
                env.fromSequence(0, MAP_RECORDS - 1)
                        .keyBy(n -> n % MAP_KEYS, Types.LONG)
                        .process(new GrowingMap(), Types.LONG)
                        .executeAndCollect());
    }

    private static List<Long> sorted(CloseableIterator<Long> results) throws Exception {
        List<Long> out = new ArrayList<>();
        try (results) {
            results.forEachRemaining(out::add);
        }
        Collections.sort(out);
        return out;
    }

    /** Emits a key the first time it is seen. */
    static final class FirstSeen extends KeyedProcessFunction<Long, Long, Long> {
        private static final long serialVersionUID = 1L;
        private transient ValueState<Long> seen;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.LONG));
        }

        @Override
        public void processElement(Long n, Context ctx, Collector<Long> out) throws Exception {
            if (seen.value() == null) {
                seen.update(n);
                out.collect(ctx.getCurrentKey());
            }
        }
    }

    /**
     * Puts every record into its key's map, removes an older entry every third record, checks a
     * point read, and every 512 records scans the map (values and keys) and emits a digest.
     */
    static final class GrowingMap extends KeyedProcessFunction<Long, Long, Long> {
        private static final long serialVersionUID = 1L;
        private transient MapState<Long, Long> map;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext context) {
            map =
                    getRuntimeContext()
                            .getMapState(new MapStateDescriptor<>("map", Types.LONG, Types.LONG));
        }

        @Override
        public void processElement(Long n, Context ctx, Collector<Long> out) throws Exception {
            map.put(n, n * 3);
            if (n % 3 == 0) {
                map.remove(n - 5 * MAP_KEYS);
            }
            Long back = map.get(n);
            if (back == null || back != n * 3) {
                throw new IllegalStateException("map lost " + n + ": " + back);
            }
            if (n % 512 < MAP_KEYS) {
                long digest = 0;
                long entries = 0;
                for (Long v : map.values()) {
                    digest += v * 31 + 7;
                    entries++;
                }
                for (Long k : map.keys()) {
                    digest ^= k;
                }
                out.collect(digest * 1_000_003 + entries);
            }
        }
    }
}
