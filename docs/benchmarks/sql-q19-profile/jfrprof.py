#!/usr/bin/env python3
"""Aggregates JFR CPU samples of the sql-q19 Rank task thread (FlowKV vs RocksDB).

usage: jfrprof.py LABEL=run.jfr [LABEL=run.jfr ...] [--thread Rank[] [--top 15]

Per recording: self (top frame) and total (anywhere on the stack) method tables, a category
breakdown (state backend / serialization / TopN function / rest), FlowKV's state path by entry
call and by inner method, allocation (jdk.ObjectAllocationSample weight) and GC totals.
jdk.ExecutionSample covers Java code; jdk.NativeMethodSample covers JNI (RocksDB's C++), but JFR
takes one native sample per period across all threads in native, so the Rank thread's native
samples are scaled by (periods with a native sample) -- see est_native below.
"""
import collections
import re
import subprocess
import sys

FRAME = re.compile(r"^\s{4}(\S.*?)\(.*\)\s+line:")


def run_print(path, events, depth=200):
    out = subprocess.run(["jfr", "print", "--events", events, "--stack-depth", str(depth), path],
                         check=True, capture_output=True, text=True).stdout
    ev = None
    for line in out.splitlines():
        if line.startswith("jdk.") and line.endswith("{"):
            ev = {"type": line.split()[0], "frames": [], "fields": {}}
        elif ev is None:
            continue
        elif line == "}":
            yield ev
            ev = None
        else:
            m = FRAME.match(line)
            if m:
                ev["frames"].append(m.group(1))
            elif line.startswith("  ") and " = " in line and not line.startswith("    "):
                k, v = line.strip().split(" = ", 1)
                ev["fields"][k] = v


def thread_of(ev):
    v = ev["fields"].get("sampledThread") or ev["fields"].get("eventThread") or ""
    m = re.match(r'"(.*)" \(', v)
    return m.group(1) if m else v


def cls(frame):
    return frame.rsplit(".", 1)[0]


SERDE = re.compile(r"(Serializer|DataOutputSerializer|DataInputDeserializer|BinaryRowWriter|"
                   r"BinarySegmentUtils|MemorySegment|DataOutputView|DataInputView)")


# task-loop frames on every stack, left out of the "total" tables
FRAMEWORK = re.compile(r"(^java\.lang\.Thread\.run|\.taskmanager\.Task\.|\.tasks\.StreamTask\.|MailboxProcessor\."
                       r"|StreamOneInputProcessor\.|AbstractStreamTaskNetworkInput\.|RecordProcessorUtils\."
                       r"|OneInputStreamTask\$StreamTaskNetworkOutput\.|KeyedProcessOperator\.processElement)")


def is_flowkv(f):
    return f.startswith("io.flowkv.flink.") or f.startswith("io.flowkv.core.")


def is_rocks(f):
    return (f.startswith("org.rocksdb.") or f.startswith("org.apache.flink.state.rocksdb.")
            or f.startswith("org.apache.flink.contrib.streaming.state.")
            or f.startswith("org.forstdb."))


def is_topn(f):
    return ".operators.rank." in f


def category(frames):
    state = next((i for i, f in enumerate(frames) if is_flowkv(f) or is_rocks(f)), None)
    serde = any(SERDE.search(cls(f)) for f in (frames if state is None else frames[:state + 1]))
    if state is not None:
        kind = "FlowKV" if is_flowkv(frames[state]) else "RocksDB"
        # inside the state call: the outermost state frame's subtree
        return f"state:{kind}" + (":serde" if serde else "")
    if any(".AbstractTopNFunction.collect" in f for f in frames):
        return "TopN output emission (collect* -> downstream chain)"
    if any(is_topn(f) for f in frames):
        return "TopN fn (heap buffer, cache, copies)" + (" :serde/copy" if serde else "")
    if serde:
        return "serde/copy outside state & TopN"
    return "other (task loop, checksum sink, ...)"


def table(counter, total, n, title):
    print(f"\n{title} (n={total})")
    print("| # | method | samples | % |")
    print("|---|---|---|---|")
    for i, (k, c) in enumerate(counter.most_common(n), 1):
        print(f"| {i} | `{k}` | {c} | {100.0 * c / total:.1f} |")


