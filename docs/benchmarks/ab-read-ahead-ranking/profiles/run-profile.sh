#!/usr/bin/env bash
# run-profile.sh JAR OUTFILE [EVENT]: the harness child command of q11-median on FlowKV (child-command.txt)
# under async-profiler, with the job jar JAR; collapsed stacks per thread into OUTFILE, the log into OUTFILE.log
jar=$1; out=$2; ev=${3:-cpu}
cmd=$(cat "$(dirname "$0")/child-command.txt")
cmd=${cmd//\/work\/main\/nexmark-queries\/target\/nexmark-queries.jar/$jar}
tmp=${TMPDIR:-/tmp}/flowkv-profile; rm -rf $tmp; mkdir -p $tmp
cmd=${cmd//\/work\/gc\/runs\/throughput-q7-session-flowkv-p1-r1\/tmp/$tmp}
java=${cmd%% *}; rest=${cmd#* }
$java -agentpath:${ASYNC_PROFILER:?path to libasyncProfiler.so}=start,event=$ev,interval=${INTERVAL:-2ms},threads,file=$out,collapsed $rest > $out.log 2>&1
echo "exit $? $(grep 'job finished' $out.log)"
