package io.flowkv.flink.state;

import io.flowkv.core.TestSeeds;
import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.TestBackends;
import io.flowkv.flink.storage.StoreSelector;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reducing, aggregating and value state, with the object cache small enough that values keep moving
 * between the cache and the store, against a model: random adds, reads, clears, namespace merges
 * (as session windows do), key iteration, and snapshots restored into a new backend (incremental
 * and full). The aggregate's accumulator is a {@code long[]} changed in place, so a cached object
 * that is shared where it must not be shows up as a wrong sum. The value state holds a {@code
 * long[]} too, which the test changes after {@code value()}, with the cache on sometimes without
 * {@code update}: as on Flink's heap backend, the change must stay. Also run with the cache off.
 * Prints its seed; replay with {@code -Dflowkv.seed=N}; fixed under CI.
 */
class FlowKVObjectCacheModelTest {
    private static final int KEY_GROUPS = 16;
    private static final int KEYS = 10;
    private static final int NAMESPACES = 6;
    private static final int OPERATIONS = 30_000;

    @TempDir Path temp;

    private final TestBackends backends = new TestBackends();
    private final SharedStateRegistry registry = new SharedStateRegistryImpl();

    @AfterEach
    void closeBackends() throws Exception {
        backends.close();
    }

    /** A sum whose accumulator is changed in place, as many aggregate functions do. */
    static final class InPlaceSum implements AggregateFunction<Long, long[], Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public long[] createAccumulator() {
            return new long[1];
        }

        @Override
        public long[] add(Long value, long[] accumulator) {
            accumulator[0] += value;
            return accumulator;
        }

