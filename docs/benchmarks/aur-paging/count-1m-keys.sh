#!/bin/bash
# The count-window issue's job (docs/benchmarks/aur-chain-reads/CountRepro.java) with 1M keys:
# 3M records, countWindow(20), managed memory 64 MiB, parallelism 1. Run from the repository root.
CP="nexmark-queries/target/nexmark-queries.jar:$(cat nexmark-queries/target/classpath.txt)"
DG=~/.m2/repository/org/apache/flink/flink-connector-datagen/2.3.0/flink-connector-datagen-2.3.0.jar
mkdir -p /tmp/cw && javac -cp "$CP:$DG" -d /tmp/cw docs/benchmarks/aur-chain-reads/CountRepro.java
for rep in ${REPS:-1 2}; do
  for b in flowkv rocksdb; do
    timeout 900 java -Xmx1g -cp "$CP:$DG:/tmp/cw" CountRepro $b 3000000 1000000 2>&1 | grep -oE "RESULT backend=[a-z]+ records=[0-9]+ keys=[0-9]+|seconds=[0-9.]+ rec/s=[0-9]+|Exception.*" | paste -sd" " -
  done
done
echo DONE
