#!/usr/bin/env bash
# runcmd.sh RUNDIR OUT [PROFILE]: re-run a harness child command (its tmp dir replaced), optionally profiled
dir=$1; out=$2; prof=$3
cmd=$(cat $dir/command.txt)
tmp=/work/prof/tmpr; rm -rf $tmp; mkdir -p $tmp
cmd=${cmd//$dir\/tmp/$tmp}
java=${cmd%% *}; rest=${cmd#* }
ap=""
[ -n "$prof" ] && ap="-agentpath:/work/tools/ap/linux-x64/libasyncProfiler.so=start,event=cpu,interval=2ms,threads,cstack=vm,file=$out.prof,collapsed"
$java $ap $EXTRA $rest > $out 2>&1
grep '^query=' $out
