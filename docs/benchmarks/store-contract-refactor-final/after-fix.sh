#!/usr/bin/env bash
# After the jitter-order fix (9797709): one more run per query and two micro-benchmark runs, on /work/wt-after.
set -u
run() { local q=$1 rep=$2
  echo "== $(date -u +%T) after-fix $q r$rep"
  (cd /work/wt-after && scripts/bench.sh --scale large --queries $q --backends flowkv --reps 1 --no-jfr --run-timeout 1800 \
      --out /work/ab3/$q-afterfix-r$rep --runs-dir /work/ab3-runs/$q-afterfix-r$rep) 2>&1 | grep "^bench: $q"
}
sb() { local rep=$1
  echo "== $(date -u +%T) after-fix store-bench aur r$rep"
  (cd /work/wt-after && scripts/store-bench.sh --pattern aur --backends flowkv --reps 1) > /work/ab3/store-bench-aur-afterfix-r$rep.txt 2>&1
  tail -1 /work/ab3/store-bench-aur-afterfix-r$rep.txt
}
sb 1; sb 2
run q7-session 1; run q11-median 1; run q7 1
echo "== $(date -u +%T) done"
