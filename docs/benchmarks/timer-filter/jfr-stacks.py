#!/usr/bin/env python3
"""Execution samples of a JFR recording, counted three ways.

  jfr-stacks.py RUN.jfr                  samples per thread, then self and inclusive counts by method
  jfr-stacks.py RUN.jfr --under A DEPTH  samples whose stack holds a frame containing A (method:line),
                                         grouped by the DEPTH frames called from its innermost match
  jfr-stacks.py RUN.jfr --callers A DEPTH  samples with A in their stack, grouped by A's frame and
                                         the DEPTH - 1 frames that called it

Needs the `jfr` tool of a JDK (JFR env var, else `jfr` on the PATH).
"""
import collections
import json
import os
import subprocess
import sys


def samples(path):
    jfr = os.environ.get("JFR", "jfr")
    out = subprocess.run(
        [jfr, "print", "--json", "--events", "jdk.ExecutionSample", "--stack-depth", "96", path],
        capture_output=True, text=True, check=True).stdout
    for event in json.loads(out)["recording"]["events"]:
        values = event["values"]
        # A sample may lack its thread or its stack (JFR writes null then): count it as "?".
        stack = values.get("stackTrace") or {"frames": []}
        frames = [f"{f['method']['type']['name'].split('/')[-1]}.{f['method']['name']}:{f['lineNumber']}"
                  for f in stack["frames"]]
        yield ((values.get("sampledThread") or {}).get("javaName") or "?"), frames


def overview(path):
    threads, own, inclusive = collections.Counter(), collections.Counter(), collections.Counter()
    total = 0
    for thread, frames in samples(path):
        total += 1
        threads[thread[:50]] += 1
        methods = [f.rsplit(":", 1)[0] for f in frames]
        if methods:
            own[methods[0]] += 1
        for m in set(methods):
            inclusive[m] += 1
    print("samples", total)
    for t, c in threads.most_common(8):
        print("  thread", c, t)
    print("-- self")
    for m, c in own.most_common(30):
        print("  ", c, m)
    print("-- inclusive")
    for m, c in inclusive.most_common(40):
        print("  ", c, m)


def grouped(path, anchor, depth, callers):
    groups = collections.Counter()
    for _, frames in samples(path):
        hits = [i for i, f in enumerate(frames) if anchor in f]
        if not hits:
            continue
        if callers:
            i = hits[0]
            groups[" < ".join(frames[i:i + depth])] += 1
        else:
            i = hits[-1]
            groups[" > ".join(reversed(frames[max(0, i - depth):i]))] += 1
    print("==", sum(groups.values()), anchor)
    for g, c in groups.most_common(30):
        print("  ", c, g or "(the frame itself)")


if __name__ == "__main__":
    if len(sys.argv) == 2:
        overview(sys.argv[1])
    elif len(sys.argv) == 5 and sys.argv[2] in ("--under", "--callers"):
        grouped(sys.argv[1], sys.argv[3], int(sys.argv[4]), sys.argv[2] == "--callers")
    else:
        sys.exit(__doc__)
