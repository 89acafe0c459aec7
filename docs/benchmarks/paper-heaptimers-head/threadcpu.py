#!/usr/bin/env python3
"""Run a command, sample per-thread CPU (utime+stime) every interval; print a timeline of busy threads."""
import os, subprocess, sys, time
interval = float(os.environ.get("INTERVAL", "1"))
cmd = sys.argv[1:]
p = subprocess.Popen(cmd, stdout=open("/tmp/tc.out","w"), stderr=open("/tmp/tc.err","w"))
hz = os.sysconf("SC_CLK_TCK")
prev = {}
t0 = time.time()
rows = []
while p.poll() is None:
    time.sleep(interval)
    cur = {}
    try:
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            try:
                s = open(f"/proc/{p.pid}/task/{tid}/stat").read()
                name = s[s.index("(")+1:s.rindex(")")]
                f = s[s.rindex(")")+2:].split()
                cur[(tid, name)] = (int(f[11]) + int(f[12])) / hz
            except Exception:
                pass
    except Exception:
        break
    d = {}
    for k, v in cur.items():
        dv = v - prev.get(k, 0.0)
        if dv > 0.05 * interval:
            d[k[1]] = d.get(k[1], 0) + dv
    prev = cur
    t = time.time() - t0
    tot = sum(d.values())
    print(f"{t:6.1f}s total {tot/interval:4.2f} " + "  ".join(f"{n}={v/interval:.2f}" for n, v in sorted(d.items(), key=lambda x: -x[1])[:6]), flush=True)
print("exit", p.returncode)
