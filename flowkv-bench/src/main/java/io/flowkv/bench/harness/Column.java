package io.flowkv.bench.harness;

import java.util.Locale;

/** The columns of a result CSV, in file order. Every experiment writes the same columns. */
enum Column {
    EXPERIMENT("throughput, latency, read-batch-ratio, msa, scaling, restore"),
    QUERY("NEXMark query id"),
    BACKEND("flowkv, rocksdb, forst, hashmap"),
    REP("repetition, from 1"),
    PARALLELISM("job parallelism"),
    SETTING("the swept setting, e.g. read-batch-ratio=0.1; empty when none"),
    EVENTS("events generated"),
    EVENT_RATE("events per second of event time"),
    WINDOW_MS("tumbling/sliding window size, ms"),
    SLIDE_MS("sliding window slide, ms"),
    GAP_MS("session gap, ms"),
    TARGET_RATE("latency runs: wall-clock events/s the generator is paced to; 0 = unpaced"),
    STATUS("ok, or failed: OOM | failed: timeout | failed: exit N"),
    SECONDS("the job's run time (Flink net runtime), s"),
    EVENTS_PER_S("events / seconds"),
    OUTPUT_RECORDS("records at the sink"),
    CHECKSUM("order-independent hash of the sink's records"),
    WALL_S("wall time of the child JVM, s"),
    CPU_S("CPU time (user + system) of the child JVM from job submission to job end, s"),
    READ_BYTES("bytes the child read from disk during the job (/proc/pid/io read_bytes)"),
    WRITE_BYTES("bytes the child wrote to disk during the job (/proc/pid/io write_bytes)"),
    PEAK_DISK_BYTES("largest size of the run's temp dirs seen (without Flink's RPC jar), bytes"),
    PEAK_RSS_BYTES("largest resident set of the child JVM (/proc/pid/status VmHWM), bytes"),
    MEMORY_LIMIT_BYTES(
            "--page-cache runs: limit of the child's memory cgroup (its process plus the page"
                    + " cache it may keep), bytes; empty: no limit"),
    CGROUP_PEAK_BYTES(
            "--page-cache runs: most memory the child's cgroup held (process and page cache), bytes"),
    STATE_ESTIMATE_BYTES("estimated window state at its peak, bytes"),
    MANAGED_BYTES("managed memory (state backend budget), bytes"),
    JFR_SAMPLES("JFR samples counted"),
    JFR_FLOWKV("share of samples in FlowKV"),
    JFR_ROCKSDB("share of samples in RocksDB/ForSt (JNI and Flink adapter)"),
    JFR_HEAP("share of samples in Flink's heap backend"),
    JFR_SERDE("share of samples in serialization"),
    JFR_OTHER("share of samples elsewhere"),
    PREFETCH_HIT_RATIO("FlowKV: prefetch hits / (hits + misses) over all stores"),
    FLOWKV_BYTES_READ("FlowKV: bytes read from its files over all stores"),
    ACHIEVED_RATE("latency runs: events/s actually generated"),
    P50_MS("latency p50, ms"),
    P95_MS("latency p95, ms"),
    P99_MS("latency p99, ms"),
    P999_MS("latency p99.9, ms"),
    SUSTAINED("latency runs: true if the backend kept up with the target rate"),
    FAILED_AT_EVENTS("restore runs: events generated when the injected failure was thrown"),
    RESTORED_BYTES("restore runs: full state size of the checkpoint restored (Flink's), bytes"),
    RESTORE_MS(
            "restore runs: from the failure until every subtask had restored its state and ran"
                    + " again, ms"),
    INIT_STATE_MS("restore runs: the slowest subtask's state initialization (Flink's), ms"),
    RATE_BEFORE("restore runs: events/s over the 5 s before the failure"),
    STEADY_MS(
            "restore runs: from the failure until the first second at >= 90% of the events/s"
                    + " before it, ms; -1: not before the job ended");

    final String meaning;

    Column(String meaning) {
        this.meaning = meaning;
    }

    String header() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Column ofHeader(String header) {
        try {
            return valueOf(header.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown CSV column '" + header + "'", e);
        }
    }
}
