#!/usr/bin/env bash
# A/B for this sitting: (1) issue 18's last parts, before = 0c5409e (/work/wt-18before), after = 4c8d4ec (/work/wt-18after);
# (2) small maps inline (issue 16), before = 4c8d4ec (/work/wt-18after), after = the map commit (/work/wt-map).
set -u
wt() { case $1 in b18) echo /work/wt-18before;; a18) echo /work/wt-18after;; map) echo /work/wt-map;; esac; }
run() { # side query rep backends
  local side=$1 q=$2 rep=$3 be=${4:-flowkv}
  echo "== $(date -u +%T) $side $q r$rep $be"
  (cd $(wt $side) && scripts/bench.sh --scale large --queries $q --backends $be --reps 1 --no-jfr --run-timeout 1800 \
      --out /work/ab5/$q-$side-r$rep --runs-dir /work/ab5-runs/$q-$side-r$rep) 2>&1 | grep "^bench: $q"
}
sql() { # side query rep backends
  local side=$1 q=$2 rep=$3 be=${4:-flowkv}
  echo "== $(date -u +%T) $side $q r$rep $be"
  (cd $(wt $side) && scripts/bench.sh --suite sql --scale large --queries $q --backends $be --reps 1 --events 1000000 \
      --managed-memory 64m --run-timeout 360 --no-jfr \
      --out /work/ab5/$q-$side-$be-r$rep --runs-dir /work/ab5-runs/$q-$side-$be-r$rep) 2>&1 | grep "^bench: $q"
}
sb() { # side rep
  local side=$1 rep=$2
  echo "== $(date -u +%T) $side store-bench aur r$rep"
  (cd $(wt $side) && scripts/store-bench.sh --pattern aur --backends flowkv --reps 1) > /work/ab5/store-bench-aur-$side-r$rep.txt 2>&1
  tail -1 /work/ab5/store-bench-aur-$side-r$rep.txt
}

# (1) issue 18's last parts: AUR micro-benchmark three pairs, q7-session one pair.
sb b18 1; sb a18 1; sb a18 2; sb b18 2; sb b18 3; sb a18 3
run a18 q7-session 1; run b18 q7-session 1
# (2) small maps inline: the SQL queries with map state, two alternating reps; RocksDB beside them (not q9/q20: it times out).
for rep in 1 2; do
  for q in sql-q19 sql-q3 sql-q4 sql-q9 sql-q20; do
    if [[ $rep == 1 ]]; then sql a18 $q $rep; sql map $q $rep; else sql map $q $rep; sql a18 $q $rep; fi
    case $q in sql-q19|sql-q3|sql-q4) sql map $q $rep rocksdb;; esac
  done
done
echo "== $(date -u +%T) done"
