#!/bin/bash
# q5 at large with one FlowKV option changed at a time: the harness's own command line for the
# q5 flowkv run (command.txt of a scripts/bench.sh run), with --conf options appended; and the
# same command line with --backend hashmap. One run each, in this order.
set -u
dir=$1
base=$(sed 's#^/bin/sh -c .*cgroup.procs ##' "$dir/command.txt")
for v in "defaults:" \
         "heap-limit 1000000:--conf state.backend.flowkv.timer-service.heap-limit=1000000" \
         "object-cache 100m:--conf state.backend.flowkv.object-cache.size=100m" \
         "object-cache 100m + heap-limit 1000000:--conf state.backend.flowkv.object-cache.size=100m --conf state.backend.flowkv.timer-service.heap-limit=1000000" \
         "object-cache 200m + heap-limit 1000000:--conf state.backend.flowkv.object-cache.size=200m --conf state.backend.flowkv.timer-service.heap-limit=1000000" \
         "hashmap:HASHMAP"; do
    name=${v%%:*}; extra=${v#*:}
    rm -rf "$dir/tmp" && mkdir -p "$dir/tmp"
    if [[ "$extra" == HASHMAP ]]; then cmd=${base/--backend flowkv/--backend hashmap}; extra=""; else cmd=$base; fi
    line=$(cd "$dir" && eval "$cmd $extra" 2>&1 | grep '^query=')
    echo "$name | $line"
done
