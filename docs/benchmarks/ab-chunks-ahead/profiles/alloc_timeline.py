#!/usr/bin/env python3
"""Per half second around a restore: window-thread samples and those growing native memory.

Usage: alloc_timeline.py SAMPLES.txt  (the output of `jfr print --events jdk.ExecutionSample
--stack-depth 64` on an async-profiler JFR recording at 1 ms). Time 0 is the last sample of the
restore's background fetch (a stack through FlowKVIncrementalRestoreOperation).
"""
import collections
import re
import sys


def seconds(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


events = []
current = None
for line in open(sys.argv[1]):
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
            events.append(current)
            current = None
        elif line.startswith("    "):
            current["stack"].append(line.strip())

t0 = max(e["t"] for e in events if any("FlowKVIncrementalRestoreOperation" in f for f in e["stack"]))
window = collections.Counter()
growing = collections.Counter()
threads = collections.defaultdict(collections.Counter)
for e in events:
    bucket = int((e["t"] - t0 + 30) * 2) / 2 - 30
    name = re.sub(r"\d+", "N", e["thread"])
    threads[bucket][name] += 1
    if e["thread"].startswith("q7-window"):
        window[bucket] += 1
        if any("OffHeapBuffer.reserved" in f for f in e["stack"]):
            growing[bucket] += 1
print("t(s)  window  growing  chunks-ahead-thread  fetch  compilers")
for b in sorted(window):
    if -3 <= b <= 2:
        th = threads[b]
        compilers = th["CN CompilerThre"]
        print(f"{b:5.1f} {window[b]:7d} {growing[b]:8d} {th['flowkv-aar-chunks-N']:20d} "
              f"{th['flowkv-restore-fetch-N']:6d} {compilers:10d}")