        @Override
        public Long getResult(long[] accumulator) {
            return accumulator[0];
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            a[0] += b[0];
            return a;
        }
    }

    /** The two states under test, bound to one backend. */
    private static final class States {
        final InternalAggregatingState<Integer, Integer, Long, long[], Long> sums;
        final InternalReducingState<Integer, Integer, Long> reduced;
        final InternalValueState<Integer, Integer, long[]> values;

        /** Named as a session operator's merging window set, whose lists are cached whole. */
        final InternalListState<Integer, Integer, Long> lists;

        @SuppressWarnings("unchecked")
        States(FlowKVKeyedStateBackend<Integer> backend) throws Exception {
            sums =
                    (InternalAggregatingState<Integer, Integer, Long, long[], Long>)
                            backend.getOrCreateKeyedState(
                                    IntSerializer.INSTANCE,
                                    new AggregatingStateDescriptor<>(
                                            "sums",
                                            new InPlaceSum(),
                                            LongPrimitiveArraySerializer.INSTANCE));
            reduced =
                    (InternalReducingState<Integer, Integer, Long>)
                            backend.getOrCreateKeyedState(
                                    IntSerializer.INSTANCE,
                                    new ReducingStateDescriptor<>(
                                            "reduced", Long::sum, LongSerializer.INSTANCE));
            values =
                    (InternalValueState<Integer, Integer, long[]>)
                            backend.getOrCreateKeyedState(
                                    IntSerializer.INSTANCE,
                                    new ValueStateDescriptor<>(
                                            "values", LongPrimitiveArraySerializer.INSTANCE));
            lists =
                    (InternalListState<Integer, Integer, Long>)
                            backend.getOrCreateKeyedState(
                                    IntSerializer.INSTANCE,
                                    new ListStateDescriptor<>(
                                            StoreSelector.MERGING_WINDOW_SET,
                                            LongSerializer.INSTANCE));
        }

        void setNamespace(int namespace) {
            sums.setCurrentNamespace(namespace);
            reduced.setCurrentNamespace(namespace);
            values.setCurrentNamespace(namespace);
            lists.setCurrentNamespace(namespace);
        }
    }

    /** 1 KiB: about 9 entries of these sizes (64 B + twice 21 serialized bytes each). */
    @ParameterizedTest(name = "cache of {0} bytes")
    @ValueSource(longs = {1024, 0})
    void shouldMatchTheModelUnderRandomOperations(long cacheBytes) throws Exception {
        long seed = TestSeeds.base(20261127L);
        String at = "cache " + cacheBytes + ", seed " + seed + " (-Dflowkv.seed=" + seed + ")";
        System.out.println("FlowKVObjectCacheModelTest " + at);
        SplittableRandom random = new SplittableRandom(seed);

        Map<List<Integer>, Long> model = new HashMap<>(); // (key, namespace) -> sum
        Map<List<Integer>, List<Long>> listModel = new HashMap<>();
        Map<List<Integer>, Long> valueModel = new HashMap<>(); // value state: never merged
        FlowKVKeyedStateBackend<Integer> backend =
                backend(cacheBytes, random.nextBoolean(), List.of());
        States states = new States(backend);
        int restores = 0;
        boolean evicted = false;
        for (int op = 0; op < OPERATIONS; op++) {
            int key = random.nextInt(KEYS);
            int namespace = random.nextInt(NAMESPACES);
            backend.setCurrentKey(key);
            states.setNamespace(namespace);
            List<Integer> cell = List.of(key, namespace);
            String where = at + ", operation " + op + ", key " + key + ", namespace " + namespace;
            int dice = random.nextInt(1000);
            if (dice < 500) {
                long value = random.nextInt(100);
                states.sums.add(value);
                states.reduced.add(value);
                model.merge(cell, value, Long::sum);
                long[] held = states.values.value();
                if (held == null) {
                    states.values.update(new long[] {value});
                } else {
                    held[0] += value;
                    if (cacheBytes == 0 || random.nextBoolean()) {
                        states.values.update(held);
                    }
                }
                valueModel.merge(cell, value, Long::sum);
                if (random.nextInt(4) == 0) {
                    states.lists.add(value); // on the stored elements: the cached list goes first
                    listModel.computeIfAbsent(cell, c -> new ArrayList<>()).add(value);
                } else {
                    List<Long> list = new ArrayList<>();
                    for (int i = random.nextInt(4); i > 0; i--) {
                        list.add((long) random.nextInt(1000));
                    }
                    states.lists.update(list);
                    if (list.isEmpty()) {
                        listModel.remove(cell);
                    } else {
                        listModel.put(cell, list);
                    }
                }
            } else if (dice < 750) {
                assertThat(states.sums.get()).as(where + " sums").isEqualTo(model.get(cell));
                assertThat(states.reduced.get()).as(where + " reduced").isEqualTo(model.get(cell));
                assertThat(first(states.values.value()))
                        .as(where + " value")
                        .isEqualTo(valueModel.get(cell));
                assertThat(sorted(states.lists.get()))
                        .as(where + " list")
                        .isEqualTo(sorted(listModel.get(cell)));
            } else if (dice < 850) {
                states.sums.clear();
                states.reduced.clear();
                states.lists.clear();
                states.values.clear();
                valueModel.remove(cell);
                model.remove(cell);
                listModel.remove(cell);
            } else if (dice < 950) {
                List<Integer> sources = new ArrayList<>();
                for (int n = 0; n < NAMESPACES; n++) {
                    if (n != namespace && random.nextInt(3) == 0) {
                        sources.add(n);
                    }
                }
                states.sums.mergeNamespaces(namespace, sources);
                states.reduced.mergeNamespaces(namespace, sources);
                states.lists.mergeNamespaces(namespace, sources);
                for (int source : sources) {
                    List<Long> moved = listModel.remove(List.of(key, source));
                    if (moved != null) {
                        listModel.computeIfAbsent(cell, c -> new ArrayList<>()).addAll(moved);
                    }
                }
                Long merged = null;
                for (int source : sources) {
                    Long value = model.remove(List.of(key, source));
                    if (value != null) {
                        merged = merged == null ? value : merged + value;
                    }
                }
                if (merged != null) {
                    model.merge(cell, merged, Long::sum);
                }
            } else if (dice < 995) {
                Set<Integer> expected =
                        model.keySet().stream()
                                .filter(c -> c.get(1) == namespace)
                                .map(c -> c.get(0))
                                .collect(Collectors.toSet());
                for (String name : List.of("sums", "reduced")) {
                    assertThat(new HashSet<>(backend.getKeys(name, namespace).toList()))
                            .as(where + " keys of " + name)
                            .isEqualTo(expected);
                }
                assertThat(new HashSet<>(backend.getKeys("values", namespace).toList()))
                        .as(where + " keys of values")
                        .isEqualTo(
                                valueModel.keySet().stream()
                                        .filter(c -> c.get(1) == namespace)
                                        .map(c -> c.get(0))
                                        .collect(Collectors.toSet()));
            } else {
                evicted |= evictions(states) > 0;
                restores++;
                KeyedStateHandle handle = snapshot(backend, restores);
                backend = backend(cacheBytes, random.nextBoolean(), List.of(handle));
                states = new States(backend);
                for (int k = 0; k < KEYS; k++) {
                    backend.setCurrentKey(k);
                    for (int n = 0; n < NAMESPACES; n++) {
                        states.setNamespace(n);
                        Long expected = model.get(List.of(k, n));
                        String cellAt = at + " after restore " + restores + " at " + k + "/" + n;
                        assertThat(states.sums.get()).as(cellAt).isEqualTo(expected);
                        assertThat(states.reduced.get()).as(cellAt).isEqualTo(expected);
                        assertThat(first(states.values.value()))
                                .as(cellAt + " value")
                                .isEqualTo(valueModel.get(List.of(k, n)));
                        assertThat(sorted(states.lists.get()))
                                .as(cellAt + " list")
                                .isEqualTo(sorted(listModel.get(List.of(k, n))));
                    }
                }
            }
        }
        evicted |= evictions(states) > 0;
        if (cacheBytes > 0) {
            assertThat(((AbstractFlowKVState<?, ?, ?>) states.lists).cacheStats())
                    .as(at + ": the merging window set is cached")
                    .isNotNull();
            assertThat(((AbstractFlowKVState<?, ?, ?>) states.values).cacheStats())
                    .as(at + ": the value state is cached")
                    .isNotNull();
        }
        assertThat(restores).as(at + " restores").isPositive();
        if (cacheBytes > 0) {
            assertThat(evicted).as(at + ": values moved between cache and store").isTrue();
        } else {
            assertThat(((AbstractFlowKVState<?, ?, ?>) states.sums).cacheStats()).isNull();
        }
    }

    /**
     * A value state hands its object to the job: one of a mutable type counts as changed from then
     * on (the job may change it without {@code update}, as on the heap backend) and is written back
     * again; one of an immutable type is not.
     */
    @org.junit.jupiter.api.Test
    @SuppressWarnings("unchecked")
    void shouldWriteBackAValueHandedOutOnlyIfItsTypeIsMutable() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(1 << 20, true, List.of());
        InternalValueState<Integer, VoidNamespace, Long> longs =
                (InternalValueState<Integer, VoidNamespace, Long>)
                        backend.getOrCreateKeyedState(
                                VoidNamespaceSerializer.INSTANCE,
                                new ValueStateDescriptor<>("longs", LongSerializer.INSTANCE));
        InternalValueState<Integer, VoidNamespace, long[]> arrays =
                (InternalValueState<Integer, VoidNamespace, long[]>)
                        backend.getOrCreateKeyedState(
                                VoidNamespaceSerializer.INSTANCE,
                                new ValueStateDescriptor<>(
                                        "arrays", LongPrimitiveArraySerializer.INSTANCE));
        longs.setCurrentNamespace(VoidNamespace.INSTANCE);
        arrays.setCurrentNamespace(VoidNamespace.INSTANCE);
        AbstractFlowKVState<?, ?, ?> cachedLongs = (AbstractFlowKVState<?, ?, ?>) longs;
        AbstractFlowKVState<?, ?, ?> cachedArrays = (AbstractFlowKVState<?, ?, ?>) arrays;
        for (int key = 0; key < 100; key++) {
            backend.setCurrentKey(key);
            longs.update((long) key);
            arrays.update(new long[] {key});
        }
        cachedLongs.writeBackCached();
        cachedArrays.writeBackCached();
        assertThat(cachedLongs.cacheCounters().writes()).isEqualTo(100);
        assertThat(cachedArrays.cacheCounters().writes()).isEqualTo(100);

        for (int key = 0; key < 100; key++) {
            backend.setCurrentKey(key);
            assertThat(longs.value()).isEqualTo(key);
            arrays.value()[0] += 1000; // no update: the heap backend keeps this, so does the cache
        }
        cachedLongs.writeBackCached();
        cachedArrays.writeBackCached();
        assertThat(cachedLongs.cacheCounters().writes()).as("immutable, only read").isEqualTo(100);
        assertThat(cachedArrays.cacheCounters().writes()).as("handed out").isEqualTo(200);
        assertThat(cachedArrays.cacheCounters().misses())
                .as("only the first updates")
                .isEqualTo(100);

        KeyedStateHandle handle = snapshot(backend, 1);
        FlowKVKeyedStateBackend<Integer> restored = backend(0, true, List.of(handle));
        InternalValueState<Integer, VoidNamespace, long[]> restoredArrays =
                (InternalValueState<Integer, VoidNamespace, long[]>)
                        restored.getOrCreateKeyedState(
                                VoidNamespaceSerializer.INSTANCE,
                                new ValueStateDescriptor<>(
                                        "arrays", LongPrimitiveArraySerializer.INSTANCE));
        restoredArrays.setCurrentNamespace(VoidNamespace.INSTANCE);
        for (int key = 0; key < 100; key++) {
            restored.setCurrentKey(key);
            assertThat(restoredArrays.value()).containsExactly(key + 1000L);
        }
    }

    /**
     * A cached merging window set is a copy: the list handed to {@code update} stays the caller's,
     * the list {@code get} returns cannot be changed, and a null element is refused at once.
     */
    @Test
    void shouldCacheACopyOfTheListThatNoOneCanChange() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(1 << 20, true, List.of());
        States states = new States(backend);
        backend.setCurrentKey(7);
        states.setNamespace(1);
        for (int length = 1; length <= 4; length++) {
            List<Long> given = new ArrayList<>();
            for (long i = 0; i < length; i++) {
                given.add(10 * length + i);
            }
            List<Long> expected = List.copyOf(given);
            states.lists.update(given);
            given.set(0, -1L);
            given.add(-2L);
            Iterable<Long> got = states.lists.get();
            assertThat(got).as("length " + length).containsExactlyElementsOf(expected);
            assertThatThrownBy(() -> ((List<Long>) got).add(0L))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> ((List<Long>) got).set(0, 0L))
                    .isInstanceOf(UnsupportedOperationException.class);
        }
        List<Long> withNull = new ArrayList<>();
        withNull.add(1L);
        withNull.add(null);
        assertThatThrownBy(() -> states.lists.update(withNull))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("null to a ListState");
        assertThat(states.lists.get()).containsExactly(40L, 41L, 42L, 43L);

        // Written back and read again after a restore: cached again, still unmodifiable.
        KeyedStateHandle handle = snapshot(backend, 1);
        FlowKVKeyedStateBackend<Integer> restored = backend(1 << 20, true, List.of(handle));
        States again = new States(restored);
        restored.setCurrentKey(7);
        again.setNamespace(1);
        Iterable<Long> reread = again.lists.get();
        assertThat(reread).containsExactly(40L, 41L, 42L, 43L);
        assertThatThrownBy(() -> ((List<Long>) reread).remove(0))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(again.lists.get()).as("a hit").isSameAs(reread);
    }

    /**
     * A merging window set known to be empty is answered from the cache: a key's first read that
     * finds nothing, and the set a fired session leaves empty when the store holds none. A set the
     * store holds is removed there when emptied, so a restore does not bring the session back.
     */
    @Test
    void shouldAnswerAnEmptyMergingWindowSetFromTheCache() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(1 << 20, true, List.of());
        States states = new States(backend);
        AbstractFlowKVState<?, ?, ?> cached = (AbstractFlowKVState<?, ?, ?>) states.lists;
        backend.setCurrentKey(3);
        states.setNamespace(0);
        assertThat(states.lists.get()).isNull();
        assertThat(states.lists.get()).isNull();
        assertThat(cached.cacheCounters().misses()).as("one store read").isEqualTo(1);
        assertThat(cached.cacheCounters().hits()).isEqualTo(1);

        states.lists.update(List.of(5L, 6L));
        states.lists.update(List.of()); // the session fired
        assertThat(states.lists.get()).isNull();
        assertThat(cached.cacheCounters().misses()).as("no store read").isEqualTo(1);

        states.lists.update(List.of(7L));
        snapshot(backend, 1); // writes the list to the store
        states.lists.update(List.of()); // fired again: the stored list goes
        assertThat(states.lists.get()).isNull();
        backend.setCurrentKey(4);
        states.lists.update(List.of()); // not cached: the store may hold a list
        states.lists.update(List.of(8L));
        states.lists.update(List.of());

        KeyedStateHandle handle = snapshot(backend, 2);
        FlowKVKeyedStateBackend<Integer> restored = backend(1 << 20, true, List.of(handle));
        States again = new States(restored);
        for (int key : new int[] {3, 4}) {
            restored.setCurrentKey(key);
            again.setNamespace(0);
            assertThat(again.lists.get()).as("key " + key + " after restore").isNull();
        }
    }

    /**
     * Queryable state reads a cached merging window set as the list it holds, and a set known to be
     * empty as no value, like a key the state never saw.
     */
    @Test
    void shouldServeCachedMergingWindowSetsToQueryableState() throws Exception {
        FlowKVKeyedStateBackend<Integer> backend = backend(1 << 20, true, List.of());
        States states = new States(backend);
        backend.setCurrentKey(1);
        states.setNamespace(0);
        states.lists.update(List.of(10L, 11L));
        backend.setCurrentKey(2);
        assertThat(states.lists.get()).isNull(); // cached as known to be empty
        states.lists.update(List.of(20L));
        states.lists.update(List.of()); // its session fired

        assertThat(queried(states, 1)).containsExactly(10L, 11L);
        assertThat(queried(states, 2)).isNull();
        assertThat(queried(states, 3)).as("a key never seen").isNull();
    }

    private static List<Long> queried(States states, int key) throws Exception {
        byte[] keyAndNamespace =
                KvStateSerializer.serializeKeyAndNamespace(
                        key, IntSerializer.INSTANCE, 0, IntSerializer.INSTANCE);
        byte[] value =
                states.lists.getSerializedValue(
                        keyAndNamespace,
                        IntSerializer.INSTANCE,
                        IntSerializer.INSTANCE,
                        new ListSerializer<>(LongSerializer.INSTANCE));
        return value == null
                ? null
                : KvStateSerializer.deserializeList(value, LongSerializer.INSTANCE);
    }

    /** The one element of a value state's array, or null for none. */
    private static Long first(long[] value) {
        return value == null ? null : value[0];
    }

    /** The elements in order, or null for no list (a list state's merge does not keep order). */
    private static List<Long> sorted(Iterable<Long> elements) {
        if (elements == null) {
            return null;
        }
        List<Long> out = new ArrayList<>();
        elements.forEach(out::add);
        out.sort(null);
        return out;
    }

    /** The evictions the aggregating state's cache counted, or 0 without a cache. */
    private static long evictions(States states) {
        String stats = ((AbstractFlowKVState<?, ?, ?>) states.sums).cacheStats();
        if (stats == null) {
            return 0;
        }
        String count = stats.replaceAll(".*evictions=(\\d+).*", "$1");
        return Long.parseLong(count);
    }

    private FlowKVKeyedStateBackend<Integer> backend(
            long cacheBytes, boolean incremental, List<KeyedStateHandle> handles) throws Exception {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, incremental);
        config.set(FlowKVOptions.OBJECT_CACHE_SIZE, new MemorySize(cacheBytes));
        return backends.create(
                "object-cache-model",
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
