#!/bin/bash
# Quiet re-run of the AUR paging A/B for the two paper queries on the AUR store: base 8f46fe8 vs
# new 6951806 (each a clone built with `mvn -B -q -DskipTests package -pl nexmark-queries -am`),
# alternating, 3 reps, nothing else running. Usage: ab-quiet.sh /tmp/ab-base /tmp/ab-new
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && timeout 600 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED" | cut -c1-300); }
for rep in 1 2 3; do
  for dir in $base $new; do
    run $dir q7-session --backend flowkv
    run $dir q11-median --backend flowkv
  done
done
echo DONE
