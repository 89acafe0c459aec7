#!/usr/bin/env python3
"""Where a run's window thread spends its JFR samples, and what the run's threads and GC cost.

Usage: JFR=/path/to/jdk/bin/jfr python3 window-thread.py RUN.jfr [THREAD_SUBSTRING]

Reads the recording with `jfr print --json` (JFR of the JDK that made it, from $JFR or the PATH).
The thread is the first whose name starts with (else contains) THREAD_SUBSTRING (default: the thread with the most
execution samples). Each of its samples goes to the group of the top-most frame (nearest the
executing one) that falls in a group, as the harness's report does, with finer groups:

  flowkv timers      io.flowkv.flink.timers (FlowKV's timer queues)
  flowkv state       the rest of io.flowkv (stores, states, object cache), not io.flowkv.nexmark
  rocksdb            org.rocksdb, org.apache.flink.state.rocksdb
  flink heap timers  org.apache.flink.runtime.state.heap (HeapPriorityQueueSet and its heaps)
  merging windows    MergingWindowSet and the session assigner's mergeWindows
  job serializers    io.flowkv.nexmark.EventSerializers, Flink's type serializers
  rest               everything else (the window operator, the record exchange, the job)

Then the mean CPU load of every thread sampled by jdk.ThreadCPULoad (percent of one core) and the
sum of the garbage collector's pauses.
"""
import collections
import json
import os
import re
import subprocess
import sys

JFR = os.environ.get("JFR", "jfr")

GROUPS = [
    ("flowkv timers", lambda n: n.startswith("io.flowkv.flink.timers.")),
    ("job serializers", lambda n: n.startswith("io.flowkv.nexmark.EventSerializers")),
    ("flowkv state", lambda n: n.startswith("io.flowkv.") and not n.startswith("io.flowkv.nexmark")),
    ("rocksdb", lambda n: n.startswith("org.rocksdb.") or n.startswith("org.apache.flink.state.rocksdb.")),
    ("flink heap timers", lambda n: n.startswith("org.apache.flink.runtime.state.heap.")),
    (
        "merging windows",
        lambda n: ".MergingWindowSet" in n or n.endswith("TimeWindow.mergeWindows")
        or n.endswith("EventTimeSessionWindows.mergeWindows"),
    ),
    (
        "job serializers",
        lambda n: n.startswith("org.apache.flink.api.common.typeutils.")
        or n.startswith("org.apache.flink.api.java.typeutils.runtime."),
    ),
]


def events(path, name, depth=0):
    cmd = [JFR, "print", "--json", "--events", name]
    if depth:
        cmd += ["--stack-depth", str(depth)]
    out = subprocess.run(cmd + [path], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]


def thread_of(values, field):
    """The event's thread name; JFR writes null for a sample without one (counted as "?")."""
    return (values.get(field) or {}).get("javaName") or "?"


def frames_of(values):
    """The sample's stack frames; JFR writes null for a sample without a stack."""
    return (values.get("stackTrace") or {"frames": []})["frames"]


def frame_name(frame):
    return frame["method"]["type"]["name"].replace("/", ".") + "." + frame["method"]["name"]


def group_of(frames):
    for frame in frames:
        name = frame_name(frame)
        for group, matches in GROUPS:
            if matches(name):
                return group
    return "rest"


def iso_seconds(duration):
    """Seconds of an ISO-8601 duration as jfr prints them (PT0.0055S, PT1M2.5S)."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", duration)
    if not m:
        raise ValueError("not a JFR duration: " + duration)
    hours, minutes, seconds = (float(g) if g else 0.0 for g in m.groups())
    return 3600 * hours + 60 * minutes + seconds


def main():
    path = sys.argv[1]
    wanted = sys.argv[2] if len(sys.argv) > 2 else None
    samples = events(path, "jdk.ExecutionSample", 64)
    by_thread = collections.defaultdict(list)
    for e in samples:
        by_thread[thread_of(e["values"], "sampledThread")].append(frames_of(e["values"]))
    if wanted:
        # A name that starts with it first: "Source: nexmark" is also in its coordinator's name.
        thread = next((t for t in by_thread if t.startswith(wanted)), None) or next(
            t for t in by_thread if wanted in t
        )
    else:
        thread = max(by_thread, key=lambda t: len(by_thread[t]))
    stacks = by_thread[thread]
    counts = collections.Counter(group_of(frames) for frames in stacks)
    print(f"thread {thread}: {len(stacks)} execution samples (of {len(samples)} in all threads)")
    for group, n in counts.most_common():
        print(f"  {n:6d} {100.0 * n / len(stacks):5.1f}%  {group}")
    # A thread in native code (RocksDB's JNI calls, file I/O) shows in jdk.NativeMethodSample,
    # not in the execution samples above.
    native = [
        frames_of(e["values"])
        for e in events(path, "jdk.NativeMethodSample", 64)
        if thread_of(e["values"], "sampledThread") == thread
    ]
    counts = collections.Counter(group_of(frames) for frames in native)
    print(f"  native method samples of the same thread: {len(native)}")
    for group, n in counts.most_common():
        print(f"  {n:6d}  {group}")

    loads = collections.defaultdict(list)
    for e in events(path, "jdk.ThreadCPULoad"):
        v = e["values"]
        loads[thread_of(v, "eventThread")].append(v["user"] + v["system"])
    cores = os.cpu_count() or 1
    print(f"thread CPU load (jdk.ThreadCPULoad, mean of its samples, percent of one core; {cores} cores):")
    ranked = sorted(loads.items(), key=lambda kv: -sum(kv[1]) / len(kv[1]))
    for name, values in ranked[:6]:
        print(f"  {100.0 * cores * sum(values) / len(values):6.1f}%  n={len(values):3d}  {name}")

    pauses = collections.Counter()
    count = collections.Counter()
    for e in events(path, "jdk.GarbageCollection"):
        v = e["values"]
        seconds = iso_seconds(v["sumOfPauses"])
        pauses[v["name"]] += seconds
        count[v["name"]] += 1
    for name in pauses:
        print(f"GC {name}: {count[name]} collections, pauses {pauses[name]:.2f} s")


if __name__ == "__main__":
    main()
