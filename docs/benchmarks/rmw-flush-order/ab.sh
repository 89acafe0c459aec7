#!/bin/bash
# A/B of the dedup workload (a ValueState per (auction, bidder) pair, first-seen output) on FlowKV
# with managed memory cut to 64 MiB, so that the general store's paged hash index spills to its
# page file (24M events, about 7M distinct keys, index about 10x its cache):
# base 00028c6 (a flush applies its records to the index in insertion order) vs new (fa137d8:
# in the index's page order once it spills), each a git worktree built with
# `mvn -B -q -DskipTests package -pl nexmark-queries -am`; alternating base/new, 3 reps.
# The JVM heap is the harness's for a 2 GB TaskManager with 64m managed memory (1364m).
# Usage: ab.sh /work/bench-wt /work/ab-after
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && NEXMARK_HEAP=1364m /usr/bin/time -f "wall=%e s maxrss=%M KB" timeout 900 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception|OutOfMemory|wall=" | cut -c1-300); }
for rep in 1 2 3; do
  if [ $((rep % 2)) = 1 ]; then first=$base; second=$new; else first=$new; second=$base; fi
  run $first dedup --backend flowkv --events 24000000 --managed-memory 64m
  run $second dedup --backend flowkv --events 24000000 --managed-memory 64m
done
echo DONE
