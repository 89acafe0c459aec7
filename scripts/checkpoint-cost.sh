#!/usr/bin/env bash
# Checkpoint cost of NEXMark Q7 on an embedded MiniCluster: FlowKV incremental (uploads compressed,
# the default, and uncompressed), FlowKV full and RocksDB incremental, one run each. Prints each
# run's per-checkpoint CSV and a markdown summary row (the table of docs/benchmarks/checkpoints.md).
# Extra arguments go to every run, e.g.
#   scripts/checkpoint-cost.sh --events 6000000 --max-rate 60000 --interval 2s
# NEXMARK_HEAP overrides the JVM heap (default 2g). Builds nexmark-queries when needed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/nexmark-queries/target/nexmark-queries.jar"
classpath_file="$root/nexmark-queries/target/classpath.txt"

if [[ ! -f "$jar" || ! -f "$classpath_file" || -n "$(find "$root/pom.xml" "$root/flowkv-core" \
    "$root/flowkv-flink-backend" "$root/nexmark-queries" -path '*/target' -prune -o -type f \
    \( -name '*.java' -o -name 'pom.xml' \) -newer "$jar" -print -quit)" ]]; then
    echo "checkpoint-cost.sh: building nexmark-queries ..." >&2
    (cd "$root" && mvn -B -q -Dstyle.color=never -DskipTests package -pl nexmark-queries -am) >&2
fi

run() {
    java "-Xmx${NEXMARK_HEAP:-2g}" -XX:+UseG1GC \
        --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
        --add-opens=java.base/java.lang=ALL-UNNAMED \
        --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
        --add-opens=java.base/java.util=ALL-UNNAMED \
        --add-opens=java.base/java.nio=ALL-UNNAMED \
        --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
        -cp "$jar:$(cat "$classpath_file")" io.flowkv.nexmark.CheckpointCost "$@"
}

summary=()
for config in "flowkv true" "flowkv-uncompressed true" "flowkv false" "rocksdb true"; do
    set -- $config "${@:1}"
    backend=$1 incremental=$2
    shift 2
    extra=(--label "$backend")
    if [[ $backend == flowkv-uncompressed ]]; then
        extra+=(--set state.backend.flowkv.checkpoint-compression=NONE)
        backend=flowkv
    fi
    echo "== q7 on ${extra[1]}, incremental=$incremental" >&2
    out="$(run --query q7 --backend "$backend" --incremental "$incremental" "${extra[@]}" "$@")"
    echo "$out" | grep -v '^|'
    summary+=("$(echo "$out" | grep '^|')")
done
echo
echo "| query | backend | checkpoints | n | median ms | max ms | median sync ms | max sync ms | mean MB written | max MB written | mean state MB | total MB written | run s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
