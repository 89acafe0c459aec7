#!/usr/bin/env bash
# run-pairs.sh RUNS_DIR OUT_DIR: q11 and q12 at large, FlowKV and HashMap alternating, two runs
# each, every child JVM with -Xlog:gc. RUNS_DIR is the --runs-dir of the harness run whose child
# command lines (command.txt) are re-run; runbe.sh swaps the backend.
runs=$1; out=$2; here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for q in q11 q12; do
  for i in 1 2; do
    for be in flowkv hashmap; do
      EXTRA="-Xlog:gc:file=$out/$q-$be-$i-gc.txt" \
        "$here/runbe.sh" "$runs/throughput-$q-flowkv-p1-r1" "$out/$q-$be-$i.txt" $be \
        > "$out/$q-$be-$i-result.txt"
    done
  done
done
# Per run: young pauses, their total and the longest.
for f in "$out"/*-gc.txt; do
  echo "$(basename $f -gc.txt) $(grep -c 'Pause Young' $f) young," \
    "$(grep Pause $f | grep -o '[0-9.]*ms$' | tr -d ms \
       | awk '{s+=$1; if ($1>m) m=$1} END {printf "total %.0f ms, longest %.1f ms", s, m}')"
done
