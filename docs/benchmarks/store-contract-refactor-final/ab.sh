#!/usr/bin/env bash
# A/B of the store contract + AUR parts refactor: before = 007c6d4 (/work/wt-before), after = 67aebc3 (/work/wt-after): the whole of issue 18.
set -u
while pgrep -f "io.flowkv.bench.harness.Bench" >/dev/null; do sleep 10; done
run() { # side query rep
  local side=$1 q=$2 rep=$3 wt
  if [[ $side == before ]]; then wt=/work/wt-before; else wt=/work/wt-after; fi
  echo "== $(date -u +%T) $side $q r$rep"
  (cd $wt && scripts/bench.sh --scale large --queries $q --backends flowkv --reps 1 --no-jfr --run-timeout 1800 \
      --out /work/ab3/$q-$side-r$rep --runs-dir /work/ab3-runs/$q-$side-r$rep) 2>&1 | grep "^bench: $q"
}
sb() { # side rep
  local side=$1 rep=$2 wt
  if [[ $side == before ]]; then wt=/work/wt-before; else wt=/work/wt-after; fi
  echo "== $(date -u +%T) $side store-bench aur r$rep"
  (cd $wt && scripts/store-bench.sh --pattern aur --backends flowkv --reps 1) > /work/ab3/store-bench-aur-$side-r$rep.txt 2>&1
  tail -1 /work/ab3/store-bench-aur-$side-r$rep.txt
}
run before q7 1; run after q7 1
run after q7-session 1; run before q7-session 1
run before q11-median 1; run after q11-median 1
sb before 1; sb after 1; sb after 2; sb before 2
run after q7 2; run before q7 2
run before q7-session 2; run after q7-session 2
run after q11-median 2; run before q11-median 2
echo "== $(date -u +%T) done"
