#!/bin/bash
# A/B of the paper's eight queries on FlowKV at the default size (scripts/nexmark.sh defaults):
# base 60824f7 (heap staging and work arrays charged to the budget) vs new (native staging
# buffers and work lists, uncharged heap read buffers), each a clone built with
# `mvn -B -q -DskipTests package -pl nexmark-queries -am`; alternating base/new per query, 3 reps.
# Usage: ab.sh /tmp/ab-base /tmp/ab-new
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && timeout 600 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception" | cut -c1-300); }
for rep in 1 2 3; do
  for q in q5 q5-append q7 q7-session q8 q11 q11-median q12; do
    if [ $((rep % 2)) = 1 ]; then first=$base; second=$new; else first=$new; second=$base; fi
    run $first $q --backend flowkv
    run $second $q --backend flowkv
  done
done
echo DONE
