#!/usr/bin/env bash
# A standalone Flink 2.3 session cluster on this machine, FlowKV installed, from Maven artifacts
# (Flink's binary tarball is not needed):
#
#   scripts/flink-cluster.sh start [--taskmanagers N (2)] [--slots S (2)] [--rest-port P (8081)]
#                                  [--rpc-port P (6123)] [--tm-memory SIZE (1728m)]
#   scripts/flink-cluster.sh stop
#   scripts/flink-cluster.sh status
#
# then submit jobs with scripts/flink (Flink's CLI), e.g.
#   scripts/flink run nexmark-queries/target/nexmark-queries.jar --query q7
#
# The cluster lives in build/flink-cluster/ (FLINK_CLUSTER_DIR overrides): conf/config.yaml
# (state.backend.type: flowkv), lib/ (the shaded FlowKV jar), log/, pids/, checkpoints/,
# savepoints/, flowkv/ (FlowKV's working files), tmp/. `start` rewrites conf/ from the options;
# `stop` ends the processes `start` recorded, and nothing else. Flink's own jars are resolved by
# Maven from scripts/flink-cluster/pom.xml (cached in ~/.m2 after the first time); FlowKV's jar is
# built when missing or older than the sources. FLINK_CLUSTER_TIMEOUT (s, default 120) bounds the
# wait for the TaskManagers to register. docs/deployment.md has the details.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/flink-cluster-env.sh
source "$root/scripts/flink-cluster-env.sh"

usage() {
    sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

die() {
    echo "flink-cluster.sh: $*" >&2
    exit 1
}

# Roles recorded under pids/, JobManager first.
recorded_roles() {
    [[ -d "$cluster_dir/pids" ]] || return 0
    [[ -f "$cluster_dir/pids/jobmanager.pid" ]] && echo jobmanager
    local f
    for f in "$cluster_dir"/pids/taskmanager-*.pid; do
        [[ -e "$f" ]] || continue
        basename "$f" .pid
    done | sort -t- -k2 -n
}

pid_of() {
    cat "$cluster_dir/pids/$1.pid"
}

cmd_status() {
    local roles role pid all=0
    roles="$(recorded_roles)"
    [[ -n "$roles" ]] || die "no cluster was started in $cluster_dir"
    for role in $roles; do
        pid="$(pid_of "$role")"
        if is_cluster_process "$pid"; then
            echo "$role pid=$pid running"
        else
            echo "$role pid=$pid stopped"
            all=1
        fi
    done
    return "$all"
}

cmd_stop() {
    local roles role pid waited
    roles="$(recorded_roles)"
    if [[ -z "$roles" ]]; then
        echo "flink-cluster.sh: no cluster was started in $cluster_dir, nothing to stop" >&2
        return 0
    fi
    # TaskManagers first, as Flink's stop-cluster.sh does, so they do not try to reconnect. The
    # pid files stay, so that status can report the processes as stopped.
    roles="$(echo "$roles" | grep -v '^jobmanager$' || true; echo "$roles" | grep '^jobmanager$' || true)"
    for role in $roles; do
        pid="$(pid_of "$role")"
        if is_cluster_process "$pid"; then
            kill "$pid" 2>/dev/null || true
        fi
    done
    for role in $roles; do
        pid="$(pid_of "$role")"
        waited=0
        while is_cluster_process "$pid" && ((waited < 300)); do
            sleep 0.1
            waited=$((waited + 1))
        done
        if is_cluster_process "$pid"; then
            echo "flink-cluster.sh: $role pid=$pid did not stop within 30 s, killing it" >&2
            kill -9 "$pid" 2>/dev/null || true
            sleep 0.5
        fi
        echo "$role pid=$pid stopped"
    done
}

# The JVM and dynamic-config lines BashJavaUtils prints for a process of this configuration, as
# Flink's bin/ scripts use them: $1 is GET_TM_RESOURCE_PARAMS or GET_JM_RESOURCE_PARAMS.
resource_params() {
    local out
    if ! out="$(java -cp "$(flink_classpath)" \
        -Dlog.file="$cluster_dir/log/bash-java-utils.log" \
        -Dlog4j.configurationFile="file:$cluster_dir/conf/log4j.properties" \
        org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$cluster_dir/conf" 2>&1)"; then
        echo "$out" >&2
        die "BashJavaUtils $1 failed (see $cluster_dir/log/bash-java-utils.log)"
    fi
    out="$(echo "$out" | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p' | tail -n 2)"
    [[ "$(echo "$out" | wc -l)" -eq 2 ]] || die "BashJavaUtils $1 printed no resource parameters"
    echo "$out"
}

