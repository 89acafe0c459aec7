#!/bin/bash
# A/B of the stat table's recent-lookup cache: `before` = 6951806 (a clone), `after` = the
# working tree with WindowStatTable's direct-mapped cache, alternating, 3 reps, nothing else
# running. Usage: ab-recent.sh /tmp/ab-new .
before=$1; after=$2
run() { dir=$1; shift; echo "side=$dir cmd=$*"; (cd $dir && timeout 600 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED" | cut -c1-300); }
for rep in 1 2 3; do
  for dir in $before $after; do
    run $dir q7-session --backend flowkv
    run $dir q11-median --backend flowkv
  done
done
echo DONE
