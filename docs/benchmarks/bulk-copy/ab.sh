#!/bin/bash
# ab.sh: FlowKV at 541036e (old) against the bulk-copy change (new), q8 and q7 at --state-factor 10
# (the harness's command line of a q8 large 10x run, JFR removed), alternating order per pair.
base=$(sed -e 's/ -XX:StartFlightRecording=[^ ]*//' -e 's/ -Xlog:jfr+startup=warning//' \
  -e 's/ --query q8 .*$//' /work/bench/q8jfr/runs/throughput-q8-flowkv-p1-r1/command.txt)
args_q8="--query q8 --backend flowkv --events 40000000 --rate 100000 --window 400000ms --slide 5000ms --gap 10000ms"
args_q7="--query q7 --backend flowkv --events 15000000 --rate 100000 --window 150000ms --slide 5000ms --gap 10000ms"
for pair in 1 2 3; do
  order="old new"; [ $((pair % 2)) = 0 ] && order="new old"
  for q in q8 q7; do
    for v in $order; do
      tmp=/work/bench/bulk/$q-$v-$pair/tmp; mkdir -p $tmp
      jar=/work/main/nexmark-queries/target/nexmark-queries.jar
      [ $v = old ] && jar=/work/old/nexmark-queries/target/nexmark-queries.jar
      cmd=${base//\/work\/main\/nexmark-queries\/target\/nexmark-queries.jar/$jar}
      a=args_$q
      line=$($cmd ${!a} --parallelism 1 --managed-memory 134217728b --progress-interval 1s \
        --conf io.tmp.dirs=$tmp 2>/work/bench/bulk/$q-$v-$pair/stderr.log | tail -1)
      echo "$q $v pair=$pair $line"
      rm -rf $tmp
    done
  done
done
