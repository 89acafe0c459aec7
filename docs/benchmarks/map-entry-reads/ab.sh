#!/bin/bash
# A/B of the RMW store's key check on a remove right after a get of the same key (a map state's
# iteration with Iterator.remove): base reads and verifies the entry's frame again; new finds it
# verified in the frame reader's buffer (and a value served from the write buffer in between no
# longer overwrites that buffer).
# map-join as the harness's large plan runs it (--window 720s: every bid stays buffered until the
# end of the input, then each period timer iterates its auction's bids and removes them), 6M
# events, managed memory 64m, JVM heap 1364m (the harness's 2 GB TaskManager), 2 reps, base and
# new alternating; each side a git worktree built with
# `mvn -B -q -DskipTests package -pl nexmark-queries -am`.
# Usage: ab.sh /path/to/base /path/to/new
base=$1; new=$2
run() { dir=$1; shift; echo "side=$(basename $dir) cmd=$*"; (cd $dir && NEXMARK_HEAP=1364m /usr/bin/time -f "wall=%e s maxrss=%M KB" timeout 1500 scripts/nexmark.sh "$@" 2>&1 | grep -E "^query=|FAILED|Exception|OutOfMemory|wall=" | cut -c1-300); }
for rep in 1 2; do
  if [ $((rep % 2)) = 1 ]; then first=$base; second=$new; else first=$new; second=$base; fi
  run $first map-join --backend flowkv --events 6000000 --managed-memory 64m --window 720s
  run $second map-join --backend flowkv --events 6000000 --managed-memory 64m --window 720s
done
echo DONE
