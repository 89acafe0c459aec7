#!/bin/bash
# ab.sh: FlowKV at 541036e (old) against the sorted queue's recent-adds filter (new): the harness's
# command lines of q5-append and q8 at large (JFR removed), alternating order per pair.
src=/work/bench/q5a-runs/throughput-q5-append-flowkv-p1-r1/command.txt
base=$(sed -e 's/ -XX:StartFlightRecording=[^ ]*//' -e 's/ -Xlog:jfr+startup=warning//' -e 's/ --query .*$//' $src)
args_q5a="--query q5-append --backend flowkv --events 6000000 --rate 100000 --window 60000ms --slide 10000ms --gap 10000ms --managed-memory 665719939b"
args_q5="--query q5 --backend flowkv --events 6000000 --rate 100000 --window 60000ms --slide 10000ms --gap 10000ms --managed-memory 665719939b"
queries=${QUERIES:-q5a q5}
pairs=${PAIRS:-2}
for pair in $(seq 1 $pairs); do
  order="old new"; [ $((pair % 2)) = 0 ] && order="new old"
  for q in $queries; do
    for v in $order; do
      tmp=/work/bench/recent/$q-$v-$pair/tmp; mkdir -p $tmp
      jar=/work/main/nexmark-queries/target/nexmark-queries.jar
      [ $v = old ] && jar=/work/old/nexmark-queries/target/nexmark-queries.jar
      cmd=${base//\/work\/main\/nexmark-queries\/target\/nexmark-queries.jar/$jar}
      a=args_$q
      line=$($cmd ${!a} --parallelism 1 --progress-interval 1s \
        --conf io.tmp.dirs=$tmp 2>/work/bench/recent/$q-$v-$pair/stderr.log | tail -1)
      echo "$q $v pair=$pair $line"
      rm -rf $tmp
    done
  done
done
