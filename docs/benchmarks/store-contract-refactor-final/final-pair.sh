#!/usr/bin/env bash
# After CI: one more alternating pair of q7-session, and a second q11-median after the fix.
set -u
run() { local side=$1 q=$2 rep=$3 wt
  if [[ $side == before ]]; then wt=/work/wt-before; else wt=/work/wt-after; fi
  echo "== $(date -u +%T) $side $q r$rep"
  (cd $wt && scripts/bench.sh --scale large --queries $q --backends flowkv --reps 1 --no-jfr --run-timeout 1800 \
      --out /work/ab3/$q-$side-r$rep --runs-dir /work/ab3-runs/$q-$side-r$rep) 2>&1 | grep "^bench: $q"
}
run before q7-session 3; run afterfix q7-session 2; run afterfix q11-median 2
echo "== $(date -u +%T) done"
