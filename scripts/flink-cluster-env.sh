# Shared by scripts/flink-cluster.sh and scripts/flink (sourced, not run): where the cluster
# lives, its classpath and the JVM flags. Expects $root, the repository root.

cluster_dir="${FLINK_CLUSTER_DIR:-$root/build/flink-cluster}"
mkdir -p "$cluster_dir"
cluster_dir="$(cd "$cluster_dir" && pwd)"

# The JDK 17 flags of Flink's distribution config.yaml (env.java.opts.all), written into the
# cluster's config.yaml and given to every JVM of the cluster and to the client.
java_opts_all="--add-exports=java.base/sun.net.util=ALL-UNNAMED \
--add-exports=java.base/sun.nio.ch=ALL-UNNAMED \
--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED \
--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED \
--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED \
--add-opens=java.base/java.lang=ALL-UNNAMED \
--add-opens=java.base/java.net=ALL-UNNAMED \
--add-opens=java.base/java.io=ALL-UNNAMED \
--add-opens=java.base/java.nio=ALL-UNNAMED \
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
--add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
--add-opens=java.base/java.text=ALL-UNNAMED \
--add-opens=java.base/java.time=ALL-UNNAMED \
--add-opens=java.base/java.util=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED \
--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED"

flink_classpath_file="$cluster_dir/flink-classpath.txt"
# No plugins; without this Flink looks for ./plugins relative to the working directory.
export FLINK_PLUGINS_DIR="$cluster_dir/plugins"
mkdir -p "$FLINK_PLUGINS_DIR"

# The command line of a process, arguments separated by spaces ("" if it is gone).
command_line() {
    if [[ -r "/proc/$1/cmdline" ]]; then
        tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline" || true
    else
        ps -o args= -p "$1" 2>/dev/null || true
    fi
}

# Whether pid runs one of this cluster's JVMs: a recorded pid alone could have been reused.
is_cluster_process() {
    [[ "$(command_line "$1")" == *"--configDir $cluster_dir/conf"* ]]
}
flowkv_version="$(sed -n 's:^    <version>\(.*\)</version>$:\1:p' "$root/pom.xml" | head -n 1)"
flowkv_jar="$root/flowkv-flink-dist/target/flowkv-flink-$flowkv_version.jar"

# Flink's jars (the distribution's lib/ without FlowKV), resolved by Maven into ~/.m2 once and
# listed in flink-classpath.txt; resolved again when the pom changes.
prepare_classpath() {
    local pom="$root/scripts/flink-cluster/pom.xml"
    if [[ ! -s "$flink_classpath_file" || "$pom" -nt "$flink_classpath_file" || "$root/pom.xml" -nt "$flink_classpath_file" ]]; then
        echo "resolving Flink's jars with Maven ($pom) ..." >&2
        if ! (cd "$root" && mvn -B -q -Dstyle.color=never -f "$pom" dependency:build-classpath \
                -Dmdep.outputFile="$flink_classpath_file") >&2; then
            rm -f "$flink_classpath_file"
            echo "flink-cluster: resolving Flink's jars failed (mvn -f $pom dependency:build-classpath)" >&2
            exit 1
        fi
    fi
}

flink_classpath() {
    cat "$flink_classpath_file"
}

# lib/ first, as bin/ scripts put the distribution's lib/*.jar on the classpath.
cluster_classpath() {
    local cp="" jar
    for jar in "$cluster_dir"/lib/*.jar; do
        [[ -e "$jar" ]] && cp="$cp$jar:"
    done
    echo "$cp$(flink_classpath)"
}

# FlowKV's shaded jar into lib/, built first when missing or older than a source or pom.
install_flowkv() {
    if [[ ! -f "$flowkv_jar" ]] || [[ -n "$(find "$root/pom.xml" "$root/flowkv-core" \
            "$root/flowkv-flink-backend" "$root/flowkv-flink-dist" -path '*/target' -prune -o -type f \
            \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' \) \
            -newer "$flowkv_jar" -print -quit)" ]]; then
        echo "building FlowKV's lib jar (mvn package -pl flowkv-flink-dist -am) ..." >&2
        (cd "$root" && mvn -B -q -Dstyle.color=never -DskipTests package -pl flowkv-flink-dist -am) >&2 \
            || { echo "flink-cluster: building $flowkv_jar failed" >&2; exit 1; }
    fi
    rm -f "$cluster_dir"/lib/flowkv-flink-*.jar
    cp "$flowkv_jar" "$cluster_dir/lib/"
}
