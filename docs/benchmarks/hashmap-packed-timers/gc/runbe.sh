#!/usr/bin/env bash
# runbe.sh RUNDIR OUT BACKEND [PROFILE]: re-run a harness child command with another backend
dir=$1; out=$2; be=$3; prof=$4
cmd=$(cat $dir/command.txt)
tmp=${TMPDIR:-/tmp}/flowkv-runbe; rm -rf $tmp; mkdir -p $tmp
cmd=${cmd//$dir\/tmp/$tmp}
cmd=${cmd/--backend flowkv/--backend $be}
java=${cmd%% *}; rest=${cmd#* }
ap=""
[ -n "$prof" ] && ap="-agentpath:${ASYNC_PROFILER:?set ASYNC_PROFILER to libasyncProfiler.so}=start,event=cpu,interval=2ms,threads,cstack=vm,file=$out.prof,collapsed"
$java $ap $EXTRA $rest > $out 2>&1
grep '^query=' $out
