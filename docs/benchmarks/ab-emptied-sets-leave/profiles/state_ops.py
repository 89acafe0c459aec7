#!/usr/bin/env python3
"""Window-thread samples of a q11 profile by the first state-backend frame on each stack.

Usage: state_ops.py FILE.collapsed.gz   (async-profiler collapsed stacks, threads=true)
Prints the thread's total and, for each backend entry point (FlowKV's or Flink's heap backend),
the samples under it; "other" is everything else (Flink, the job, the JVM).
"""
import collections
import gzip
import sys

PREFIXES = ("io/flowkv/flink", "io/flowkv/core", "org/apache/flink/runtime/state/heap")

counts = collections.Counter()
total = 0
with gzip.open(sys.argv[1], "rt") as f:
    for line in f:
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        frames = stack.split(";")
        if not frames[0].startswith("[q11-window"):
            continue
        n = int(n)
        total += n
        first = next((fr for fr in frames if fr.startswith(PREFIXES)), "other")
        counts[first] += n
print(f"window thread: {total} samples")
for frame, n in counts.most_common(12):
    print(f"{n:7d} {100.0 * n / total:5.1f}%  {frame}")
