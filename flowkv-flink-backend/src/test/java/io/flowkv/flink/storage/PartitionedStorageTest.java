package io.flowkv.flink.storage;

import io.flowkv.core.Store;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PartitionedStorageTest {

    /** Instances opened and closed, by partition, and the threads that opened them. */
    private final Set<Integer> open = ConcurrentHashMap.newKeySet();

    private final Set<String> openers = ConcurrentHashMap.newKeySet();

    private Store store(int partition) {
        openers.add(Thread.currentThread().getName());
        open.add(partition);
        return (Store)
                Proxy.newProxyInstance(
                        Store.class.getClassLoader(),
                        new Class<?>[] {Store.class},
                        (proxy, method, args) -> {
                            if (method.getName().equals("close")) {
                                open.remove(partition);
                                return null;
                            }
                            if (method.getName().equals("toString")) {
                                return "store " + partition;
                            }
                            throw new UnsupportedOperationException(method.getName());
                        });
    }

    private static final class Storage extends PartitionedStorage<Store> {
        Storage() {
            super(Path.of("state-1"));
        }

        @Override
        public StorePattern pattern() {
            return StorePattern.AUR;
        }

        @Override
        public void remove(int keyGroup, byte[] key, byte[] namespace) {
            throw new UnsupportedOperationException();
        }

        List<Store> instances() {
            return Collections.unmodifiableList(instances);
        }
    }

    @Test
    void shouldOpenRestoredInstancesOnThreadsOfTheirOwnInPartitionOrder() throws IOException {
        Storage storage = new Storage();
        storage.openInstances(4, this::store, true);
        List<String> names = new ArrayList<>();
        storage.instances().forEach(s -> names.add(s.toString()));
        assertThat(names).containsExactly("store 0", "store 1", "store 2", "store 3");
        assertThat(openers).hasSize(4);
        storage.close();
        assertThat(open).isEmpty();
    }

    @Test
    void shouldOpenNewInstancesOnTheCallersThread() throws IOException {
        Storage storage = new Storage();
        storage.openInstances(3, this::store, false);
        assertThat(openers).containsExactly(Thread.currentThread().getName());
        storage.close();
    }

    @Test
    void shouldCloseEveryOpenedInstanceWhenOneFailsToOpen() {
        for (int failing = 0; failing < 3; failing++) {
            int bad = failing;
            Storage storage = new Storage();
            assertThatThrownBy(
                            () ->
                                    storage.openInstances(
                                            3,
                                            p -> {
                                                if (p == bad) {
                                                    throw new IOException("corrupt p" + p);
                                                }
                                                return store(p);
                                            },
                                            true))
                    .isInstanceOf(IOException.class)
                    .hasMessage("corrupt p" + bad);
            assertThat(open).as("instances left open when p%d failed", bad).isEmpty();
            assertThat(storage.instances()).isEmpty();
        }
    }
}
