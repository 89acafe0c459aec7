#!/usr/bin/env bash
# Store micro-benchmark: one access pattern's trace replayed against the FlowKV store, RocksDB
# (set up as Flink's RocksDB backend sets it up) and a heap map, interleaved, same memory budget.
#
#   scripts/store-bench.sh --pattern aar|rmw|aur [--quick] [--sweep] [driver options...]
#
# Driver options: --reps n, --warmup n, --budget-mb m, --backends flowkv,rocksdb,heap, --seed s,
# --size tiny|quick|full. The last line printed is machine-readable (pattern=... ratio_vs_rocksdb=...).
# Needs JDK 17 and Maven; builds flowkv-bench on first use (and again when sources changed).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jar=flowkv-bench/target/flowkv-benchmarks.jar

usage() {
    sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
}

pattern=""
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --pattern) [[ $# -ge 2 ]] || usage; pattern="$2"; args+=("$1" "$2"); shift 2 ;;
        -h|--help) usage ;;
        *) args+=("$1"); shift ;;
    esac
done
case "$pattern" in
    aar|rmw|aur) ;;
    *) echo "store-bench.sh: --pattern must be aar, rmw or aur" >&2; usage ;;
esac

if [[ ! -f "$jar" ]] || [[ -n "$(find pom.xml flowkv-core flowkv-bench/pom.xml flowkv-bench/src \
        -newer "$jar" -type f \( -name '*.java' -o -name 'pom.xml' \) -print -quit)" ]]; then
    echo "building $jar ..." >&2
    mvn -B -q -DskipTests package -pl flowkv-bench -am >&2
fi

# A fixed heap for every target; the stores' own budget is --budget-mb (the same for all).
# The --add-* flags are Flink's for JDK 17 (its env.java.opts.all); FlowKV needs none of its own.
exec java -Xms2g -Xmx2g -XX:+UseG1GC \
    --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
    --add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
    --add-opens java.base/java.lang=ALL-UNNAMED \
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED \
    --add-opens java.base/java.nio=ALL-UNNAMED \
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
    -cp "$jar" io.flowkv.bench.StoreBench "${args[@]}"
