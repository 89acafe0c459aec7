#!/usr/bin/env bash
# Run one NEXMark query embedded (MiniCluster in this JVM), e.g.
#   scripts/nexmark.sh q7 --backend flowkv
#   scripts/nexmark.sh q11 --backend rocksdb --events 5000000 --gap 5s --parallelism 2
# Options: see `scripts/nexmark.sh --help`. Builds nexmark-queries on first use, and again whenever
# a source or pom is newer than the jar. NEXMARK_HEAP overrides the JVM heap (default 2g).
# The same jar runs on a cluster: flink run nexmark-queries/target/nexmark-queries.jar --query q7
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$root/nexmark-queries/target/nexmark-queries.jar"
classpath_file="$root/nexmark-queries/target/classpath.txt"

stale() {
    [[ ! -f "$jar" || ! -f "$classpath_file" ]] && return 0
    [[ -n "$(find "$root/pom.xml" "$root/flowkv-core" "$root/flowkv-flink-backend" \
        "$root/nexmark-queries" -path '*/target' -prune -o -type f \
        \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' \) \
        -newer "$jar" -print -quit)" ]]
}

if stale; then
    echo "nexmark.sh: building nexmark-queries (mvn package -pl nexmark-queries -am) ..." >&2
    (cd "$root" && mvn -B -q -Dstyle.color=never -DskipTests package -pl nexmark-queries -am) >&2
fi

exec java "-Xmx${NEXMARK_HEAP:-2g}" \
    -XX:+UseG1GC \
    --add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-exports=java.base/sun.net.util=ALL-UNNAMED \
    --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED \
    --add-opens=java.base/java.lang=ALL-UNNAMED \
    --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
    --add-opens=java.base/java.net=ALL-UNNAMED \
    --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/java.nio=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-opens=java.base/java.text=ALL-UNNAMED \
    --add-opens=java.base/java.time=ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED \
    --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
    --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED \
    --add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED \
    -Dorg.slf4j.simpleLogger.defaultLogLevel="${NEXMARK_LOG_LEVEL:-error}" \
    -cp "$jar:$(cat "$classpath_file")" \
    io.flowkv.nexmark.NexmarkRunner "$@"
