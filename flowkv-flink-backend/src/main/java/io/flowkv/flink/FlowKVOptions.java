package io.flowkv.flink;

import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Every option of the FlowKV state backend, under {@code state.backend.flowkv.*}. {@link
 * #validate(ReadableConfig)} runs when the backend is configured (job submission), so a bad value
 * fails before any task starts, naming the key, the value and the allowed range.
 */
public final class FlowKVOptions {
    private static final Pattern JAVA_CLASS_NAME =
            Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)*");

    private FlowKVOptions() {}

    public static final ConfigOption<MemorySize> WRITE_BUFFER_SIZE =
            ConfigOptions.key("state.backend.flowkv.write-buffer-size")
                    .memoryType()
                    .noDefaultValue()
                    .withDescription(
                            "Write buffer size of each FlowKV store instance. When not set, it is "
                                    + "derived from the operator's share of Flink managed memory: the "
                                    + "share is divided among the operator's store instances. Allowed: "
                                    + "at least 64 kb.");

    public static final ConfigOption<MemorySize> INDEX_CACHE_SIZE =
            ConfigOptions.key("state.backend.flowkv.index-cache-size")
                    .memoryType()
                    .noDefaultValue()
                    .withDescription(
                            "Native memory each RMW store instance (the store of aggregating "
                                    + "window state and of every non-window keyed state) keeps "
                                    + "pages of its hash index in, and each AUR store instance "
                                    + "(session, count and global windows) the pages of its window "
                                    + "table and frame chains (at least "
                                    + AurStoreOptions.MIN_STAT_CACHE_BYTES
                                    + " bytes there); the rest lives in page files on local disk "
                                    + "and is read back on demand. When not set: a quarter of the "
                                    + "operator's share of Flink managed memory, divided among the "
                                    + "state's store instances. Allowed: at least "
                                    + PagedHashIndex.MIN_CACHE_BYTES
                                    + " bytes.");

    public static final ConfigOption<Double> READ_BATCH_RATIO =
            ConfigOptions.key("state.backend.flowkv.read-batch-ratio")
                    .doubleType()
                    .defaultValue(0.02)
                    .withDescription(
                            "AUR store: fraction of live windows read ahead on a prefetch miss, "
                                    + "those with the nearest estimated trigger time. 0 disables "
                                    + "predictive batch read. Allowed: [0, 1].");

    public static final ConfigOption<Boolean> READ_AHEAD =
            ConfigOptions.key("state.backend.flowkv.read-ahead")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "AUR store: once half the windows of the last batch read are served, "
                                    + "bet on the next ones (as a miss would, by "
                                    + "read-batch-ratio) and read them on another thread while "
                                    + "the task goes on, instead of waiting for the miss. false: "
                                    + "bets are read only with the read that missed, on the "
                                    + "task thread.");

    public static final ConfigOption<Boolean> BACKGROUND_FLUSH =
            ConfigOptions.key("state.backend.flowkv.background-flush")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "AAR and AUR stores: write a full write buffer to the logs on a "
                                    + "background thread while the task goes on appending into "
                                    + "a second buffer, instead of on the task thread. AAR: the "
                                    + "task waits for that write when it reads, clears or "
                                    + "checkpoints the state, or when the next buffer is full. "
                                    + "AUR: the task lays out the frames and writes the index "
                                    + "entries itself, and waits for the data frames' write at "
                                    + "its next flush, read that misses, read ahead, compaction "
                                    + "or checkpoint. false: the task thread writes.");

    public static final ConfigOption<Double> MAX_SPACE_AMPLIFICATION =
            ConfigOptions.key("state.backend.flowkv.max-space-amplification")
                    .doubleType()
                    .defaultValue(1.5)
                    .withDescription(
                            "AUR and RMW stores: compact a store when its on-disk bytes divided by "
                                    + "its live bytes exceed this value. Allowed: (1, 100].");

    public static final ConfigOption<Integer> PARTITIONS =
            ConfigOptions.key("state.backend.flowkv.partitions")
                    .intType()
                    .defaultValue(2)
                    .withDescription(
                            "Store instances (partitions) per operator subtask and state; each "
                                    + "flushes and compacts on its own. Allowed: [1, 1024].");

    public static final ConfigOption<Integer> PER_KEY_WINDOWS_THRESHOLD =
            ConfigOptions.key("state.backend.flowkv.per-key-windows-threshold")
                    .intType()
                    .defaultValue(1024)
                    .withDescription(
                            "Window contents of a non-merging TimeWindow assigner start on AAR "
                                    + "(tumbling and sliding windows fire for all keys at once). "
                                    + "When their appends show windows per key (of 64 sampled "
                                    + "windows, fewer than a quarter reached 4 distinct keys, "
                                    + "after 64 distinct keys) and the store holds at least this "
                                    + "many windows, every element moves to AUR, which predicts "
                                    + "and reads windows key by key. The decision and its "
                                    + "evidence are logged. 0: never move. Allowed: [0, 2^31).");

    public static final ConfigOption<Integer> PRE_FLUSHES_PER_CHECKPOINT =
            ConfigOptions.key("state.backend.flowkv.pre-flushes-per-checkpoint")
                    .intType()
                    .defaultValue(1)
                    .withDescription(
                            "How many times per checkpoint interval each store instance flushes "
                                    + "its write buffer ahead of the checkpoint, at times spread "
                                    + "evenly over the interval (learnt from the last two "
                                    + "checkpoints) and staggered between instances, so that "
                                    + "the checkpoint's synchronous part flushes only what "
                                    + "arrived since and no two instances flush at once. 0: "
                                    + "instances flush when their buffer is full and at the "
                                    + "checkpoint only. Allowed: [0, 64].");

    public static final ConfigOption<List<String>> LOCAL_DIRECTORIES =
            ConfigOptions.key("state.backend.flowkv.localdir")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "Directories for FlowKV's working files. Default: the TaskManager's "
                                    + "temporary directories (io.tmp.dirs). Subtasks are spread "
                                    + "over the directories round robin.");

    public static final ConfigOption<Map<String, String>> PATTERN_OVERRIDE =
            ConfigOptions.key("state.backend.flowkv.pattern-override")
                    .mapType()
                    .defaultValue(Collections.emptyMap())
                    .withDescription(
                            "Per-operator store choice that always wins over detection: a map from "
                                    + "operator name or uid to AAR, AUR, RMW or GENERIC, e.g. "
                                    + "'window-q7:AUR,my-join:GENERIC'.");

    public static final ConfigOption<Map<String, String>> TRIGGER_TIME_PREDICTOR =
            ConfigOptions.key("state.backend.flowkv.trigger-time-predictor")
                    .mapType()
                    .defaultValue(Collections.emptyMap())
                    .withDescription(
                            "Per-operator estimate of when AUR windows fire: a map from operator "
                                    + "name or uid to the class name of an "
                                    + "io.flowkv.core.aur.TriggerTimePredictor with a public "
                                    + "no-argument constructor, loaded from the job's class path, "
                                    + "e.g. 'sessions:com.acme.ShiftEndPredictor'. It replaces the "
                                    + "default estimate (largest timestamp + session gap for "
                                    + "TimeWindow windows, none otherwise) for that operator's AUR "
                                    + "states; trigger times known from timers or from the merging "
                                    + "window set still win. One instance per operator subtask, "
                                    + "called from the task thread only.");

    public static final ConfigOption<Boolean> METRICS_MEMORY =
            metricsOption(
                    "memory",
                    "flowkv.budget-used-bytes, flowkv.budget-capacity-bytes (the slot's FlowKV budget) and "
                            + "per state flowkv.<state>.memory-bytes (budget bytes its stores hold)");

    public static final ConfigOption<Boolean> METRICS_SPACE =
            metricsOption(
                    "space",
                    "per state live-bytes, dead-bytes, disk-bytes and space-amplification of its "
                            + "files, files (data and log files) and estimated-entries");

    public static final ConfigOption<Boolean> METRICS_IO =
            metricsOption(
                    "io",
                    "per state bytes-appended, bytes-flushed, bytes-read, flushes, compactions and "
                            + "compaction-bytes-written");

    public static final ConfigOption<Boolean> METRICS_READS =
            metricsOption(
                    "reads",
                    "per state prefetch-hits, prefetch-misses, prefetch-hit-ratio, prefetch-loaded-bytes, "
                            + "read-amplification (AUR), partition-loads, partitions-streamed (AAR), "
                            + "index-page-reads, index-page-writes (paged indexes), index-scans and "
                            + "chain-reads (AUR)");

    public static final ConfigOption<Boolean> METRICS_CHECKPOINTS =
            metricsOption(
                    "checkpoints",
                    "flowkv.checkpoint-uploaded-bytes and flowkv.checkpoint-reused-bytes of the last "
                            + "incremental checkpoint, flowkv.checkpoints-uploaded, flowkv.restore-millis "
                            + "(-1 before a restore)");

    private static ConfigOption<Boolean> metricsOption(String group, String metrics) {
        return ConfigOptions.key("state.backend.flowkv.metrics." + group)
                .booleanType()
                .defaultValue(true)
                .withDescription(
                        "Whether to report these metrics under the operator's metric group: "
                                + metrics
                                + ". They are gauges over counters the stores keep anyway, so "
                                + "they cost nothing on the state access path.");
    }

    /** Where a keyed backend keeps Flink's timers. */
    public enum TimerService {
        /** On the Java heap, as Flink's HashMap backend does: fastest while timers fit the heap. */
        HEAP,
        /** In a FlowKV store off the heap, spilling to local disk: timers bounded by disk. */
        FLOWKV,
        /**
         * On the heap until a queue holds {@link #TIMER_HEAP_LIMIT} timers, then in a FlowKV store:
         * the heap's speed while timers are few, a bounded heap when they are many.
         */
        AUTO
    }

    public static final ConfigOption<TimerService> TIMER_SERVICE =
            ConfigOptions.key("state.backend.flowkv.timer-service")
                    .enumType(TimerService.class)
                    .defaultValue(TimerService.AUTO)
                    .withDescription(
                            "Where timers live. HEAP: Flink's heap timer queues (each timer about "
                                    + "a hundred bytes of the TaskManager heap). FLOWKV: a sorted "
                                    + "store of timers in native memory charged to the "
                                    + "managed-memory budget and in files on local disk, so the "
                                    + "heap does not grow with the number of timers (like "
                                    + "RocksDB's state.backend.rocksdb.timer-service.factory: "
                                    + "ROCKSDB). AUTO: each timer queue starts on the heap and "
                                    + "moves into the store when it reaches "
                                    + "state.backend.flowkv.timer-service.heap-limit timers. "
                                    + "Allowed: HEAP, FLOWKV, AUTO.");

    /** How a checkpoint is written when Flink's incremental checkpoints are off. */
    public enum FullCheckpointFormat {
        /**
         * FlowKV's own files, all of them uploaded by every checkpoint: the synchronous part only
         * seals the stores and hard-links their files, as an incremental checkpoint's does.
         */
        NATIVE,
        /**
         * Flink's canonical key-value layout, as a savepoint: the synchronous part reads every
         * entry once (spilling it by key group), so the task pauses for a time that grows with the
         * state.
         */
        CANONICAL
    }

    public static final ConfigOption<FullCheckpointFormat> FULL_CHECKPOINT_FORMAT =
            ConfigOptions.key("state.backend.flowkv.full-checkpoint-format")
                    .enumType(FullCheckpointFormat.class)
                    .defaultValue(FullCheckpointFormat.NATIVE)
                    .withDescription(
                            "How checkpoints are written while Flink's incremental checkpoints "
                                    + "(execution.checkpointing.incremental) are off. NATIVE: "
                                    + "every checkpoint uploads all of FlowKV's sealed store "
                                    + "files; the task pauses only to seal the stores and "
                                    + "hard-link their files, whatever the state size, and no "
                                    + "checkpoint depends on an earlier one's files. CANONICAL: "
                                    + "Flink's canonical key-value layout, restorable on other "
                                    + "backends; the task pauses while every entry is copied "
                                    + "into spill files, a pause that grows with the state. "
                                    + "Savepoints are canonical either way. "
                                    + "Allowed: NATIVE, CANONICAL.");

    /** How checkpoints that upload FlowKV's store files write them to the checkpoint storage. */
    public enum CheckpointCompression {
        /** Byte for byte. */
        NONE,
        /**
         * Each file as one LZ4 frame (the LZ4 frame format, blocks of 64 KiB), decompressed on
         * restore; the task-local copy stays uncompressed.
         */
        LZ4
    }

    public static final ConfigOption<String> FILE_IO_FACTORY =
            ConfigOptions.key("state.backend.flowkv.file-io-factory")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The class name of an io.flowkv.flink.FileIoFactory with a public "
                                    + "no-argument constructor, loaded from the job's class path: "
                                    + "the stores of every keyed backend open, write, sync and "
                                    + "delete their files through the FileIo it creates (one per "
                                    + "keyed backend). For fault-injection tests and I/O "
                                    + "instrumentation. When not set: the local file system, "
                                    + "directly.");

    public static final ConfigOption<CheckpointCompression> CHECKPOINT_COMPRESSION =
            ConfigOptions.key("state.backend.flowkv.checkpoint-compression")
                    .enumType(CheckpointCompression.class)
                    .defaultValue(CheckpointCompression.LZ4)
                    .withDescription(
                            "How incremental and NATIVE full checkpoints upload FlowKV's store "
                                    + "files. LZ4: each file is compressed on upload as one LZ4 "
                                    + "frame (on the asynchronous upload threads) and "
                                    + "decompressed on restore; the task-local copy stays "
                                    + "uncompressed. NONE: byte for byte. A checkpoint records "
                                    + "each file's encoding, so a job restores from checkpoints "
                                    + "written with either, and files a later checkpoint reuses "
                                    + "keep the encoding they were uploaded with. "
                                    + "Allowed: NONE, LZ4.");

    public static final ConfigOption<Integer> RESTORE_THREADS =
            ConfigOptions.key("state.backend.flowkv.restore-threads")
                    .intType()
                    .defaultValue(4)
                    .withDescription(
                            "Threads per restoring subtask that fetch the store files of an "
                                    + "incremental or NATIVE full checkpoint (read, decompress, "
                                    + "check, write), one file at a time each. Allowed: "
                                    + "[1, 64].");

    public static final ConfigOption<Boolean> RESTORE_IN_BACKGROUND =
            ConfigOptions.key("state.backend.flowkv.restore-in-background")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Whether a subtask restored in place (same key groups) from an "
                                    + "incremental or NATIVE full checkpoint in the checkpoint "
                                    + "storage (not a task-local copy) starts processing "
                                    + "before every store file is fetched: the restore-threads "
                                    + "fetch them in the background, and a store that needs a "
                                    + "file not fetched yet waits for it or fetches it itself. "
                                    + "A file that fails to fetch fails the access to it and the "
                                    + "next checkpoint, naming the file. false: the restore "
                                    + "fetches every file before the subtask starts, and fails "
                                    + "at once on a bad file.");

    public static final ConfigOption<Integer> RESTORE_BACKGROUND_NICE =
            ConfigOptions.key("state.backend.flowkv.restore-background-nice")
                    .intType()
                    .defaultValue(19)
                    .withDescription(
                            "The Linux nice value of the restore-threads while they fetch in "
                                    + "the background (restore-in-background): 19, the lowest "
                                    + "priority, gives the cores to the restored job first, so "
                                    + "it gets back to its full rate while the files arrive with "
                                    + "the CPU it leaves; a file a store needs before its fetch "
                                    + "thread took it is fetched on the store's own thread, at "
                                    + "its priority. 0: the TaskManager's priority. Set per "
                                    + "thread with renice; where that cannot be done (not Linux, "
                                    + "no renice) the threads keep the TaskManager's priority "
                                    + "and a warning says why. A fetch before the subtask starts "
                                    + "(restore-in-background false, rescaling) always runs at "
                                    + "the TaskManager's priority. Allowed: [0, 19].");

    /** Heap bytes a timer is taken to cost when the heap limit is derived from the JVM heap. */
    public static final int TIMER_HEAP_BYTES_ESTIMATE = 128;

    public static final ConfigOption<Long> TIMER_HEAP_LIMIT =
            ConfigOptions.key("state.backend.flowkv.timer-service.heap-limit")
                    .longType()
                    .noDefaultValue()
                    .withDescription(
                            "With timer-service AUTO: the number of timers a timer queue holds "
                                    + "on the heap; the add beyond it moves the queue's timers "
                                    + "into FlowKV's store, where they stay. A restore from an "
                                    + "incremental checkpoint taken while they were stored "
                                    + "writes them back into the store; other restores start "
                                    + "on the heap again. When not set: an eighth of the JVM's "
                                    + "maximum "
                                    + "heap at "
                                    + TIMER_HEAP_BYTES_ESTIMATE
                                    + " bytes per timer (1.3M timers for a 1.3 GB heap). "
                                    + "Allowed: at least 1.");

    public static final ConfigOption<MemorySize> OBJECT_CACHE_SIZE =
            ConfigOptions.key("state.backend.flowkv.object-cache.size")
                    .memoryType()
                    .noDefaultValue()
                    .withDescription(
                            "Heap that the value, reducing and aggregating states (window "
                                    + "aggregates, reduce, SQL accumulators) and session "
                                    + "operators' merging window sets of all subtasks in a "
                                    + "TaskManager share to keep values as live objects, so that "
                                    + "a hot key and window is updated without reading, "
                                    + "deserializing, serializing and writing its value. A state "
                                    + "may use what the others leave free and always gets an "
                                    + "equal share among the states holding values. An entry is "
                                    + "taken to cost 64 bytes plus twice the serialized size of "
                                    + "its key, namespace and value, measured on a sample of "
                                    + "accesses, so large accumulators get few entries. At the "
                                    + "bound, a value not used lately (second chance) goes to the "
                                    + "store; every changed value goes there at each checkpoint "
                                    + "and savepoint. With the cache, a value state behaves as "
                                    + "on Flink's heap backend: the object value() returns is the "
                                    + "state. 0 turns the cache off. When not set: a sixteenth of "
                                    + "the JVM's maximum heap. Allowed: at least 0.");

    /** Fails with the key, the value and the allowed range of the first bad option. */
    public static void validate(ReadableConfig config) {
        config.getOptional(FILE_IO_FACTORY)
                .ifPresent(
                        name -> {
                            if (!JAVA_CLASS_NAME.matcher(name).matches()) {
                                throw bad(FILE_IO_FACTORY, name, "fully.qualified.ClassName");
                            }
                        });
        config.getOptional(WRITE_BUFFER_SIZE)
                .ifPresent(
                        size -> {
                            if (size.getBytes() < 64 * 1024) {
                                throw bad(
                                        WRITE_BUFFER_SIZE,
                                        size.toHumanReadableString(),
                                        ">= 64 kb");
                            }
                        });
        config.getOptional(INDEX_CACHE_SIZE)
                .ifPresent(
                        size -> {
                            if (size.getBytes() < PagedHashIndex.MIN_CACHE_BYTES) {
                                throw bad(
                                        INDEX_CACHE_SIZE,
                                        size.toHumanReadableString(),
                                        ">= " + PagedHashIndex.MIN_CACHE_BYTES + " bytes");
                            }
                        });
        config.getOptional(TIMER_HEAP_LIMIT)
                .ifPresent(
                        limit -> {
                            if (limit < 1) {
                                throw bad(TIMER_HEAP_LIMIT, limit, ">= 1");
                            }
                        });
        double ratio = config.get(READ_BATCH_RATIO);
        if (!(ratio >= 0.0 && ratio <= 1.0)) {
            throw bad(READ_BATCH_RATIO, ratio, "[0, 1]");
        }
        double msa = config.get(MAX_SPACE_AMPLIFICATION);
        if (!(msa > 1.0 && msa <= 100.0)) {
            throw bad(MAX_SPACE_AMPLIFICATION, msa, "(1, 100]");
        }
        int preFlushes = config.get(PRE_FLUSHES_PER_CHECKPOINT);
        if (preFlushes < 0 || preFlushes > 64) {
            throw bad(PRE_FLUSHES_PER_CHECKPOINT, preFlushes, "[0, 64]");
        }
        int perKeyWindows = config.get(PER_KEY_WINDOWS_THRESHOLD);
        if (perKeyWindows < 0) {
            throw bad(PER_KEY_WINDOWS_THRESHOLD, perKeyWindows, "[0, 2^31)");
        }
        int partitions = config.get(PARTITIONS);
        if (partitions < 1 || partitions > 1024) {
            throw bad(PARTITIONS, partitions, "[1, 1024]");
        }
        int restoreThreads = config.get(RESTORE_THREADS);
        if (restoreThreads < 1 || restoreThreads > 64) {
            throw bad(RESTORE_THREADS, restoreThreads, "[1, 64]");
        }
        int nice = config.get(RESTORE_BACKGROUND_NICE);
        if (nice < 0 || nice > 19) {
            throw bad(RESTORE_BACKGROUND_NICE, nice, "[0, 19]");
        }
        config.getOptional(LOCAL_DIRECTORIES)
                .ifPresent(
                        dirs -> {
                            if (dirs.isEmpty() || dirs.stream().anyMatch(d -> d.trim().isEmpty())) {
                                throw bad(LOCAL_DIRECTORIES, dirs, "a non-empty list of paths");
                            }
                        });
        for (Map.Entry<String, String> e : config.get(PATTERN_OVERRIDE).entrySet()) {
            if (StorePattern.parse(e.getValue()) == null) {
                throw bad(
                        PATTERN_OVERRIDE,
                        e.getKey() + ":" + e.getValue(),
                        "operator:AAR|AUR|RMW|GENERIC");
            }
        }
        for (Map.Entry<String, String> e : config.get(TRIGGER_TIME_PREDICTOR).entrySet()) {
            if (e.getKey().isBlank() || !JAVA_CLASS_NAME.matcher(e.getValue()).matches()) {
                throw bad(
                        TRIGGER_TIME_PREDICTOR,
                        e.getKey() + ":" + e.getValue(),
                        "operator:fully.qualified.ClassName");
            }
        }
    }

    private static IllegalConfigurationException bad(
            ConfigOption<?> option, Object value, String range) {
        return new IllegalConfigurationException(
                String.format(
                        Locale.ROOT,
                        "Invalid value for '%s': %s (allowed: %s)",
                        option.key(),
                        value,
                        range));
    }
}
