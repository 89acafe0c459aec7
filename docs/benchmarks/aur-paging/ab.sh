#!/bin/bash
# A/B of the AUR stat-table paging (ddb385e..df48959): base 8f46fe8 vs new 6951806, alternating,
# 3 reps, each side a clone built with `mvn -B -q -DskipTests package -pl nexmark-queries -am`.
# Usage: docs/benchmarks/aur-paging/ab.sh /tmp/ab-base /tmp/ab-new > raw.txt
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && timeout 600 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED" | cut -c1-300); }
for rep in 1 2 3; do
  for dir in $base $new; do
    run $dir q7-session --backend flowkv
    run $dir q11-median --backend flowkv
    run $dir count --backend flowkv --events 6000000 --managed-memory 64m
  done
done
run $new count --backend rocksdb --events 6000000 --managed-memory 64m
echo DONE
