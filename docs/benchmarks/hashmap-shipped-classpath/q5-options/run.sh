#!/bin/bash
# q5 at large with one FlowKV option changed at a time: the harness's own command line for the
# q5 flowkv run (command.txt of a scripts/bench.sh run), with --conf options appended; and the
# same command line with --backend hashmap. Two rounds, one run of each per round, in this order.
set -u
dir=$1
base=$(sed 's#^/bin/sh -c .*cgroup.procs ##' "$dir/command.txt")
for round in 1 2; do
for v in "defaults:" \
         "heap-limit 2000000:--conf state.backend.flowkv.timer-service.heap-limit=2000000" \
         "object-cache 100m:--conf state.backend.flowkv.object-cache.size=100m" \
         "object-cache 200m:--conf state.backend.flowkv.object-cache.size=200m" \
         "object-cache 200m + heap-limit 2000000:--conf state.backend.flowkv.object-cache.size=200m --conf state.backend.flowkv.timer-service.heap-limit=2000000" \
         "hashmap:HASHMAP"; do
    name=${v%%:*}; extra=${v#*:}
    rm -rf "$dir/tmp" && mkdir -p "$dir/tmp"
    if [[ "$extra" == HASHMAP ]]; then cmd=${base/--backend flowkv/--backend hashmap}; extra=""; else cmd=$base; fi
    line=$(cd "$dir" && eval "$cmd $extra" 2> "$dir/tmp/run.err" | grep '^query=')
    moved=$(grep -c "timers moved from the heap" "$dir/tmp/run.err" || true)
    echo "round $round | $name | timer queues moved into the store: $moved | $line"
done
done
