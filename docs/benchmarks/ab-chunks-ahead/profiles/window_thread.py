#!/usr/bin/env python3
"""Whole-run window-thread samples of a q7 restore recording, and those under a few frames.

Usage: window_thread.py SAMPLES.txt  (`jfr print --events jdk.ExecutionSample --stack-depth 64`
of an async-profiler JFR recording at 1 ms). A sample counts under every listed frame its stack
holds, so the rows overlap.
"""
import collections
import re
import sys

FRAMES = [
    "OffHeapBuffer.reserved",
    "asm_exc_page_fault",
    "PartitionLoader",
    "LoadedPartition.addValue",
    "AarStore.append",
]

counts = collections.Counter()
total = 0
current = None
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("jdk.ExecutionSample"):
        current = {"stack": []}
    elif current is not None:
        m = re.match(r'\s+sampledThread = "([^"]*)"', line)
        if m:
            current["thread"] = m.group(1)
            continue
        if line.startswith("}"):
            if current["thread"].startswith("q7-window"):
                total += 1
                for frame in FRAMES:
                    if any(frame in f for f in current["stack"]):
                        counts[frame] += 1
            current = None
        elif line.startswith("    "):
            current["stack"].append(line.strip())
print(f"window thread: {total} samples")
for frame in FRAMES:
    print(f"{counts[frame]:7d}  {frame}")
