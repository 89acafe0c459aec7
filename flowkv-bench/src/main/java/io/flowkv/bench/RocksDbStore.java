package io.flowkv.bench;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.ListStore;
import io.flowkv.core.SealedStore;
import io.flowkv.core.Store;
import io.flowkv.core.StoreStats;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.ValueStore;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBufferManager;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * RocksDB set up as Flink 2.3's {@code EmbeddedRocksDBStateBackend} sets it up with managed memory
 * and default options (checked against flink-statebackend-rocksdb 2.3.0 sources):
 *
 * <ul>
 *   <li>memory: one {@link LRUCache} of {@code (3 - r) / 3 * budget} bytes (high-priority pool 0.1)
 *       and a {@link WriteBufferManager} of {@code 2 * r / 3 * budget} bytes charged to that cache,
 *       r = write-buffer ratio 0.5 ({@code RocksDBMemoryControllerUtils}); index and filter blocks
 *       cached with high priority, L0 ones pinned ({@code RocksDBResourceContainer});
 *   <li>column family options of {@code RocksDBConfigurableOptions} defaults: level compaction,
 *       Snappy, 64 MB write buffers (2, merge 1), 64 MB target file, 256 MB level base, 4 KB
 *       blocks, no bloom filter; merge operator {@code stringappendtest};
 *   <li>one column family per state ({@code "window-contents"}), writes without WAL, default read
 *       options;
 *   <li>key = key group (2 bytes, max parallelism above 128) + key bytes + namespace (window) bytes
 *       ({@code SerializedCompositeKeyBuilder});
 *   <li>list append = {@code merge} of one serialized element; the stored list is the elements
 *       joined by ',' ({@code RocksDBListState}, {@code ListDelimitedSerializer}); an element of a
 *       {@code byte[]} list is its length (int) and bytes ({@code BytePrimitiveArraySerializer});
 *   <li>aggregates: {@code get} + {@code put} ({@code RocksDBAggregatingState}); clear = delete.
 * </ul>
 *
 * <p>A baseline for trace replays: it is never checkpointed or scanned, so {@link #seal} and {@link
 * #forEach} are not supported.
 */
abstract class RocksDbStore implements Store {
    static final String MERGE_OPERATOR_NAME = "stringappendtest";
    static final double WRITE_BUFFER_RATIO = 0.5;
    static final double HIGH_PRIORITY_POOL_RATIO = 0.1;

    /** Flink's default max parallelism for jobs of parallelism up to 128. */
    static final int MAX_PARALLELISM = 128;

    private static final byte DELIMITER = ',';

    static {
        RocksDB.loadLibrary();
    }

    private final Path directory;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final StoreStats stats = new StoreStats();
    private final RocksDB db;
    private final ColumnFamilyHandle state;
    private final WriteOptions writeOptions;
    private final ReadOptions readOptions;
    private final LRUCache cache;
    private byte[] compositeKey = new byte[64];

    /** The store of a pattern's state: lists for the append patterns, values for RMW. */
    static Store open(Pattern pattern, TargetConfig config) throws IOException {
        return pattern == Pattern.RMW ? new Values(config) : new Lists(config);
    }

    private RocksDbStore(TargetConfig config) throws IOException {
        this.directory = config.directory();
        Files.createDirectories(directory);
        long budget = config.memoryBudget();
        long cacheCapacity = (long) ((3 - WRITE_BUFFER_RATIO) * budget / 3);
        long writeBufferManagerCapacity = (long) (2 * budget * WRITE_BUFFER_RATIO / 3);
        try {
            this.cache = keep(new LRUCache(cacheCapacity, -1, false, HIGH_PRIORITY_POOL_RATIO));
            WriteBufferManager wbm =
                    keep(new WriteBufferManager(writeBufferManagerCapacity, cache));
            DBOptions dbOptions =
                    keep(new DBOptions())
                            .setUseFsync(false)
                            .setStatsDumpPeriodSec(0)
                            .setMaxBackgroundJobs(2)
                            .setMaxOpenFiles(-1)
                            .setInfoLogLevel(InfoLogLevel.INFO_LEVEL)
                            .setMaxLogFileSize(25L << 20)
                            .setKeepLogFileNum(4)
                            .setCreateIfMissing(true)
                            .setCreateMissingColumnFamilies(true)
                            .setAvoidFlushDuringShutdown(true)
                            .setWriteBufferManager(wbm);
            BlockBasedTableConfig table =
                    new BlockBasedTableConfig()
                            .setBlockSize(4 << 10)
                            .setMetadataBlockSize(4 << 10)
                            .setBlockCache(cache)
                            .setCacheIndexAndFilterBlocks(true)
                            .setCacheIndexAndFilterBlocksWithHighPriority(true)
                            .setPinL0FilterAndIndexBlocksInCache(true);
            ColumnFamilyOptions columnOptions =
                    keep(new ColumnFamilyOptions())
                            .setCompactionStyle(CompactionStyle.LEVEL)
                            .setCompressionPerLevel(List.of(CompressionType.SNAPPY_COMPRESSION))
                            .setLevelCompactionDynamicLevelBytes(false)
                            .setTargetFileSizeBase(64L << 20)
                            .setMaxBytesForLevelBase(256L << 20)
                            .setWriteBufferSize(64L << 20)
                            .setMaxWriteBufferNumber(2)
                            .setMinWriteBufferNumberToMerge(1)
                            .setPeriodicCompactionSeconds(30L * 24 * 3600)
                            .setTableFormatConfig(table)
                            .setMergeOperatorName(MERGE_OPERATOR_NAME);
            List<ColumnFamilyDescriptor> families =
                    List.of(
                            new ColumnFamilyDescriptor(
                                    RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions),
                            new ColumnFamilyDescriptor(
                                    "window-contents".getBytes(StandardCharsets.UTF_8),
                                    columnOptions));
            List<ColumnFamilyHandle> handles = new ArrayList<>();
            this.db = RocksDB.open(dbOptions, directory.toString(), families, handles);
            for (ColumnFamilyHandle h : handles) {
                resources.add(0, h);
            }
            resources.add(0, db);
            this.state = handles.get(1);
            this.writeOptions = keep(new WriteOptions().setDisableWAL(true));
            this.readOptions = keep(new ReadOptions());
        } catch (RocksDBException e) {
            closeQuietly();
            throw new IOException("Error while opening RocksDB in " + directory, e);
        }
    }

    private <T extends AutoCloseable> T keep(T resource) {
        resources.add(0, resource);
        return resource;
    }

    /** Lists as Flink's {@code RocksDBListState} keeps them: merged, delimited elements. */
    static final class Lists extends RocksDbStore implements ListStore {
        private byte[] element = new byte[256];

        private Lists(TargetConfig config) throws IOException {
            super(config);
        }

        @Override
        public void append(byte[] key, byte[] window, byte[] value, long timestamp)
                throws IOException {
            int n = 4 + value.length;
            if (element.length < n) {
                element = new byte[n * 2];
            }
            writeInt(element, 0, value.length);
            System.arraycopy(value, 0, element, 4, value.length);
            merge(key, window, element, n);
        }

        @Override
        public boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
            byte[] list = read(key, window);
            if (list == null) {
                return false;
            }
            int pos = 0;
            while (pos < list.length) {
                int length = readInt(list, pos);
                consumer.accept(list, pos + 4, length);
                pos += 4 + length;
                if (pos < list.length) {
                    if (list[pos] != DELIMITER) {
                        throw new IOException("Corrupt list in RocksDB at byte " + pos);
                    }
                    pos++;
                }
            }
            return true;
        }

        @Override
        public void remove(byte[] key, byte[] window) throws IOException {
            delete(key, window);
        }
    }

    /** Values as Flink's {@code RocksDBAggregatingState} keeps them: get, then put. */
    static final class Values extends RocksDbStore implements ValueStore {
        private Values(TargetConfig config) throws IOException {
            super(config);
        }

        @Override
        public boolean get(byte[] key, byte[] window, ValueConsumer consumer) throws IOException {
            byte[] value = read(key, window);
            if (value == null) {
                return false;
            }
            consumer.accept(value, 0, value.length);
            return true;
        }

        @Override
        public void put(byte[] key, byte[] window, byte[] value) throws IOException {
            write(key, window, value);
        }

        /** True whether or not there was a value: RocksDB deletes without looking. */
        @Override
        public boolean remove(byte[] key, byte[] window) throws IOException {
            delete(key, window);
            return true;
        }
    }

    final void merge(byte[] key, byte[] window, byte[] operand, int length) throws IOException {
        int keyLength = compose(key, window);
        try {
            db.merge(state, writeOptions, compositeKey, 0, keyLength, operand, 0, length);
        } catch (RocksDBException e) {
            throw new IOException("Error while adding data to RocksDB", e);
        }
    }

    final void write(byte[] key, byte[] window, byte[] value) throws IOException {
        int keyLength = compose(key, window);
        try {
            db.put(state, writeOptions, compositeKey, 0, keyLength, value, 0, value.length);
        } catch (RocksDBException e) {
            throw new IOException("Error while adding data to RocksDB", e);
        }
    }

    final byte[] read(byte[] key, byte[] window) throws IOException {
        int keyLength = compose(key, window);
        try {
            return db.get(state, readOptions, compositeKey, 0, keyLength);
        } catch (RocksDBException e) {
            throw new IOException("Error while retrieving data from RocksDB.", e);
        }
    }

    final void delete(byte[] key, byte[] window) throws IOException {
        int keyLength = compose(key, window);
        try {
            db.delete(state, writeOptions, compositeKey, 0, keyLength);
        } catch (RocksDBException e) {
            throw new IOException("Error while removing entry from RocksDB", e);
        }
    }

    /** Writes key group, key and window into the reused composite key buffer. */
    private int compose(byte[] key, byte[] window) {
        int n = 2 + key.length + window.length;
        if (compositeKey.length < n) {
            compositeKey = new byte[n * 2];
        }
        int keyGroup = keyGroup(key);
        compositeKey[0] = (byte) (keyGroup >>> 8);
        compositeKey[1] = (byte) keyGroup;
        System.arraycopy(key, 0, compositeKey, 2, key.length);
        System.arraycopy(window, 0, compositeKey, 2 + key.length, window.length);
        return n;
    }

    /**
     * Flink's {@code KeyGroupRangeAssignment}: murmur hash of the key's {@code hashCode()} modulo
     * the max parallelism. The benchmark keys are big-endian longs, hashed as {@code Long} does.
     */
    static int keyGroup(byte[] key) {
        long k = 0;
        for (byte b : key) {
            k = k << 8 | (b & 0xFF);
        }
        return keyGroup(k);
    }

    /** The key group of the trace key {@code k} (its bytes are {@code k} as a big-endian long). */
    static int keyGroup(long k) {
        return murmurHash(Long.hashCode(k)) % MAX_PARALLELISM;
    }

    /** Flink's {@code MathUtils.murmurHash(int)}. */
    static int murmurHash(int code) {
        code *= 0xcc9e2d51;
        code = Integer.rotateLeft(code, 15);
        code *= 0x1b873593;
        code = Integer.rotateLeft(code, 13);
        code = code * 5 + 0xe6546b64;
        code ^= 4;
        code ^= code >>> 16;
        code *= 0x85ebca6b;
        code ^= code >>> 13;
        code *= 0xc2b2ae35;
        code ^= code >>> 16;
        if (code >= 0) {
            return code;
        } else if (code != Integer.MIN_VALUE) {
            return -code;
        } else {
            return 0;
        }
    }

    private static void writeInt(byte[] b, int pos, int v) {
        b[pos] = (byte) (v >>> 24);
        b[pos + 1] = (byte) (v >>> 16);
        b[pos + 2] = (byte) (v >>> 8);
        b[pos + 3] = (byte) v;
    }

    private static int readInt(byte[] b, int pos) {
        return (b[pos] & 0xFF) << 24
                | (b[pos + 1] & 0xFF) << 16
                | (b[pos + 2] & 0xFF) << 8
                | (b[pos + 3] & 0xFF);
    }

    @Override
    public void flush() throws IOException {
        try (FlushOptions options = new FlushOptions().setWaitForFlush(true)) {
            db.flush(options, state);
        } catch (RocksDBException e) {
            throw new IOException("Error while flushing RocksDB in " + directory, e);
        }
    }

    @Override
    public SealedStore seal(boolean durable) {
        throw new UnsupportedOperationException(
                "The benchmark never checkpoints its RocksDB baseline");
    }

    @Override
    public void forEach(EntryVisitor visitor) {
        throw new UnsupportedOperationException("The benchmark never scans its RocksDB baseline");
    }

    /** Empty: RocksDB keeps its own statistics, and the benchmark reads none of them. */
    @Override
    public StoreStats stats() {
        return stats;
    }

    /** Bytes in the block cache, which the memtables are charged to as well. */
    @Override
    public long memoryUsed() {
        return cache.getUsage();
    }

    @Override
    public void close() {
        closeQuietly();
    }

    private void closeQuietly() {
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                // Closing native handles cannot fail in a way the benchmark could act on.
            }
        }
        resources.clear();
    }
}
