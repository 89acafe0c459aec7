#!/bin/bash
# Four more alternating reps of the two queries whose medians moved most in ab.sh (q12, q7-session).
# Usage: ab-more.sh /tmp/ab-base /tmp/ab-new
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && timeout 600 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception" | cut -c1-300); }
for rep in 1 2 3 4; do
  for q in q12 q7-session; do
    if [ $((rep % 2)) = 1 ]; then first=$new; second=$base; else first=$base; second=$new; fi
    run $first $q --backend flowkv
    run $second $q --backend flowkv
  done
done
echo DONE