write_conf() {
    local taskmanagers="$1" slots="$2" rest_port="$3" rpc_port="$4" tm_memory="$5"
    mkdir -p "$cluster_dir"/{conf,lib,log,pids,checkpoints,savepoints,flowkv,tmp}
    cat > "$cluster_dir/conf/config.yaml" <<EOF
# Written by scripts/flink-cluster.sh start; rewritten on every start.
jobmanager:
  rpc:
    address: localhost
    port: $rpc_port
  bind-host: localhost
  memory:
    process:
      size: 1024m
taskmanager:
  host: localhost
  bind-host: localhost
  numberOfTaskSlots: $slots
  memory:
    process:
      size: $tm_memory
rest:
  address: localhost
  bind-address: localhost
  port: $rest_port
parallelism:
  default: 1
io:
  tmp:
    dirs: $cluster_dir/tmp
# The REST API's metric values are refreshed every second (Flink's default: 10 s).
metrics:
  fetcher:
    update-interval: 1000

# FlowKV, installed in lib/ (flowkv-flink-dist's shaded jar).
state:
  backend:
    type: flowkv
    flowkv:
      localdir: $cluster_dir/flowkv
execution:
  checkpointing:
    storage: filesystem
    dir: file://$cluster_dir/checkpoints
    savepoint-dir: file://$cluster_dir/savepoints
# Job jars that bundle FlowKV too (nexmark-queries.jar does) use lib/'s copy, so there is one
# FlowKV per JVM whatever the job jar carries.
classloader:
  parent-first-patterns:
    additional: io.flowkv.flink.;io.flowkv.core.;io.flowkv.shaded.;flowkv

# Flink's JDK 17 module flags (as in the distribution's config.yaml); FlowKV needs none of its own.
env:
  java:
    opts:
      all: $java_opts_all
EOF
    cat > "$cluster_dir/conf/log4j.properties" <<'EOF'
# Every process logs to the file its start command names in -Dlog.file.
monitorInterval = 30
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
logger.pekko.name = org.apache.pekko
logger.pekko.level = INFO
logger.netty.name = org.apache.flink.shaded.netty4.io.netty.channel.nio.NioEventLoop
logger.netty.level = OFF
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
EOF
    # The client (scripts/flink): warnings to its log file, as bin/flink does.
    sed -e 's/^rootLogger.level = INFO/rootLogger.level = WARN/' \
        "$cluster_dir/conf/log4j.properties" > "$cluster_dir/conf/log4j-cli.properties"
    echo "$taskmanagers" > "$cluster_dir/conf/taskmanagers"
}

# Starts one JVM in the background with its log files; records and prints its pid.
launch() {
    local role="$1" main_class="$2" jvm_params="$3" dynamic_configs="$4"
    local pid
    # shellcheck disable=SC2086 # the parameter lines are lists of flags
    nohup java $jvm_params $java_opts_all \
        -Dlog.file="$cluster_dir/log/$role.log" \
        -Dlog4j.configurationFile="file:$cluster_dir/conf/log4j.properties" \
        -cp "$(cluster_classpath)" \
        "$main_class" --configDir "$cluster_dir/conf" $dynamic_configs \
        > "$cluster_dir/log/$role.out" 2>&1 < /dev/null &
    pid=$!
    started_pids+=("$pid")
    echo "$pid" > "$cluster_dir/pids/$role.pid"
    echo "$role pid=$pid log=$cluster_dir/log/$role.log"
}

# During start the JVMs are children of this shell, so their pids are theirs until this shell
# reaps them; the command-line check of is_cluster_process would race with exec here.
started_pids=()

fail_start() {
    echo "flink-cluster.sh: $*" >&2
    local role pid waited
    for role in $(recorded_roles); do
        echo "  $role: $cluster_dir/log/$role.log (stdout/stderr: $cluster_dir/log/$role.out)" >&2
    done
    echo "flink-cluster.sh: stopping what was started" >&2
    for pid in ${started_pids[@]+"${started_pids[@]}"}; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in ${started_pids[@]+"${started_pids[@]}"}; do
        waited=0
        while kill -0 "$pid" 2>/dev/null && ((waited < 300)); do
            sleep 0.1
            waited=$((waited + 1))
        done
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    exit 1
}

