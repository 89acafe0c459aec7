#!/bin/bash
# Timers on the heap vs timers stored by FlowKV (state.backend.flowkv.timer-service) vs RocksDB
# (its default: timers in RocksDB), alternating, 2 reps. Run from the repository root.
#  1. the `timers` workload with every timer live until the end (gap 1 day): 12M events,
#     ~11M timers, JVM heap 1364m as the harness's 2 GB TaskManager, managed memory 512m;
#  2. paper queries that lean on timers (q7, q8, q12), default size, timers HEAP vs FLOWKV.
# raw-v1-membership.txt: part 1 with the first design (RMW membership index), before 20dbab4.
stored="--conf state.backend.flowkv.timer-service=FLOWKV"
run() { echo "cmd=$*"; /usr/bin/time -f "wall=%e s maxrss=%M KB" timeout 900 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|OutOfMemory|wall=" | cut -c1-300; }
for rep in 1 2; do
  NEXMARK_HEAP=1364m run timers --backend flowkv --events 12000000 --gap 1d --managed-memory 512m
  NEXMARK_HEAP=1364m run timers --backend flowkv --events 12000000 --gap 1d --managed-memory 512m $stored
  NEXMARK_HEAP=1364m run timers --backend rocksdb --events 12000000 --gap 1d --managed-memory 512m
done
for rep in 1 2; do
  for q in q7 q8 q12; do
    run $q --backend flowkv
    run $q --backend flowkv $stored
  done
done
echo DONE
