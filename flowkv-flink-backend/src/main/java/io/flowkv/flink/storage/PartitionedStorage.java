package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.Store;
import io.flowkv.core.StoreStats;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A storage split over several store instances by key group, so that each instance flushes and
 * compacts its share on its own (FlowKV paper §3: m instances per operator). Callers pass the key
 * group of every key (they know it; the store key starts with it too); {@code keyGroup % instances}
 * picks the instance.
 */
abstract class PartitionedStorage<S extends Store> implements StateStorage {
    protected final List<S> instances = new ArrayList<>();
    private final Path directory;

    PartitionedStorage(Path directory) {
        this.directory = directory;
    }

    @Override
    public Path directory() {
        return directory;
    }

    /** The instance of a key group: {@code keyGroup % instances}. */
    protected S instanceFor(int keyGroup) {
        return instances.size() == 1
                ? instances.get(0)
                : instances.get(Math.floorMod(keyGroup, instances.size()));
    }

    /** Opens the store instance of one partition. */
    interface InstanceOpener<S> {
        S open(int partition) throws IOException;
    }

    /**
     * Opens {@code count} instances; on failure closes those already open. With {@code parallel} (a
     * restore, where each instance reads its manifest and rebuilds its tables), instances past the
     * first open on threads of their own: they share nothing but the thread-safe budget and file
     * I/O.
     */
    protected void openInstances(int count, InstanceOpener<S> opener, boolean parallel)
            throws IOException {
        if (!parallel || count == 1) {
            try {
                for (int i = 0; i < count; i++) {
                    instances.add(opener.open(i));
                }
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
            return;
        }
        List<CompletableFuture<S>> opening = new ArrayList<>(count);
        opening.add(null);
        for (int i = 1; i < count; i++) {
            int partition = i;
            CompletableFuture<S> future = new CompletableFuture<>();
            Thread t =
                    new Thread(
                            () -> {
                                try {
                                    future.complete(opener.open(partition));
                                } catch (Throwable e) {
                                    future.completeExceptionally(e);
                                }
                            },
                            "flowkv-restore-open-" + directory.getFileName() + "-p" + partition);
            t.setDaemon(true);
            t.start();
            opening.add(future);
        }
        Throwable failure = null;
        try {
            instances.add(opener.open(0));
        } catch (IOException | RuntimeException e) {
            failure = e;
        }
        for (int i = 1; i < count; i++) {
            try {
                S instance = opening.get(i).join();
                if (failure == null) {
                    instances.add(instance);
                } else {
                    instance.close();
                }
            } catch (CompletionException | IOException e) {
                Throwable cause = e instanceof CompletionException ? e.getCause() : e;
                if (failure == null) {
                    failure = cause;
                } else {
                    failure.addSuppressed(cause);
                }
            }
        }
        if (failure != null) {
            try {
                close();
            } catch (IOException | RuntimeException e) {
                failure.addSuppressed(e);
            }
            if (failure instanceof IOException io) {
                throw io;
            }
            if (failure instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (failure instanceof Error error) {
                throw error;
            }
            throw new IOException("Could not open a store instance: " + failure, failure);
        }
    }

    interface InstanceVisitor<S> {
        void visit(S instance) throws IOException;
    }

    protected void forEachInstance(InstanceVisitor<S> visitor) throws IOException {
        for (S instance : instances) {
            visitor.visit(instance);
        }
    }

    @Override
    public void flush() throws IOException {
        for (S instance : instances) {
            instance.flush();
        }
    }

    @Override
    public int parts() {
        return instances.size();
    }

    @Override
    public void flushPart(int part) throws IOException {
        instances.get(part).flush();
    }

    @Override
    public List<SealedStore> seal() throws IOException {
        List<SealedStore> sealed = new ArrayList<>(instances.size());
        for (S instance : instances) {
            sealed.add(instance.seal(false));
        }
        return sealed;
    }

    /** How many instances a restored storage has: one per sealed manifest, else {@code fresh}. */
    protected static int instanceCount(List<Path> manifests, int fresh) {
        return manifests == null ? fresh : manifests.size();
    }

    @Override
    public long memoryUsed() {
        long bytes = 0;
        for (S instance : instances) {
            bytes += instance.memoryUsed();
        }
        return bytes;
    }

    @Override
    public List<StoreStats> stats() {
        List<StoreStats> out = new ArrayList<>(instances.size());
        for (S instance : instances) {
            out.add(instance.stats());
        }
        return out;
    }

    @Override
    public void forEach(EntryVisitor visitor) throws IOException {
        for (S instance : instances) {
            instance.forEach(visitor);
        }
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        for (S instance : instances) {
            try {
                instance.close();
            } catch (IOException | RuntimeException e) {
                IOException io = e instanceof IOException ? (IOException) e : new IOException(e);
                if (first == null) {
                    first = io;
                } else {
                    first.addSuppressed(io);
                }
            }
        }
        instances.clear();
        if (first != null) {
            throw first;
        }
    }
}
