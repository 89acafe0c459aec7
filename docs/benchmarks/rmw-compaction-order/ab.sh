#!/bin/bash
# A/B of RMW compaction order on the general-state workloads with managed memory cut to 64 MiB, so
# that the general store's paged hash index spills to its page file.
# base ca0f0c5 (a compaction looks every frame up in log order) vs new 686a7c9 (in batches, in the
# index's page order), each a git worktree built with
# `mvn -B -q -DskipTests package -pl nexmark-queries -am`; base and new alternate.
# The JVM heap is the harness's for a 2 GB TaskManager with 64m managed memory (1364m).
# Usage: ab.sh /work/wt-base /work/wt-new [part...]
#   mapjoin720  map-join as the harness's large plan runs it (--window 720s: every bid stays
#               buffered until the end of the input, then every period timer fires and removes
#               its bids: the removals make the dead bytes compactions reclaim), 6M events, 2 reps
#   mapjoin     map-join at nexmark.sh's default period, 6M events, 2 reps
#   dedup       dedup, 24M events (about 7M distinct keys, insert-only), 3 reps
base=$1; new=$2; shift 2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && NEXMARK_HEAP=1364m /usr/bin/time -f "wall=%e s maxrss=%M KB" timeout 1500 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception|OutOfMemory|wall=" | cut -c1-300); }
ab() { reps=$1; shift; for rep in $(seq 1 $reps); do
  if [ $((rep % 2)) = 1 ]; then first=$base; second=$new; else first=$new; second=$base; fi
  run $first "$@"; run $second "$@"; done; }
for part in "$@"; do case $part in
  mapjoin720) ab 2 map-join --backend flowkv --events 6000000 --managed-memory 64m --window 720s ;;
  mapjoin) ab 2 map-join --backend flowkv --events 6000000 --managed-memory 64m ;;
  dedup) ab 3 dedup --backend flowkv --events 24000000 --managed-memory 64m ;;
esac; done
echo DONE
