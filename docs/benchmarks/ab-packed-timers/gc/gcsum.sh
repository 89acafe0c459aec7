#!/usr/bin/env bash
f=$1
echo "pauses $(grep -c 'Pause Young' $f)"
for k in 'Ext Root Scanning' 'Scan Heap Roots' 'Object Copy'; do grep "$k" $f | awk -v k="$k" '{for(i=1;i<=NF;i++) if ($i=="Avg:") {gsub(",","",$(i+1)); s+=$(i+1)}} END {printf "%-20s %.0f ms over %d\n", k, s, NR}'; done
grep 'Evacuate Collection Set:' $f | grep -v Pre | grep -v Post | awk '{gsub("ms","",$NF); s+=$NF} END {print "evacuate total", s}'
