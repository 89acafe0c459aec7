#!/bin/bash
# Overhead of FlowKV's Flink metrics (issue 17): q7 and q11-median on FlowKV at the default size
# (scripts/nexmark.sh defaults: 4M events, 512m managed memory, no metric reporter), base eee7861
# (before the metrics) vs new (fa137d8: metrics registered, every group on by default), each a
# git worktree built with `mvn -B -q -DskipTests package -pl nexmark-queries -am`; alternating
# base/new per query, 3 reps.
# Usage: ab.sh /work/ab-before-metrics /work/ab-after
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && timeout 600 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception" | cut -c1-300); }
for rep in 1 2 3; do
  for q in q7 q11-median; do
    if [ $((rep % 2)) = 1 ]; then first=$base; second=$new; else first=$new; second=$base; fi
    run $first $q --backend flowkv
    run $second $q --backend flowkv
  done
done
echo DONE
