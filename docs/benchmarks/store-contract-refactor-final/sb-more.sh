#!/usr/bin/env bash
# Extra AUR store micro-benchmark pairs (the first two pairs spread 533k-977k ops/s).
set -u
sb() { local side=$1 rep=$2 wt
  if [[ $side == before ]]; then wt=/work/wt-before; else wt=/work/wt-after; fi
  echo "== $(date -u +%T) $side store-bench aur r$rep"
  (cd $wt && scripts/store-bench.sh --pattern aur --backends flowkv --reps 1) > /work/ab3/store-bench-aur-$side-r$rep.txt 2>&1
  tail -1 /work/ab3/store-bench-aur-$side-r$rep.txt
}
sb after 3; sb before 3; sb before 4; sb after 4; sb after 5; sb before 5
echo "== $(date -u +%T) done"
