#!/bin/bash
# Stored timers with the present-timer cache (fa137d8) vs before it (00028c6) vs heap timers,
# on the paper's queries that register a timer per element (q7, q8, q12) at the default size
# (scripts/nexmark.sh defaults: 4M events, 512m managed memory), and on `timers` (every bid arms
# a timer per (auction, bidder) pair; 12M events, --gap 1d: 6.4M live timers, heap 1364m).
# Each side a git worktree built with `mvn -B -q -DskipTests package -pl nexmark-queries -am`;
# 3 reps, the order of the three variants rotating per rep.
# Usage: ab-cache.sh /work/bench-wt /work/ab-after
old=$1; new=$2
run() { dir=$1; label=$2; shift 2; echo "side=$(basename $dir) variant=$label cmd=$*"; (cd $dir && NEXMARK_HEAP=1364m /usr/bin/time -f "wall=%e s maxrss=%M KB" timeout 900 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception|OutOfMemory|wall=" | cut -c1-300); }
stored=(--conf state.backend.flowkv.timer-service=FLOWKV)
for rep in 1 2 3; do
  for q in q7 q8 q12 timers; do
    extra=(); [ $q = timers ] && extra=(--events 12000000 --gap 1d)
    variants=("$old stored-before ${stored[*]}" "$new stored-cache ${stored[*]}" "$new heap")
    for k in 0 1 2; do
      v=(${variants[$(((k + rep) % 3))]})
      run ${v[0]} ${v[1]} $q --backend flowkv "${extra[@]}" "${v[@]:2}"
    done
  done
done
echo DONE