cmd_start() {
    local taskmanagers=2 slots=2 rest_port=8081 rpc_port=6123 tm_memory=1728m
    while [[ $# -gt 0 ]]; do
        [[ $# -ge 2 ]] || usage
        case "$1" in
            --taskmanagers) taskmanagers="$2" ;;
            --slots) slots="$2" ;;
            --rest-port) rest_port="$2" ;;
            --rpc-port) rpc_port="$2" ;;
            --tm-memory) tm_memory="$2" ;;
            *) usage ;;
        esac
        shift 2
    done
    [[ "$taskmanagers" =~ ^[1-9][0-9]*$ ]] || die "--taskmanagers must be a positive integer: $taskmanagers"
    [[ "$slots" =~ ^[1-9][0-9]*$ ]] || die "--slots must be a positive integer: $slots"
    [[ "$rest_port" =~ ^[1-9][0-9]*$ && "$rest_port" -le 65535 ]] || die "--rest-port must be a port number: $rest_port"
    [[ "$rpc_port" =~ ^[1-9][0-9]*$ && "$rpc_port" -le 65535 ]] || die "--rpc-port must be a port number: $rpc_port"

    local role
    for role in $(recorded_roles); do
        if is_cluster_process "$(pid_of "$role")"; then
            die "a cluster is already running in $cluster_dir ($role pid=$(pid_of "$role")); run 'scripts/flink-cluster.sh stop' first"
        fi
    done
    if curl -s -o /dev/null "http://localhost:$rest_port/"; then
        die "port $rest_port already serves something (another Flink cluster?); choose another with --rest-port"
    fi

    prepare_classpath
    rm -f "$cluster_dir"/pids/*.pid
    # The previous start's logs are kept one generation, as <name>.1.
    local f
    for f in "$cluster_dir"/log/*.log "$cluster_dir"/log/*.out; do
        [[ -e "$f" ]] && mv -f "$f" "$f.1"
    done
    write_conf "$taskmanagers" "$slots" "$rest_port" "$rpc_port" "$tm_memory"
    install_flowkv

    local jm_params tm_params
    jm_params="$(resource_params GET_JM_RESOURCE_PARAMS)"
    tm_params="$(resource_params GET_TM_RESOURCE_PARAMS)"
    launch jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
        "$(echo "$jm_params" | sed -n 1p)" "$(echo "$jm_params" | sed -n 2p)"
    local i
    for ((i = 1; i <= taskmanagers; i++)); do
        launch "taskmanager-$i" org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
            "$(echo "$tm_params" | sed -n 1p)" "$(echo "$tm_params" | sed -n 2p)"
    done

    local timeout="${FLINK_CLUSTER_TIMEOUT:-120}" start registered=0 overview
    start=$SECONDS
    while ((SECONDS - start < timeout)); do
        for role in $(recorded_roles); do
            kill -0 "$(pid_of "$role")" 2>/dev/null \
                || fail_start "$role exited during start-up, see $cluster_dir/log/$role.log"
        done
        overview="$(curl -s "http://localhost:$rest_port/overview" || true)"
        registered="$(echo "$overview" | sed -n 's/.*"taskmanagers":\([0-9]*\).*/\1/p')"
        if [[ "${registered:-0}" -ge "$taskmanagers" ]]; then
            echo "cluster up in $((SECONDS - start)) s: $taskmanagers TaskManagers x $slots slots, REST http://localhost:$rest_port, dir $cluster_dir"
            return 0
        fi
        sleep 0.5
    done
    fail_start "only ${registered:-0} of $taskmanagers TaskManagers registered within ${timeout} s"
}

for tool in java mvn curl; do
    command -v "$tool" > /dev/null || die "needs $tool on the PATH"
done

case "${1:-}" in
    start) shift; cmd_start "$@" ;;
    stop) [[ $# -eq 1 ]] || usage; cmd_stop ;;
    status) [[ $# -eq 1 ]] || usage; cmd_status ;;
    *) usage ;;
esac
