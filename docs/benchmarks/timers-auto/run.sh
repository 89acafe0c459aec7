#!/bin/bash
# timer-service AUTO (the default since b604f0d: heap up to a bound, then FlowKV's store) against
# HEAP and FLOWKV. Run from the repository root; writes raw.txt and large/ next to this script.
#  1. the `timers` workload, every timer live until the end (gap 1 day): 12M events, 6.4M live
#     timers, JVM heap 1364m as the harness's 2 GB TaskManager, managed memory 512m, 2 reps,
#     alternating (AUTO's bound at that heap: 1364 MiB / 8 / 128 B = 1.4M timers);
#  2. the paper queries that lean on timers (q7, q8, q12) at the `large` scale through the harness,
#     the three timer services as three columns, 2 interleaved reps.
out=docs/benchmarks/timers-auto
run() { echo "cmd=$*"; NEXMARK_LOG_LEVEL=info /usr/bin/time -f "wall=%e s maxrss=%M KB" timeout 900 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|OutOfMemory|moved from the heap|wall=" | cut -c1-300; }
{
for rep in 1 2; do
  for service in AUTO HEAP FLOWKV; do
    NEXMARK_HEAP=1364m run timers --backend flowkv --events 12000000 --gap 1d --managed-memory 512m \
      --conf state.backend.flowkv.timer-service=$service
  done
done
} > $out/raw.txt 2>&1
scripts/bench.sh --throughput --scale large --queries q7,q8,q12 \
  --backends flowkv,flowkv-heaptimers,flowkv-storedtimers --reps 2 --no-jfr --out $out/large
echo DONE
