#!/usr/bin/env bash
# run-pairs.sh OUTDIR: q7-session at large, the A/B's harness child command lines (repetition 1) with
# -Xlog:gc*=debug, packed (fda828e) and base (da1630b) alternating, two runs each.
# The run directories are those the A/B of ../README.md kept (paths of the machine it ran on).
out=$1; mkdir -p $out
for i in 1 2; do
  for b in new base; do
    dir=/work/abpk/runs/throughput-q7-session-flowkv-p1-r1
    [ $b = base ] && dir=/work/abpk/runs/throughput-q7-session-flowkv-base-p1-r1
    EXTRA="-Xlog:gc*=debug:file=$out/$b-$i.gclog" "$(dirname "$0")"/runcmd.sh $dir $out/$b-$i.out
  done
done
