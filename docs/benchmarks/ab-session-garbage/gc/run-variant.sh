#!/usr/bin/env bash
# run-variant.sh new|base OUTPREFIX [extra jvm args...] : q7-session flowkv, gc log + result line
which=$1; out=$2; shift 2
cmd=$(cat /work/prof/q7s-cmd.txt)
tmp=/work/prof/tmp; rm -rf $tmp; mkdir -p $tmp
cmd=${cmd//\/work\/gc\/runs\/throughput-q7-session-flowkv-p1-r1\/tmp/$tmp}
if [[ $which == base ]]; then
  base=$(ls -d /work/main/target/bench-base/*/ | head -1)
  newcp="/work/main/nexmark-queries/target/nexmark-queries.jar:$(cat /work/main/nexmark-queries/target/classpath.txt)"
  basecp="${base}nexmark-queries/target/nexmark-queries.jar:$(cat ${base}nexmark-queries/target/classpath.txt)"
  cmd=${cmd//$newcp/$basecp}
fi
java=${cmd%% *}; rest=${cmd#* }
/usr/bin/time -f "%e s wall %U user %S sys" $java -Xlog:gc:file=$out.gc "$@" $rest > $out.out 2>$out.time
echo "$which $(grep -o 'events_per_s=[0-9]*' $out.out) $(grep Pause $out.gc | awk '{gsub("ms","",$NF); s+=$NF; n++} END {printf "gc %d pauses %.0f ms", n, s}') $(tail -1 $out.time)"
