#!/bin/bash
# sql-q7 on FlowKV before (b7c5cbc) and after (88a94c3) the map-state chunk byte bound, from two git
# worktrees, alternating, then once more each with INFO logs for the store statistics.
set -u
for rep in 1 2; do
  for side in before:/work/wt-after after:/work/wt-chunk; do
    name=${side%%:*}; dir=${side#*:}
    (cd $dir && scripts/nexmark.sh sql-q7 --backend flowkv --events 1000000 --managed-memory 64m \
        --conf io.tmp.dirs=/tmp/ab-$name) > sql-q7-$name-r$rep.out 2>&1
    echo "$name r$rep $(grep '^query=' sql-q7-$name-r$rep.out)"
  done
done
for side in before:/work/wt-after after:/work/wt-chunk; do
  name=${side%%:*}; dir=${side#*:}
  (cd $dir && NEXMARK_LOG_LEVEL=info scripts/nexmark.sh sql-q7 --backend flowkv --events 1000000 \
      --managed-memory 64m --conf io.tmp.dirs=/tmp/ab-$name) > sql-q7-$name-stats.out 2>&1
  echo "$name stats $(grep '^query=' sql-q7-$name-stats.out)"
  grep -h flowkv-store-stats sql-q7-$name-stats.out | grep left-records
done
