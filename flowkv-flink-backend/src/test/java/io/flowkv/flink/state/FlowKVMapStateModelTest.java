package io.flowkv.flink.state;

import io.flowkv.core.TestSeeds;
import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.FlowKVStateBackend;
import io.flowkv.flink.TestBackends;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Map state per entry against a {@code HashMap} model: random puts (null values included), removes,
 * point reads, full iterations that remove as they go, clears, and snapshots restored into a new
 * backend (incremental and canonical), with an index cache of 16 pages so that the records' index
 * lives mostly on disk. Prints its seed; replay with {@code -Dflowkv.seed=N}; fixed under CI.
 */
class FlowKVMapStateModelTest {
    private static final int KEY_GROUPS = 32;
    private static final int KEYS = 6;
    private static final int OPERATIONS = 40_000;

    @TempDir Path temp;

    private final List<FlowKVKeyedStateBackend<Integer>> open = new ArrayList<>();
    private final List<MockEnvironment> environments = new ArrayList<>();

    /** Resolves the placeholders of incremental checkpoints, as the checkpoint coordinator does. */
    private final SharedStateRegistry registry = new SharedStateRegistryImpl();

    @AfterEach
    void closeBackends() throws Exception {
        for (FlowKVKeyedStateBackend<Integer> backend : open) {
            backend.dispose();
        }
        for (MockEnvironment env : environments) {
            env.close();
        }
    }

    /**
     * 2,500 user keys: maps soon outgrow the inline layout and live in chunks. 40: maps move
     * between the layouts, inline while at most 32 entries, chunked from the 33rd until a clear.
     */
    @ParameterizedTest(name = "{0} user keys")
    @ValueSource(ints = {2_500, 40})
    void shouldMatchHashMapModelUnderRandomOperations(int userKeys) throws Exception {
        long seed = TestSeeds.base(20261124L);
        String at =
                userKeys + " user keys, seed " + seed + " (replay with -Dflowkv.seed=" + seed + ")";
        System.out.println("FlowKVMapStateModelTest " + at);
        SplittableRandom random = new SplittableRandom(seed);

        List<Map<Integer, String>> model = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            model.add(new HashMap<>());
        }
        boolean incremental = random.nextBoolean();
        FlowKVKeyedStateBackend<Integer> backend = backend(incremental, List.of());
        MapState<Integer, String> state = state(backend);
        int restores = 0;
        for (int op = 0; op < OPERATIONS; op++) {
            int k = random.nextInt(KEYS);
            backend.setCurrentKey(k);
            Map<Integer, String> m = model.get(k);
            int userKey = random.nextInt(userKeys);
            String where = at + ", operation " + op + ", key " + k + ", user key " + userKey;
            int dice = random.nextInt(1000);
            if (dice < 450) {
                String value = random.nextInt(20) == 0 ? null : "v" + op;
                state.put(userKey, value);
                m.put(userKey, value);
            } else if (dice < 650) {
                state.remove(userKey);
                m.remove(userKey);
            } else if (dice < 850) {
                assertThat(state.get(userKey)).as(where + " get").isEqualTo(m.get(userKey));
                assertThat(state.contains(userKey))
                        .as(where + " contains")
                        .isEqualTo(m.containsKey(userKey));
            } else if (dice < 870) {
                assertThat(state.isEmpty()).as(where + " isEmpty").isEqualTo(m.isEmpty());
            } else if (dice < 880) {
                Map<Integer, String> batch = new HashMap<>();
                for (int i = 0; i < 50; i++) {
                    batch.put(random.nextInt(userKeys), "b" + op + "-" + i);
                }
                state.putAll(batch);
                m.putAll(batch);
            } else if (dice < 890) {
                iterateRemovingSome(state, m, random, where);
            } else if (dice < 892) {
                state.clear();
                m.clear();
            } else if (dice < 893) {
                restores++;
                KeyedStateHandle handle = snapshot(backend, restores);
                incremental = random.nextBoolean();
                backend = backend(incremental, List.of(handle));
                state = state(backend);
                for (int key = 0; key < KEYS; key++) {
                    backend.setCurrentKey(key);
                    assertThat(entries(state))
                            .as(at + " after restore " + restores + ", key " + key)
                            .isEqualTo(model.get(key));
                }
            }
        }
        for (int key = 0; key < KEYS; key++) {
            backend.setCurrentKey(key);
            assertThat(entries(state)).as(at + " at the end, key " + key).isEqualTo(model.get(key));
        }
        assertThat(restores).as(at + " restores").isPositive();
    }

    /** Iterates the whole map, checking it against the model and removing about a tenth. */
    private static void iterateRemovingSome(
            MapState<Integer, String> state,
            Map<Integer, String> m,
            SplittableRandom random,
            String where)
            throws Exception {
        Map<Integer, String> seen = new HashMap<>();
        Iterator<Map.Entry<Integer, String>> it = state.iterator();
        while (it.hasNext()) {
            Map.Entry<Integer, String> e = it.next();
            assertThat(seen.containsKey(e.getKey())).as(where + " visited twice").isFalse();
            seen.put(e.getKey(), e.getValue());
            if (random.nextInt(10) == 0) {
                it.remove();
                m.remove(e.getKey());
            } else if (random.nextInt(20) == 0) {
                e.setValue("set-" + e.getKey());
                m.put(e.getKey(), "set-" + e.getKey());
            }
        }
        assertThat(seen.keySet()).as(where + " iteration").isEqualTo(withRemoved(m, seen));
    }

    /** The model's keys before this iteration removed some: what the iteration had to visit. */
    private static java.util.Set<Integer> withRemoved(
            Map<Integer, String> m, Map<Integer, ?> seen) {
        java.util.Set<Integer> keys = new java.util.HashSet<>(m.keySet());
        keys.addAll(seen.keySet());
        return keys;
    }

    private static Map<Integer, String> entries(MapState<Integer, String> state) throws Exception {
        Map<Integer, String> out = new HashMap<>();
        for (Map.Entry<Integer, String> e : state.entries()) {
            assertThat(out.containsKey(e.getKey())).as("entry visited twice").isFalse();
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }

    private static MapState<Integer, String> state(FlowKVKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE));
    }

    @SuppressWarnings("unchecked")
    private FlowKVKeyedStateBackend<Integer> backend(
            boolean incremental, List<KeyedStateHandle> handles) throws Exception {
        MockEnvironment env = MockEnvironment.builder().build();
        environments.add(env);
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        config.set(FlowKVOptions.INDEX_CACHE_SIZE, MemorySize.parse("65664b"));
        FlowKVStateBackend stateBackend =
                new FlowKVStateBackend().configure(config, getClass().getClassLoader());
        FlowKVKeyedStateBackend<Integer> backend =
                (FlowKVKeyedStateBackend<Integer>)
                        stateBackend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        (Environment) env,
                                        new JobID(),
                                        "map-model",
                                        IntSerializer.INSTANCE,
                                        KEY_GROUPS,
                                        KeyGroupRange.of(0, KEY_GROUPS - 1),
                                        env.getTaskKvStateRegistry(),
                                        TtlTimeProvider.DEFAULT,
                                        new UnregisteredMetricsGroup(),
                                        handles,
                                        new CloseableRegistry()));
        open.add(backend);
        return backend;
    }

    private KeyedStateHandle snapshot(FlowKVKeyedStateBackend<Integer> backend, long id)
            throws Exception {
        return TestBackends.checkpoint(backend, id, temp, registry);
    }
}
