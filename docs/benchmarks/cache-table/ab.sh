#!/bin/bash
# ab.sh: alternate FlowKV at 7329323 (old) and 449f81a (new) on q12 and q11, large, the harness's command lines
set -e
base=$(cat /work/bench/cache-table-runs/throughput-QUERY-flowkv-p1-r1/command.txt 2>/dev/null || true)
for pair in 1 2; do
  for q in q12 q11; do
    for v in old new; do
      cmd=$(cat /work/bench/cache-table-runs/throughput-$q-flowkv-p1-r1/command.txt)
      tmp=/work/bench/ab/$q-$v-$pair/tmp
      mkdir -p $tmp
      jar=/work/main/nexmark-queries/target/nexmark-queries.jar
      [ $v = old ] && jar=/work/old/nexmark-queries/target/nexmark-queries.jar
      cmd=${cmd//\/work\/main\/nexmark-queries\/target\/nexmark-queries.jar/$jar}
      cmd=${cmd//io.tmp.dirs=\/work\/bench\/cache-table-runs\/throughput-$q-flowkv-p1-r1\/tmp/io.tmp.dirs=$tmp}
      line=$(eval "$cmd" 2>/work/bench/ab/$q-$v-$pair/stderr.log | tail -1)
      echo "$q $v pair=$pair $line"
      rm -rf $tmp
    done
  done
done