def analyse(label, path, thread_prefix, top):
    print(f"\n## {label}: {path}")
    samples = []
    nat_by_thread = collections.Counter()
    allev = []
    for ev in run_print(path, "jdk.ExecutionSample,jdk.NativeMethodSample"):
        t = thread_of(ev)
        native = ev["type"] == "jdk.NativeMethodSample"
        allev.append((ev["fields"].get("startTime", ""), t, native, ev["frames"]))
    # the job window: from the first to the last Rank-thread sample inside processElement
    inproc = [ts for ts, t, n, f in allev
              if t.startswith(thread_prefix) and any("processElement" in x for x in f)]
    lo, hi = min(inproc), max(inproc)
    for ts, t, native, frames in allev:
        if not (lo <= ts <= hi):
            continue
        if native:
            nat_by_thread[t] += 1
        if t.startswith(thread_prefix):
            samples.append((native, frames))
    periods = sum(nat_by_thread.values())
    rj = sum(1 for n, f in samples if not n)
    rn = sum(1 for n, f in samples if n)
    print(f"\njob window {lo} .. {hi}: ~{periods} sampling periods (= native samples of all threads);"
          f" Rank thread est. in Java {100.0 * rj / periods:.0f}% of periods,"
          f" in native ~{100.0 * 3 * rn / periods:.0f}% (x3: one native sample per period among ~3 native threads)")
    java = [f for n, f in samples if not n]
    nat = [f for n, f in samples if n]
    # One native sample per period is taken among the threads in native; the BLOB server and
    # the REST boss thread are always parked in native accept/epoll. The Rank thread's share of
    # time in native f ~= its native samples / an always-native thread's samples (same window).
    always = [c for t, c in nat_by_thread.items() if t.startswith("BLOB Server")]
    print(f"\nRank-thread samples: java={len(java)} native={len(nat)}; native samples by thread: "
          + ", ".join(f"{t[:40]}={c}" for t, c in nat_by_thread.most_common(4)))
    # java samples are taken for every Java-state thread each period (up to 5), native ones
    # round-robin over ~3 native threads: weight native samples by 3 to compare with Java ones.
    w_nat = 3
    print(f"(native samples weighted x{w_nat} in the combined category table; raw counts also shown)")

    cats = collections.Counter()
    raw = collections.Counter()
    for native, frames in samples:
        c = category(frames) + (" [JNI]" if native else "")
        cats[c] += w_nat if native else 1
        raw[c] += 1
    tot = sum(cats.values())
    emit = cats.get("TopN output emission (collect* -> downstream chain)", 0) or 1
    print("\n(E = samples of the TopN output emission, the same work in every run: a yardstick across runs)")
    print("\n| category | raw samples | weighted | weighted % | in E units |\n|---|---|---|---|---|")
    for k, c in sorted(cats.items(), key=lambda x: -x[1]):
        print(f"| {k} | {raw[k]} | {c} | {100.0 * c / tot:.1f} | {c / emit:.2f} |")
    print(f"| **all Rank-thread samples** | {sum(raw.values())} | {tot} | 100 | {tot / emit:.2f} |")
    state = sum(c for k, c in cats.items() if k.startswith("state:"))
    jstate = sum(c for k, c in cats.items() if k.startswith("state:") and "[JNI]" not in k)
    print(f"\nstate total weighted: {state} ({100.0 * state / tot:.1f}%, {state / emit:.2f} E);"
          f" Java part only {jstate} ({jstate / emit:.2f} E), JNI part x3 {state - jstate} ({(state - jstate) / emit:.2f} E)")

    for name, group in (("Java (ExecutionSample)", java), ("JNI (NativeMethodSample)", nat)):
        if not group:
            continue
        selfc = collections.Counter(f[0] for f in group if f)
        totc = collections.Counter()
        for f in group:
            for m in set(f):
                if not FRAMEWORK.search(m):
                    totc[m] += 1
        table(selfc, len(group), top, f"### {label} {name}: top {top} by self")
        table(totc, len(group), top, f"### {label} {name}: top {top} by total (task-loop frames Task/StreamTask/Mailbox/KeyedProcessOperator.processElement left out)")

    fk = [f for f in java if any(is_flowkv(x) for x in f)]
    if fk:
        entry = collections.Counter()
        caller = collections.Counter()
        mss = collections.Counter()
        core = collections.Counter()
        selfk = collections.Counter()
        for f in fk:
            outer = max(i for i, x in enumerate(f) if is_flowkv(x))
            entry[f[outer]] += 1
            caller[f[outer + 1] if outer + 1 < len(f) else "?"] += 1
            # innermost MapStateStorage method, innermost io.flowkv.core method
            m = next((x for x in f if "MapStateStorage" in x), "(no MapStateStorage frame)")
            mss[m] += 1
            c = next((x for x in f if x.startswith("io.flowkv.core.")), "(no io.flowkv.core frame)")
            core[c] += 1
            top_fk = next((x for x in f if x.startswith("io.flowkv")), None)
            selfk[f[0] if f[0] == top_fk else f[0] + "  <- " + top_fk] += 1
        n = len(fk)
        print(f"\n### FlowKV state path ({n} Java samples = {100.0 * n / len(java):.1f}% of Rank-thread Java samples)")
        table(caller, n, 12, "caller of the state (AppendOnlyTopNFunction side)")
        table(entry, n, 12, "FlowKV entry method (outermost io.flowkv frame)")
        table(mss, n, 15, "innermost MapStateStorage frame")
        table(core, n, 15, "innermost io.flowkv.core frame (the store)")
        table(selfk, n, 20, "top frame within the FlowKV path (<- innermost io.flowkv frame)")

    # allocation
    alloc = collections.Counter()
    allocsite = collections.Counter()
    alloc_all = 0
    for ev in run_print(path, "jdk.ObjectAllocationSample", depth=64):
        w = ev["fields"].get("weight", "0")
        m = re.match(r"([\d.]+)\s*(bytes|kB|MB|GB)", w)
        b = float(m.group(1)) * {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)] if m else 0
        alloc_all += b
        if not thread_of(ev).startswith(thread_prefix):
            continue
        alloc[ev["fields"].get("objectClass", "?").split(" ")[0]] += b
        fr = ev["frames"]
        site = next((x for x in fr if x.startswith("io.flowkv") or is_rocks(x)), None)
        allocsite[(site or (fr[0] if fr else "?"))] += b
    tot_a = sum(alloc.values())
    print(f"\n### allocation (ObjectAllocationSample weight): Rank thread {tot_a / 1e6:.0f} MB, all threads {alloc_all / 1e6:.0f} MB")
    print("| class | MB | % |\n|---|---|---|")
    for k, b in alloc.most_common(8):
        print(f"| `{k}` | {b / 1e6:.0f} | {100 * b / tot_a:.1f} |")
    print("\n| allocating site (innermost state-backend frame, else top frame) | MB | % |\n|---|---|---|")
    for k, b in allocsite.most_common(12):
        print(f"| `{k}` | {b / 1e6:.0f} | {100 * b / tot_a:.1f} |")

    # GC
    gc_n = 0
    gc_sum = 0.0
    pause_sum = 0.0
    for ev in run_print(path, "jdk.GarbageCollection", depth=1):
        gc_n += 1
        gc_sum += dur_ms(ev["fields"].get("duration", "0 ms"))
        pause_sum += dur_ms(ev["fields"].get("sumOfPauses", "0 ms"))
    print(f"\n### GC: {gc_n} collections, sum of durations {gc_sum:.0f} ms, sum of pauses {pause_sum:.0f} ms")


def dur_ms(s):
    m = re.match(r"([\d.]+)\s*(ns|us|ms|s)", s.strip())
    if not m:
        return 0.0
    return float(m.group(1)) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


def main(argv):
    thread_prefix = "Rank["
    top = 15
    runs = []
    it = iter(argv)
    for a in it:
        if a == "--thread":
            thread_prefix = next(it)
        elif a == "--top":
            top = int(next(it))
        else:
            label, path = a.split("=", 1)
            runs.append((label, path))
    for label, path in runs:
        analyse(label, path, thread_prefix, top)


if __name__ == "__main__":
    main(sys.argv[1:])
