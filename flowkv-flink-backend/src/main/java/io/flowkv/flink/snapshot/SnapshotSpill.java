package io.flowkv.flink.snapshot;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameScanner;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.timers.FlowKVTimerQueue;

import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.util.FileUtils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The entries of a snapshot, spilled by the synchronous part into files bucketed by key group so
 * that the asynchronous part can write them key group by key group. At most {@link #MAX_BUCKETS}
 * files, each a range of consecutive key groups; one bucket is loaded at a time when written out.
 *
 * <pre>
 *   frame payload: [state index:int][key length:int][key][namespace length:int][namespace]
 *                  [value length:int][value]          (FileType.SNAPSHOT_SPILL, little-endian)
 * </pre>
 */
final class SnapshotSpill {
    static final int MAX_BUCKETS = 256;
    private static final int STAGING_BYTES = 16 * 1024;

    private final Path directory;
    private final KeyGroupRange range;
    private final int keyGroupPrefixBytes;
    private final int buckets;
    private final LogWriter[] writers;
    private final IoBuffer[] staging;
    private final long[] sizes;
    private final MemoryBudget budget;

    SnapshotSpill(Path directory, KeyGroupRange range, int keyGroupPrefixBytes) throws IOException {
        this.directory = Files.createDirectories(directory);
        this.range = range;
        this.keyGroupPrefixBytes = keyGroupPrefixBytes;
        this.buckets = Math.max(1, Math.min(MAX_BUCKETS, range.getNumberOfKeyGroups()));
        this.writers = new LogWriter[buckets];
        this.staging = new IoBuffer[buckets];
        this.sizes = new long[buckets];
        this.budget = new MemoryBudget((long) buckets * STAGING_BYTES);
    }

    int buckets() {
        return buckets;
    }

    /** The first and last (inclusive) key group of a bucket. */
    int firstKeyGroup(int bucket) {
        int n = range.getNumberOfKeyGroups();
        return range.getStartKeyGroup() + (int) ((long) bucket * n / buckets);
    }

    int lastKeyGroup(int bucket) {
        return firstKeyGroup(bucket + 1) - 1;
    }

    private int bucketOf(int keyGroup) {
        long offset = keyGroup - range.getStartKeyGroup();
        int bucket = (int) (offset * buckets / range.getNumberOfKeyGroups());
        // Integer division can put a key group one bucket late; settle it against the bounds.
        while (bucket > 0 && keyGroup < firstKeyGroup(bucket)) {
            bucket--;
        }
        while (bucket + 1 < buckets && keyGroup >= firstKeyGroup(bucket + 1)) {
            bucket++;
        }
        return bucket;
    }

    void add(int stateIndex, StateStorage storage) throws IOException {
        try {
            spill(stateIndex, storage);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private void spill(int stateIndex, StateStorage storage) throws IOException {
        storage.forEach(
                (key, namespace, value, offset, length) -> {
                    int keyGroup = KeyBytes.keyGroupOf(key, keyGroupPrefixBytes);
                    if (!range.contains(keyGroup)) {
                        throw new IllegalStateException(
                                "entry of key group " + keyGroup + " outside " + range);
                    }
                    try {
                        write(
                                bucketOf(keyGroup),
                                stateIndex,
                                key,
                                namespace,
                                value,
                                offset,
                                length);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
    }

    /**
     * Spills the timers of a queue FlowKV stores, as entries of state {@code stateIndex}: key = the
     * key group prefix and the timer's serialization (a canonical timer entry), empty namespace and
     * value.
     */
    void addTimers(int stateIndex, FlowKVTimerQueue<?> queue) throws IOException {
        byte[] none = new byte[0];
        DataOutputSerializer key = new DataOutputSerializer(64);
        try {
            queue.forEachSerialized(
                    (keyGroup, timer) -> {
                        try {
                            key.clear();
                            CompositeKeySerializationUtils.writeKeyGroup(
                                    keyGroup, keyGroupPrefixBytes, key);
                            key.write(timer);
                            write(
                                    bucketOf(keyGroup),
                                    stateIndex,
                                    key.getCopyOfBuffer(),
                                    none,
                                    none,
                                    0,
                                    0);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private void write(
            int bucket,
            int stateIndex,
            byte[] key,
            byte[] namespace,
            byte[] value,
            int offset,
            int length)
            throws IOException {
        LogWriter writer = writer(bucket);
        writer.beginFrame();
        writer.putInt(stateIndex);
        writer.putInt(key.length);
        writer.putBytes(key, 0, key.length);
        writer.putInt(namespace.length);
        writer.putBytes(namespace, 0, namespace.length);
        writer.putInt(length);
        writer.putBytes(value, offset, length);
        writer.endFrame();
    }

    private LogWriter writer(int bucket) throws IOException {
        if (writers[bucket] == null) {
            staging[bucket] = IoBuffer.allocate(budget, STAGING_BYTES, "snapshot spill staging");
            writers[bucket] =
                    LogWriter.create(
                            FileIo.DEFAULT,
                            file(bucket),
                            FileType.SNAPSHOT_SPILL,
                            bucket,
                            staging[bucket]);
        }
        return writers[bucket];
    }

    private Path file(int bucket) {
        return directory.resolve("bucket-" + bucket);
    }

    void finish() throws IOException {
        for (int b = 0; b < buckets; b++) {
            if (writers[b] != null) {
                writers[b].flush();
                sizes[b] = writers[b].size();
                writers[b].close();
                writers[b] = null;
                staging[b].close();
                staging[b] = null;
            }
        }
    }

    /** Receives one spilled entry. Arrays are fresh copies the receiver may keep. */
    interface EntryReceiver {
        void accept(int stateIndex, byte[] key, byte[] namespace, byte[] value) throws IOException;
    }

    void read(int bucket, EntryReceiver receiver) throws IOException {
        if (sizes[bucket] == 0) {
            return;
        }
        try (LogReader reader =
                LogReader.open(
                        FileIo.DEFAULT, file(bucket), FileType.SNAPSHOT_SPILL, sizes[bucket])) {
            FrameScanner scanner = reader.scanAll(64 * 1024);
            while (scanner.next()) {
                ByteBuffer in =
                        ByteBuffer.wrap(
                                        scanner.array(),
                                        scanner.payloadOffset(),
                                        scanner.payloadLength())
                                .order(ByteOrder.LITTLE_ENDIAN);
                int stateIndex = in.getInt();
                byte[] key = new byte[in.getInt()];
                in.get(key);
                byte[] namespace = new byte[in.getInt()];
                in.get(namespace);
                byte[] value = new byte[in.getInt()];
                in.get(value);
                receiver.accept(stateIndex, key, namespace, value);
            }
        }
    }

    void release() {
        for (int b = 0; b < buckets; b++) {
            try {
                if (writers[b] != null) {
                    writers[b].close();
                }
            } catch (IOException ignored) {
                // The spill is being discarded; its files are deleted below.
            }
            if (staging[b] != null) {
                staging[b].close();
            }
        }
        try {
            FileUtils.deleteDirectory(directory.toFile());
        } catch (IOException ignored) {
            // Left-over spill files are removed with the backend's working directory.
        }
    }
}
