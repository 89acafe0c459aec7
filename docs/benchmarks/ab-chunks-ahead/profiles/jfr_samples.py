#!/usr/bin/env python3
"""The window thread's cpu samples in a q7 restore recording.

Usage: jfr_samples.py timeline|totals SAMPLES.txt, where SAMPLES.txt is the output of
`jfr print --events jdk.ExecutionSample --stack-depth 64` on an async-profiler JFR recording at 1 ms.

timeline: per half second around the restore, the window thread's samples and those growing native
memory (under OffHeapBuffer.reserved: malloc, zeroing and the page faults of a new chunk), and the
samples of the chunk pool, the restore's fetch and the compiler threads. Time 0 is the last sample
of the fetch (a stack through FlowKVIncrementalRestoreOperation). At most 500 per thread and row.

totals: the window thread's samples over the whole run, and those whose stack holds a few frames
(a sample counts under every frame it holds, so the rows overlap).
"""
import collections
import re
import sys

TOTALS = [
    "OffHeapBuffer.reserved",
    "asm_exc_page_fault",
    "PartitionLoader",
    "LoadedPartition.addValue",
    "AarStore.append",
]


def seconds(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def samples(path):
    """Each sample as (time in s, thread name, stack frames from the top)."""
    current = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("jdk.ExecutionSample"):
            current = {"stack": []}
        elif current is not None:
            m = re.match(r"\s+startTime = (\S+)", line)
            if m:
                current["t"] = seconds(m.group(1))
                continue
            m = re.match(r'\s+sampledThread = "([^"]*)"', line)
            if m:
                current["thread"] = m.group(1)
                continue
            if line.startswith("}"):
                yield current["t"], current["thread"], current["stack"]
                current = None
            elif line.startswith("    "):
                current["stack"].append(line.strip())


def holds(stack, frame):
    return any(frame in f for f in stack)


def timeline(events):
    t0 = max(t for t, _, stack in events if holds(stack, "FlowKVIncrementalRestoreOperation"))
    window = collections.Counter()
    growing = collections.Counter()
    threads = collections.defaultdict(collections.Counter)
    for t, thread, stack in events:
        row = int((t - t0 + 30) * 2) / 2 - 30
        threads[row][re.sub(r"\d+", "N", thread)] += 1
        if thread.startswith("q7-window"):
            window[row] += 1
            if holds(stack, "OffHeapBuffer.reserved"):
                growing[row] += 1
    print("t(s)  window  growing  chunks-ahead-thread  fetch  compilers")
    for row in sorted(window):
        if -3 <= row <= 2:
            th = threads[row]
            print(f"{row:5.1f} {window[row]:7d} {growing[row]:8d} {th['flowkv-aar-chunks-N']:20d} "
                  f"{th['flowkv-restore-fetch-N']:6d} {th['CN CompilerThre']:10d}")


def totals(events):
    counts = collections.Counter()
    total = 0
    for _, thread, stack in events:
        if thread.startswith("q7-window"):
            total += 1
            for frame in TOTALS:
                if holds(stack, frame):
                    counts[frame] += 1
    print(f"window thread: {total} samples")
    for frame in TOTALS:
        print(f"{counts[frame]:7d}  {frame}")


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    events = list(samples(path))
    {"timeline": timeline, "totals": totals}[mode](events)
