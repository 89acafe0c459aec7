package io.flowkv.flink.state;

import io.flowkv.core.TestSeeds;
import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.TestBackends;
import io.flowkv.flink.storage.StoreSelector;

import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.internal.InternalMapState;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Map state with small maps cached (the state of Flink SQL's session windows, by its name), with
 * the object cache small enough that small maps keep moving between the cache and the store,
 * against a model: puts, removes, gets, iteration with {@code remove} and {@code setValue}, clears,
 * maps that outgrow the cached bound (and go to the store for good), key iteration, and snapshots
 * restored into a new backend (incremental and full). Also run with the cache off. Prints its seed;
 * replay with {@code -Dflowkv.seed=N}; fixed under CI.
 */
class FlowKVMapCacheModelTest {
    private static final int KEY_GROUPS = 16;
    private static final int KEYS = 12;
    private static final int NAMESPACES = 4;
    private static final int OPERATIONS = 30_000;

    @TempDir Path temp;

    private final TestBackends backends = new TestBackends();
    private final SharedStateRegistry registry = new SharedStateRegistryImpl();

    @AfterEach
    void closeBackends() throws Exception {
        backends.close();
    }

    /** 2 KiB: a few small maps at a time. */
    @ParameterizedTest(name = "cache of {0} bytes")
    @ValueSource(longs = {2048, 0})
    void shouldMatchTheModelUnderRandomOperations(long cacheBytes) throws Exception {
        long seed = TestSeeds.base(20261128L);
        String at = "cache " + cacheBytes + ", seed " + seed + " (-Dflowkv.seed=" + seed + ")";
        System.out.println("FlowKVMapCacheModelTest " + at);
        SplittableRandom random = new SplittableRandom(seed);

        Map<List<Integer>, Map<Integer, Long>> model = new HashMap<>(); // (key, ns) -> map
        FlowKVKeyedStateBackend<Integer> backend =
                backend(cacheBytes, random.nextBoolean(), List.of());
        InternalMapState<Integer, Integer, Integer, Long> maps = maps(backend);
        int restores = 0;
        long grown = 0;
        long[] counted = new long[3];
        for (int op = 0; op < OPERATIONS; op++) {
            int key = random.nextInt(KEYS);
            int namespace = random.nextInt(NAMESPACES);
            backend.setCurrentKey(key);
            maps.setCurrentNamespace(namespace);
            List<Integer> cell = List.of(key, namespace);
            Map<Integer, Long> expected = model.computeIfAbsent(cell, c -> new HashMap<>());
            String where = at + ", operation " + op + ", key " + key + ", namespace " + namespace;
            int userKey = random.nextInt(6);
            int dice = random.nextInt(1000);
            if (dice < 350) {
                long value = random.nextInt(1000);
                maps.put(userKey, value);
                expected.put(userKey, value);
            } else if (dice < 550) {
                maps.remove(userKey);
                expected.remove(userKey);
            } else if (dice < 700) {
                assertThat(maps.get(userKey)).as(where + " get").isEqualTo(expected.get(userKey));
                assertThat(maps.contains(userKey))
                        .as(where + " contains")
                        .isEqualTo(expected.containsKey(userKey));
                assertThat(maps.isEmpty()).as(where + " isEmpty").isEqualTo(expected.isEmpty());
            } else if (dice < 800) {
                assertThat(contents(maps)).as(where + " entries").isEqualTo(expected);
            } else if (dice < 860) {
                // Through the iterator: drop odd values, add one to the others. Between steps
                // other maps are written, which may evict this one from the cache meanwhile.
                for (Iterator<Map.Entry<Integer, Long>> it = maps.iterator(); it.hasNext(); ) {
                    Map.Entry<Integer, Long> e = it.next();
                    if (random.nextInt(3) == 0) {
                        int otherKey = random.nextInt(KEYS);
                        int otherNamespace = random.nextInt(NAMESPACES);
                        backend.setCurrentKey(otherKey);
                        maps.setCurrentNamespace(otherNamespace);
                        long value = random.nextInt(1000);
                        maps.put(7, value);
                        model.computeIfAbsent(
                                        List.of(otherKey, otherNamespace), c -> new HashMap<>())
                                .put(7, value);
                    }
                    if (e.getValue() % 2 == 1) {
                        it.remove();
                        expected.remove(e.getKey());
                    } else {
                        e.setValue(e.getValue() + 1);
                        expected.put(e.getKey(), e.getValue());
                    }
                }
            } else if (dice < 900) {
                maps.clear();
                expected.clear();
            } else if (dice < 915) {
                // Past the bound a map is cached at (32 entries): it goes to the store.
                for (int k = 100; k < 100 + 30 + random.nextInt(10); k++) {
                    maps.put(k, (long) k);
                    expected.put(k, (long) k);
                }
                grown++;
            } else if (dice < 995) {
                Set<Integer> keys =
                        model.entrySet().stream()
                                .filter(e -> e.getKey().get(1) == namespace)
                                .filter(e -> !e.getValue().isEmpty())
                                .map(e -> e.getKey().get(0))
                                .collect(Collectors.toSet());
                assertThat(
                                new HashSet<>(
                                        backend.getKeys(
                                                        StoreSelector.SESSION_WINDOW_MAPPING,
                                                        namespace)
                                                .toList()))
                        .as(where + " keys")
                        .isEqualTo(keys);
            } else {
                restores++;
                KeyedStateHandle handle = snapshot(backend, restores);
                // A backend replaced late in the run may see no hit of its own: count them all.
                counted = add(counted, maps, cacheBytes);
                backend = backend(cacheBytes, random.nextBoolean(), List.of(handle));
                maps = maps(backend);
                for (int k = 0; k < KEYS; k++) {
                    backend.setCurrentKey(k);
                    for (int n = 0; n < NAMESPACES; n++) {
                        maps.setCurrentNamespace(n);
                        Map<Integer, Long> cellModel = model.getOrDefault(List.of(k, n), Map.of());
                        assertThat(contents(maps))
                                .as(at + " after restore " + restores + " at " + k + "/" + n)
                                .isEqualTo(cellModel);
                    }
                }
            }
        }
        assertThat(restores).as(at + " restores").isPositive();
        assertThat(grown).as(at + " maps grown past the bound").isPositive();
        AbstractFlowKVState<?, ?, ?> state = (AbstractFlowKVState<?, ?, ?>) maps;
        if (cacheBytes > 0) {
            counted = add(counted, maps, cacheBytes);
            assertThat(counted[0]).as(at + " hits, all backends").isPositive();
            assertThat(counted[1]).as(at + " evictions, all backends").isPositive();
            assertThat(counted[2]).as(at + " writes, all backends").isPositive();
        } else {
            assertThat(state.cacheStats()).isNull();
        }
        AbstractFlowKVState<?, ?, ?> other =
                (AbstractFlowKVState<?, ?, ?>)
                        backend.getOrCreateKeyedState(
                                IntSerializer.INSTANCE,
                                new MapStateDescriptor<>(
                                        "other", IntSerializer.INSTANCE, LongSerializer.INSTANCE));
        assertThat(other.cacheStats()).as(at + ": other map states are not cached").isNull();
    }

    /** {@code counted} (hits, evictions, writes) plus those of {@code maps}' cache. */
    private static long[] add(
            long[] counted,
            InternalMapState<Integer, Integer, Integer, Long> maps,
            long cacheBytes) {
        if (cacheBytes == 0) {
            return counted;
        }
        AbstractFlowKVState.CacheCounters c = ((AbstractFlowKVState<?, ?, ?>) maps).cacheCounters();
        return new long[] {
            counted[0] + c.hits(), counted[1] + c.evictions(), counted[2] + c.writes()
        };
    }

    private static Map<Integer, Long> contents(
            InternalMapState<Integer, Integer, Integer, Long> maps) throws Exception {
        Map<Integer, Long> out = new HashMap<>();
        for (Map.Entry<Integer, Long> e : maps.entries()) {
            assertThat(out.put(e.getKey(), e.getValue())).as("each key once").isNull();
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static InternalMapState<Integer, Integer, Integer, Long> maps(
            FlowKVKeyedStateBackend<Integer> backend) throws Exception {
        return (InternalMapState<Integer, Integer, Integer, Long>)
                backend.getOrCreateKeyedState(
                        IntSerializer.INSTANCE,
                        new MapStateDescriptor<>(
                                StoreSelector.SESSION_WINDOW_MAPPING,
                                IntSerializer.INSTANCE,
                                LongSerializer.INSTANCE));
    }

    private FlowKVKeyedStateBackend<Integer> backend(
            long cacheBytes, boolean incremental, List<KeyedStateHandle> handles) throws Exception {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        config.set(FlowKVOptions.OBJECT_CACHE_SIZE, new MemorySize(cacheBytes));
        return backends.create(
                "map-cache-model",
                KEY_GROUPS,
                KeyGroupRange.of(0, KEY_GROUPS - 1),
                handles,
                config);
    }

    private KeyedStateHandle snapshot(FlowKVKeyedStateBackend<Integer> backend, long id)
            throws Exception {
        return TestBackends.checkpoint(backend, id, temp, registry);
    }
}
