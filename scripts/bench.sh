#!/usr/bin/env bash
# The end-to-end harness: NEXMark queries on FlowKV, RocksDB, ForSt and HashMap, one JVM per run
# with the same memory budget, results as CSV + README.md with plots under docs/benchmarks/, e.g.
#   scripts/bench.sh --quick                 # all queries, flowkv vs rocksdb, small, < 10 min
#   scripts/bench.sh --scale large           # the full throughput comparison (see --dry-run)
#   scripts/bench.sh --all --scale large     # throughput, sweeps, scaling
#   scripts/bench.sh --report-only           # README.md again from the committed CSVs
#   scripts/bench.sh --queries q7 --backends flowkv,flowkv-base --base-rev HEAD~1  # A/B of 2 commits
# Options: scripts/bench.sh --help. Method: docs/benchmarks/README.md. Builds nexmark-queries and
# flowkv-bench on first use, and again whenever a source or pom is newer than the build.
# The last line on stdout is
#   geomean_flowkv_vs_rocksdb=.. min_flowkv_vs_rocksdb=.. geomean_flowkv_vs_forst=.. queries=.. checksums_equal=..
# (with rocksdb-heaptimers in --backends, its geomean, minimum and query count before checksums_equal).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/nexmark-queries/target/nexmark-queries.jar"
classpath_file="$root/nexmark-queries/target/classpath.txt"
bench_classes="$root/flowkv-bench/target/classes"
stamp="$root/flowkv-bench/target/harness.stamp"

stale() {
    [[ ! -f "$jar" || ! -f "$classpath_file" || ! -f "$stamp" ]] && return 0
    [[ -n "$(find "$root/pom.xml" "$root/flowkv-core" "$root/flowkv-flink-backend" \
        "$root/nexmark-queries" "$root/flowkv-bench" -path '*/target' -prune -o -type f \
        \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' \) \
        -newer "$stamp" -print -quit)" ]]
}

if stale; then
    echo "bench.sh: building (mvn package -pl flowkv-bench -am) ..." >&2
    (cd "$root" && mvn -B -q -Dstyle.color=never -DskipTests package -pl flowkv-bench -am) >&2
    touch "$stamp"
fi

# --base-rev REV: backend flowkv-base runs FlowKV as built at REV, from a detached work tree of this
# repository under target/bench-base/<commit> (built once per commit, kept for later runs).
base_rev=""
report_only=false
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
        --base-rev) base_rev="${args[i + 1]:-}" ;;
        --report-only) report_only=true ;;
    esac
done
base_props=()
if [[ -n "$base_rev" && "$report_only" == false ]]; then
    base_commit="$(git -C "$root" rev-parse --verify --quiet "$base_rev^{commit}")" || {
        echo "bench.sh: --base-rev $base_rev is not a commit of $root" >&2
        exit 2
    }
    base_tree="$root/target/bench-base/$base_commit"
    base_jar="$base_tree/nexmark-queries/target/nexmark-queries.jar"
    base_cp_file="$base_tree/nexmark-queries/target/classpath.txt"
    if [[ ! -f "$base_jar" || ! -f "$base_cp_file" ]]; then
        echo "bench.sh: building --base-rev $base_rev ($base_commit) in $base_tree ..." >&2
        if [[ ! -d "$base_tree" ]]; then
            git -C "$root" worktree prune
            git -C "$root" worktree add --detach --quiet "$base_tree" "$base_commit"
        fi
        (cd "$base_tree" && mvn -B -q -Dstyle.color=never -DskipTests \
            -Dspotless.check.skip=true package -pl nexmark-queries -am) >&2
    fi
    base_props=(-Dflowkv.bench.base-classpath="$base_jar:$(cat "$base_cp_file")"
        -Dflowkv.bench.base-commit="$base_commit")
fi

cd "$root"
exec java -Xmx1g -Djava.awt.headless=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
    -Dflowkv.bench.child-classpath="$jar:$(cat "$classpath_file")" \
    ${base_props[@]+"${base_props[@]}"} \
    -cp "$bench_classes:$jar:$(cat "$classpath_file")" \
    io.flowkv.bench.harness.Bench "$@"
