#!/bin/bash
# The paper's queries whose state is on the RMW store (q5, q11, q12), at the large scale, before
# and after this session's RMW changes: base ca0f0c5, new 15f42c6 (compaction in index page order,
# 686a7c9; no second frame read for a remove right after a get, 1e3a831). Each side a git
# worktree built with `mvn -B -q -DskipTests package -pl nexmark-queries -am`; FlowKV only, one
# run per query per side and repetition, base and new alternating, 2 repetitions.
# Usage: ab.sh /work/wt-base /work/wt-new OUT
base=$1; new=$2; out=$3
for rep in 1 2; do
  if [ $((rep % 2)) = 1 ]; then order="$base $new"; else order="$new $base"; fi
  for side in $order; do
    name=$(basename $side)
    (cd $side && scripts/bench.sh --throughput --scale large --queries q5,q11,q12 --backends flowkv --reps 1 --no-jfr --out $out/$name-rep$rep 2>&1 | grep "^bench: q")
  done
done
echo DONE
