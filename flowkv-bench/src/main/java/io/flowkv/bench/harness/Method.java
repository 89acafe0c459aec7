package io.flowkv.bench.harness;

/** The report's method section: how the numbers above were produced. */
final class Method {

    private Method() {}

    static void append(StringBuilder md) {
        md.append(
                """
                ## Method

                **Modes** (`scripts/bench.sh --help`): `--throughput` (default) runs every query on \
                every backend; `--sweeps` FlowKV's read-batch-ratio sweep (Q7-Session, \
                Q11-Median) and max-space-amplification sweep (Q7, Q11-Median); `--scaling` \
                Q11-Median on FlowKV and RocksDB at parallelism 1 and 2; `--latency` paced runs; \
                `--all` all of them; `--restore` (large scale only) Q7, Q7-Session, Q8 and \
                Q11-Median with checkpoints, each failed once, at `--fail-at` of its events \
                (default half, so that the rest shows the time to steady throughput on the faster \
                backend too), when it holds `--state-factor` times managed memory, for restore \
                time and time to steady throughput; \
                `--quick` the throughput of all eight queries on FlowKV and RocksDB at small scale \
                with 600k events and 2 repetitions, written to `target/bench-quick/` unless `--out` is given; \
                `--report-only` rebuilds this file from the CSVs; `--dry-run` prints the plan, \
                the memory split and an ETA. Each mode writes its own CSV under `nexmark/` \
                (columns: `Column.java` in `io.flowkv.bench.harness`); the report reads all of \
                them.

                **One JVM per run, one memory budget for all.** Every run is a child JVM running \
                `NexmarkRunner` on an embedded MiniCluster. `--memory` (default 2g) is the \
                TaskManager process size; Flink's own memory model \
                (`TaskExecutorProcessUtils.processSpecFromConfig`, every other option at its \
                default) splits it, and the child gets `-Xmx` = framework + task heap plus 128m \
                for the MiniCluster's JobManager in the same JVM, `-XX:MaxDirectMemorySize` = \
                framework + task off-heap + network, `-XX:MaxMetaspaceSize` = metaspace, and the \
                computed managed memory as `taskmanager.memory.managed.size`. RocksDB, ForSt (in \
                its default local mode) and FlowKV take their budget from managed memory, HashMap \
                lives on the heap; each backend is otherwise at its defaults. \
                `-XX:+ExitOnOutOfMemoryError` makes an out-of-memory failure end the run at once; \
                it is reported as `failed: OOM`, shown crossed out in the plots, never dropped and \
                never counted as a checksum mismatch. A run without progress and with \
                an idle CPU for `--stall-timeout` seconds is killed as `failed: stalled`, one \
                running longer than `--run-timeout` as `failed: timeout`. \
                Checkpointing is off unless `--checkpoint-interval` is given. Each run's temp \
                directories (`io.tmp.dirs`, where every backend keeps its local state) are its \
                own and are deleted after it.

                **Page cache.** By default the kernel may cache every file a run writes, and \
                this machine has far more free memory than a run's state, so "state larger than \
                managed memory" is then served from memory. `--page-cache SIZE` starts each child \
                in a memory cgroup limited to its TaskManager process size, plus the 128m \
                JobManager heap, plus SIZE: the kernel charges the child's memory and the page \
                cache of its files to the group and reclaims that cache at the limit, so what \
                does not fit is read from the disk (`read_bytes`). A child the kernel kills at \
                the limit is reported as `failed: OOM`. What each backend syncs, and when: \
                `docs/benchmarks/durability.md`.

                **Scale.** `small`: 1M events per query (`--events` overrides), 10 s windows, \
                5 s slide, 10 s gap, 100,000 events per second of event time. `large`: the append \
                queries are sized so that their estimated peak window state is `--state-factor` \
                (default 4) times the managed memory: Q7 and Q8 with one tumbling window spanning \
                the run, Q7-Session and Q11-Median with a session gap spanning it (the peak is \
                at the end, when every window still holds all its elements). The estimate \
                (`ScalePlan`) counts serialized element bytes from the generator's average event \
                sizes (bids 100 B, persons 200 B, auctions 500 B; 46 bids, 1 person and 3 \
                auctions per 50 events), without the stores' overheads: Q7/Q7-Session/Q11-Median \
                `min(events, window or gap x rate) x 46/50 x 100 B`, Q8 `min(events, window x \
                rate) x (201 + 3 x 501)/50 B`, Q5/Q5-Append one 32 B counter per auction and \
                sliding window (plus Q5-Append's 24 B buffered tuple per auction), Q11 32 B per \
                open session, Q12 40 B per bidder. Q5-Append's state is per-auction counters; \
                reaching the factor would need hundreds of sliding-window updates per bid, so its \
                `large` plan is fixed (60 s windows, 10 s slide, 6M events) and its estimate is \
                reported as it is. The non-append queries get 10M events at `large`. The \
                nexmark-flink SQL queries (`--suite sql`, `sql-q0`..`sql-q22`) keep the windows of \
                their SQL text and get 1M events at `small`, 10M at `large`; `--event-rate` sets \
                their events per second of event time, so that more events fall in each window.

                **Repetitions** are interleaved: repetition 1 of every query on every backend, \
                then repetition 2, and so on. Throughput runs made from 2026-11-27 on take a query's \
                backends in the given order in odd repetitions and in reverse in even ones \
                (earlier runs kept the given order). `--base-rev REV` adds backend \
                `flowkv-base`: FlowKV as built at commit REV, which the script builds in a \
                work tree under target/bench-base, so an A/B of two commits is one \
                interleaved run with a `flowkv/flowkv-base` column. Tables give the median and min–max over the \
                successful repetitions; events/s is events over Flink's net job run time \
                (MiniCluster start-up excluded).

                **Checksums.** `NexmarkRunner`'s checksum is an order-independent hash of every \
                output record. Successful runs of the same query on the same input (events, \
                rate, windows) must agree whatever the backend, setting, parallelism or \
                repetition; any disagreement is printed loudly, listed at the top of this file, \
                makes `checksums_equal=false` and the script's exit status 1.

                **Summary line**: `geomean_flowkv_vs_rocksdb` is the geometric mean over queries \
                of FlowKV's median events/s over RocksDB's, `min_flowkv_vs_rocksdb` the smallest \
                of those ratios, `geomean_flowkv_vs_forst` the same against ForSt (`n/a` when \
                ForSt did not run); `queries` counts the queries where both FlowKV and RocksDB \
                succeeded. When RocksDB with heap timers (`rocksdb-heaptimers`) ran, \
                `geomean_flowkv_vs_rocksdb_heaptimers`, `min_flowkv_vs_rocksdb_heaptimers` and \
                `queries_heaptimers` say the same against it.

                **CPU and disk.** CPU time is utime + stime of the child from \
                `/proc/<pid>/stat`, disk traffic `read_bytes`/`write_bytes` of `/proc/<pid>/io` \
                (bytes that reached the block layer), read when the child reports its job \
                submitted (its MiniCluster up) and finished, so JVM and MiniCluster start-up \
                and shutdown are not counted; \
                peak disk is the largest size of the run's temp directories (where every \
                backend keeps its local files; Flink's unpacked RPC jar left out), sampled \
                every second; peak RSS is the child's `VmHWM` (`/proc/<pid>/status`, its \
                largest resident set over the whole process: heap, native memory and mapped \
                files), to hold against the TaskManager process size. The split by component comes from a JFR recording of each run \
                (`default` settings: 20 ms sampling), counting the samples taken while the job \
                ran. Groups: FlowKV (`io.flowkv.core`, `io.flowkv.flink`), \
                RocksDB/ForSt (`org.rocksdb`, `org.forstdb`, `org.apache.flink.state.rocksdb`, \
                `org.apache.flink.state.forst`), heap backend \
                (`org.apache.flink.runtime.state.heap`), serialization (Flink's type serializers \
                in `org.apache.flink.api.common.typeutils` and \
                `org.apache.flink.api.java.typeutils.runtime`, `DataInput/OutputSerializer`, \
                `DataInputDeserializer`, `DataInput/OutputView`, \
                `io.flowkv.nexmark.EventSerializers`), and the rest. A sample belongs to the group \
                of the top-most frame (nearest the executing one) that is in a group, so a JDK \
                `HashMap.get` called from the heap backend is heap backend and a serializer called \
                by a backend is serialization. Every `jdk.ExecutionSample` counts; a \
                `jdk.NativeMethodSample` (a thread in native code: RocksDB's JNI, file I/O) counts \
                only when it falls in a group, because threads idling in native calls (epoll, \
                socket reads) are sampled too. "State access" is FlowKV + RocksDB/ForSt + heap \
                backend. The JFR files are deleted after parsing (kept for failed runs and with \
                `--keep-runs`).

                **Sweeps** run FlowKV alone, once per setting, at the chosen scale. The prefetch \
                hit ratio and FlowKV's bytes read come from the per-store summary line FlowKV's \
                keyed backend logs when it disposes a store (`flowkv-store-stats ...`, summed \
                over the run's stores).

                **Latency** (`--latency`): Q7, Q11-Median and Q11 with the small scale's \
                windows (10 s tumbling windows, 10 s session gap). First one unpaced RocksDB run \
                per query (`--latency-calibration-events`, default 3M) measures its maximum rate, \
                unless `--max-rates` gives it; then every backend runs paced at 25, 50, 75 and \
                100% of that rate for `--latency-seconds` (default 60) of events. Paced means \
                event `n` leaves the source no earlier than its event time, and event time starts \
                at a whole second 2 s after the job starts (the source's enumerator sets it), so \
                event time is wall-clock time; the job passes \
                every result through a recorder that writes the wall-clock time it reached the \
                sink and its window's end. Latency is their difference; windows ending in the \
                first quarter of the stream (at most 15 s) are warm-up and left out. Windows \
                ending after the last event time are closed by the end of the input, not \
                by time, and are left out too. A rate is *sustained* when the source generated at \
                least 95% of the target after the warm-up (slope of the child's progress reports \
                until the last event) and the median \
                latency of the windows ending in the stream's last quarter is at most twice that \
                of the second quarter plus one second (otherwise latency grows without bound). \
                The p99.9 per second of sink time is kept in `latency-timeline.csv` and plotted \
                at the highest rate every backend sustained; run with `--checkpoint-interval` to \
                see checkpoint-synchronized spikes. Latency runs are not compared by checksum \
                (their windows follow the wall clock).

                **Scaling**: Q11-Median on FlowKV and RocksDB at parallelism 1 and 2, the same \
                events and the same TaskManager budget (the MiniCluster divides managed memory \
                among its slots).
                """);
    }
}
