#!/usr/bin/env bash
# End-to-end check of FlowKV installed in a real Flink cluster (.ci/run runs it after the tests):
#
#  1. the embedded runs (scripts/nexmark.sh) give the reference result of each query below;
#  2. scripts/flink-cluster.sh starts a JobManager and 2 TaskManagers (2 slots each), FlowKV's
#     shaded jar in lib/ and state.backend.type: flowkv in config.yaml;
#  3. scripts/flink runs Q7 (AAR) and Q11 (RMW) at parallelism 2 with checkpoints every second:
#     each job must finish, complete checkpoints, have the embedded run's output count and
#     checksum, and the TaskManager logs must show FlowKV's store choice for each subtask, from
#     the lib/ jar;
#  4. while a Q7 job with one-hour windows runs (nothing is emitted before the end of input),
#     FlowKV's metrics read through the REST API must move (flowkv.window-contents.bytes-appended
#     grows, each subtask's budget used stays within its capacity); then a savepoint of that job,
#     cancel, and `run -s` at parallelism 3: the resumed job's result must equal the embedded run's;
#  5. the cluster stops and no process of it is left.
#
# The cluster lives in build/flink-cluster-e2e/ on REST port 18081 and RPC port 16123
# (E2E_REST_PORT, E2E_RPC_PORT), apart from a cluster started by hand. It is stopped on any exit.
# Builds what it needs (via nexmark.sh and flink-cluster.sh) when the jars are missing or stale.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export FLINK_CLUSTER_DIR="$root/build/flink-cluster-e2e"
# shellcheck source=scripts/flink-cluster-env.sh
source "$root/scripts/flink-cluster-env.sh"
rest_port="${E2E_REST_PORT:-18081}"
rpc_port="${E2E_RPC_PORT:-16123}"
jar="$root/nexmark-queries/target/nexmark-queries.jar"
work="$FLINK_CLUSTER_DIR/e2e"
events=1000000
# One-hour windows hold the whole input until its end, and every checkpoint is a full snapshot
# (so 2 s apart here, not 1 s: each one writes all the bids so far). 360000 events hold
# 360000 * 46 / 50 = 331200 bids. At 6000 events/s the input lasts 60 s: time for the metrics
# check, the savepoint and the cancel on a slow machine (about 16 s on an idle 2-core VM, 48 s on
# one running a benchmark beside it). The source's splits keep their rate in the savepoint, so the
# resumed job runs at that rate too (a NexmarkSource property, not the cluster's).
savepoint_args=(--query q7 --events 360000 --window 1h)
savepoint_bids=331200
client_pid=""
started=$SECONDS

step() {
    echo "cluster-e2e [$((SECONDS - started)) s]: $*"
}

fail() {
    echo "cluster-e2e: FAILED: $*" >&2
    echo "cluster-e2e: logs in $FLINK_CLUSTER_DIR/log, command output in $work" >&2
    exit 1
}

# Processes of this cluster, found by the configuration directory on their command line.
leftovers() {
    local proc pid
    for proc in /proc/[0-9]*; do
        pid="${proc#/proc/}"
        is_cluster_process "$pid" && echo "$pid $(command_line "$pid" | cut -c 1-200)"
    done
    return 0
}

