#!/usr/bin/env bash
# Three more AUR micro-benchmark pairs (the first three spread 551k-938k ops/s), order alternating.
set -u
source <(sed -n '/^wt()/,/^}/p;/^sb()/,/^}/p' /work/ab5/ab.sh)
while pgrep -f "/work/ab5/ab.sh" >/dev/null; do sleep 10; done
sb a18 4; sb b18 4; sb b18 5; sb a18 5; sb a18 6; sb b18 6
echo "== $(date -u +%T) done"
