#!/bin/bash
# sql-q8 (window join) A/B: window join rows on the general store (before, e12a09d) vs on AAR (after, 9c8bc29)
for rep in 1 2; do
  for side in before after; do
    dir=/work/main; [ $side = before ] && dir=/work/wt-bench
    echo "side=$side rep=$rep"
    (cd $dir && timeout 900 scripts/nexmark.sh sql-q8 --backend flowkv --events 10000000 --managed-memory 64m 2>&1 | grep -E "^query=|Exception" | head -3)
  done
done