cleanup() {
    local rc=$?
    if [[ -n "$client_pid" ]] && kill -0 "$client_pid" 2>/dev/null; then
        kill "$client_pid" 2>/dev/null || true
        wait "$client_pid" 2>/dev/null || true
    fi
    if [[ -d "$FLINK_CLUSTER_DIR/pids" ]]; then
        scripts/flink-cluster.sh stop > /dev/null 2>&1 || true
    fi
    if [[ -n "$(leftovers)" ]]; then
        echo "cluster-e2e: FAILED: processes left behind:" >&2
        leftovers >&2
        rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# "output_records checksum" of a result line.
result_of() {
    sed -n 's/^query=.* output_records=\([0-9]*\) checksum=\([0-9a-f]*\)$/\1 \2/p' "$1" | tail -n 1
}

rest() {
    curl -sf "http://localhost:$rest_port$1" || fail "REST request $1 failed"
}

# A field of a JSON document on stdin, by a Python expression over `d`.
json() {
    python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

store_lines() {
    cat "$FLINK_CLUSTER_DIR"/log/taskmanager-*.log | grep -c -- "window-contents -> $1 " || true
}

job_state() {
    rest "/jobs/$1" | json 'd["state"]'
}

# The state of job $1 once it reads $2, or after 30 s whatever it reads then: the REST API serves
# a job's details from a cache refreshed every few seconds, so a job the client saw end may still
# read RUNNING for a moment.
settled_job_state() {
    local state
    for _ in $(seq 1 60); do
        state="$(job_state "$1")"
        [[ "$state" == "$2" ]] && break
        sleep 0.5
    done
    echo "$state"
}

# Runs a query on the cluster (attached) and checks it against the embedded reference; the
# options of `flink run` itself (before the jar) are in run_opts.
run_opts=()
# FlowKV's metrics as an operator of the cluster reads them, through the REST API of a running
# job: the window state's bytes-appended (summed over subtasks) must grow between two reads, and
# every subtask's budget-used-bytes must stay within its budget-capacity-bytes.
flowkv_metrics() { # job id -> "appended used-1 capacity-1 used-2 capacity-2 ..." (empty if none yet)
    local jid="$1" vid ids
    for vid in $(rest "/jobs/$jid" | json '" ".join(v["id"] for v in d["vertices"])'); do
        ids="$(rest "/jobs/$jid/vertices/$vid/metrics" | json '",".join(sorted(m["id"] for m in d if m["id"].endswith((".flowkv.window-contents.bytes-appended", ".flowkv.budget-used-bytes", ".flowkv.budget-capacity-bytes"))))')"
        [[ "$ids" == *window-contents.bytes-appended* ]] || continue
        rest "/jobs/$jid/vertices/$vid/metrics?get=$ids" | json '" ".join([str(sum(int(float(m["value"])) for m in d if m["id"].endswith("bytes-appended")))] + [str(int(float(m["value"]))) for m in sorted(d, key=lambda m: m["id"]) if "budget" in m["id"]])'
        return
    done
}
check_flowkv_metrics() {
    local jid="$1" first="" second="" i
    for _ in $(seq 1 40); do
        first="$(flowkv_metrics "$jid")"
        [[ -n "$first" ]] && break
        sleep 0.5
    done
    [[ -n "$first" ]] || fail "job $jid reports no flowkv.window-contents.bytes-appended metric through REST"
    sleep 3
    second="$(flowkv_metrics "$jid")"
    read -r -a a <<< "$first"
    read -r -a b <<< "$second"
    [[ "${b[0]}" -gt "${a[0]}" ]] \
        || fail "flowkv.window-contents.bytes-appended did not grow while job $jid ran: ${a[0]} -> ${b[0]}"
    # Sorted ids put each subtask's budget-capacity-bytes right before its budget-used-bytes.
    for ((i = 1; i + 1 < ${#b[@]}; i += 2)); do
        [[ "${b[i + 1]}" -le "${b[i]}" ]] || fail "budget-used-bytes ${b[i + 1]} > budget-capacity-bytes ${b[i]} in job $jid"
    done
    [[ ${#b[@]} -ge 3 ]] || fail "no flowkv.budget-* metrics through REST for job $jid"
    step "metrics through REST: flowkv.window-contents.bytes-appended ${a[0]} -> ${b[0]} bytes, budget used within capacity on $(((${#b[@]} - 1) / 2)) subtasks"
}

require_checkpoints=1
check_cluster_run() {
    local name="$1" pattern="$2" expected_stores="$3" reference="$4"
    shift 4
    local before out jid result state completed
    before="$(store_lines "$pattern")"
    out="$work/$name.out"
    step "$name: scripts/flink run ${run_opts[*]+${run_opts[*]} }nexmark-queries.jar $*"
    scripts/flink run ${run_opts[@]+"${run_opts[@]}"} "$jar" "$@" > "$out" 2> "$work/$name.err" \
        || fail "$name: scripts/flink run failed (see $out and $work/$name.err)"
    jid="$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$out")"
    [[ -n "$jid" ]] || fail "$name: no job id in $out"
    result="$(result_of "$out")"
    step "$name: $(tail -n 1 "$out")"
    state="$(settled_job_state "$jid" FINISHED)"
    [[ "$state" == FINISHED ]] || fail "$name: job $jid is $state, not FINISHED"
    [[ "$result" == "$reference" ]] \
        || fail "$name: cluster result '$result' differs from the embedded run's '$reference'"
    completed="$(rest "/jobs/$jid/checkpoints" | json 'd["counts"]["completed"]')"
    if [[ "$require_checkpoints" -eq 1 && "$completed" -lt 1 ]]; then
        fail "$name: job $jid completed no checkpoint"
    fi
    step "$name: job $jid FINISHED, $completed checkpoints completed, result equals the embedded run's"
    local now=$(( $(store_lines "$pattern") - before ))
    [[ "$now" -eq "$expected_stores" ]] \
        || fail "$name: $now TaskManager log lines 'window-contents -> $pattern', expected $expected_stores (one per subtask)"
    step "$name: FlowKV chose $pattern for window-contents in $now subtasks"
}

for tool in java mvn curl python3; do
    command -v "$tool" > /dev/null || fail "needs $tool on the PATH"
done
mkdir -p "$work"
rm -f "$work"/*

step "embedded reference runs (scripts/nexmark.sh, FlowKV)"
scripts/nexmark.sh q7 --backend flowkv --events "$events" > "$work/embedded-q7.out" 2> "$work/embedded-q7.err" \
    || fail "embedded q7 failed (see $work/embedded-q7.err)"
scripts/nexmark.sh q11 --backend flowkv --events "$events" > "$work/embedded-q11.out" 2> "$work/embedded-q11.err" \
    || fail "embedded q11 failed (see $work/embedded-q11.err)"
scripts/nexmark.sh "${savepoint_args[@]}" --backend flowkv > "$work/embedded-q7-1h.out" 2> "$work/embedded-q7-1h.err" \
    || fail "embedded q7 with 1h windows failed (see $work/embedded-q7-1h.err)"
ref_q7="$(result_of "$work/embedded-q7.out")"
ref_q11="$(result_of "$work/embedded-q11.out")"
ref_q7_1h="$(result_of "$work/embedded-q7-1h.out")"
for ref in "$ref_q7" "$ref_q11" "$ref_q7_1h"; do
    [[ "$ref" =~ ^[1-9][0-9]*\ [0-9a-f]+$ ]] || fail "an embedded run gave no result with output: '$ref'"
done
step "embedded: q7 $ref_q7, q11 $ref_q11, q7 (1h windows) $ref_q7_1h (output_records checksum)"

step "starting the cluster"
[[ -z "$(leftovers)" ]] || fail "a cluster is already running in $FLINK_CLUSTER_DIR: $(leftovers)"
scripts/flink-cluster.sh start --taskmanagers 2 --slots 2 --rest-port "$rest_port" --rpc-port "$rpc_port"
status="$(scripts/flink-cluster.sh status)"
[[ "$(grep -c ' running$' <<< "$status")" -eq 3 ]] || fail "status after start: $status"

check_cluster_run q7 AAR 2 "$ref_q7" --query q7 --events "$events" --parallelism 2 --checkpoint-interval 1s
check_cluster_run q11 RMW 2 "$ref_q11" --query q11 --events "$events" --parallelism 2 --checkpoint-interval 1s
# FlowKVStateBackend logs once per TaskManager where it and its native memory class came from.
grep -q -F "FlowKV loaded from file:$FLINK_CLUSTER_DIR/lib/flowkv-flink-" "$FLINK_CLUSTER_DIR"/log/taskmanager-*.log \
    || fail "no TaskManager loaded FlowKV from lib/ (grep 'FlowKV loaded from' in the TaskManager logs)"
grep -q -F "native memory through io.flowkv.shaded.net.openhft.chronicle.core.UnsafeMemory from file:$FLINK_CLUSTER_DIR/lib/flowkv-flink-" "$FLINK_CLUSTER_DIR"/log/taskmanager-*.log \
    || fail "no TaskManager used FlowKV's relocated chronicle from lib/ (grep 'native memory through' in the TaskManager logs)"
step "FlowKV (relocated chronicle included) was loaded from lib/, not from the job jar"

step "savepoint: q7 with 1h windows at parallelism 2, throttled to 6000 events/s (60 s of input)"
scripts/flink run "$jar" "${savepoint_args[@]}" --max-rate 6000 --parallelism 2 --checkpoint-interval 2s \
    > "$work/savepointed.out" 2> "$work/savepointed.err" &
client_pid=$!
jid=""
for _ in $(seq 1 120); do
    jid="$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$work/savepointed.out")"
    [[ -n "$jid" && "$(job_state "$jid")" == RUNNING ]] && break
    kill -0 "$client_pid" 2>/dev/null || fail "the client of the job to savepoint exited (see $work/savepointed.err)"
    sleep 0.5
done
[[ -n "$jid" && "$(job_state "$jid")" == RUNNING ]] || fail "the job to savepoint did not start running"
# Let the windows fill: the savepoint then carries buffered bids of every subtask.
check_flowkv_metrics "$jid"
scripts/flink savepoint "$jid" > "$work/savepoint.out" 2>&1 \
    || fail "scripts/flink savepoint $jid failed (see $work/savepoint.out)"
savepoint="$(sed -n 's/^Savepoint completed. Path: \(.*\)$/\1/p' "$work/savepoint.out")"
[[ -n "$savepoint" ]] || fail "no savepoint path in $work/savepoint.out"
step "savepoint of job $jid: $savepoint"
scripts/flink cancel "$jid" > "$work/cancel.out" 2>&1 || fail "scripts/flink cancel $jid failed (see $work/cancel.out)"
wait "$client_pid" || true
client_pid=""
state="$(settled_job_state "$jid" CANCELED)"
[[ "$state" == CANCELED ]] || fail "job $jid is $state 30 s after cancel, not CANCELED"
# The resumed job's accumulators count only its own output, so the check below needs the
# cancelled job to have emitted nothing: one-hour windows fire only at the end of input.
emitted="$(rest "/jobs/$jid/accumulators" \
    | json 'sum(int(a["value"]) for a in d["user-task-accumulators"] if a["name"] == "nexmark-output-records")')"
[[ "$emitted" -eq 0 ]] || fail "the cancelled job already emitted $emitted records; its result cannot be compared"
step "job $jid CANCELED with no output emitted"

run_opts=(-s "$savepoint")
require_checkpoints=0 # a short job; the savepoint above is the snapshot that counts here
check_cluster_run resumed AAR 3 "$ref_q7_1h" "${savepoint_args[@]}" --parallelism 3 --checkpoint-interval 2s
run_opts=()
# Restarting from scratch would give the same result, so check that it did not: Flink restored
# the savepoint, and the window received only the bids after the savepoint's source positions
# (all of them would be the input's $savepoint_bids).
resumed_jid="$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]*\)$/\1/p' "$work/resumed.out")"
restored_from="$(rest "/jobs/$resumed_jid/checkpoints" \
    | json '(d["latest"]["restored"] or {}).get("external_path") if d["latest"]["restored"] and d["latest"]["restored"]["is_savepoint"] else None')"
[[ "$restored_from" == "$savepoint" ]] \
    || fail "the resumed job $resumed_jid was not restored from $savepoint (restored: $restored_from)"
window_bids="$(rest "/jobs/$resumed_jid" \
    | json 'sum(v["metrics"]["read-records"] for v in d["vertices"] if v["name"].startswith("q7-window"))')"
[[ "$window_bids" -gt 0 && "$window_bids" -lt "$savepoint_bids" ]] \
    || fail "the resumed window read $window_bids bids; expected fewer than the input's $savepoint_bids"
step "resumed from the savepoint at parallelism 3 (the window read $window_bids of $savepoint_bids bids, the rest came from the savepoint); result equals the embedded run's"

step "stopping the cluster"
scripts/flink-cluster.sh stop
status="$(scripts/flink-cluster.sh status || true)"
[[ "$(grep -c ' stopped$' <<< "$status")" -eq 3 ]] || fail "status after stop: $status"
[[ -z "$(leftovers)" ]] || fail "processes left after stop: $(leftovers)"
step "PASSED in $((SECONDS - started)) s"
