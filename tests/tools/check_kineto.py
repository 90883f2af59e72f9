#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`export --merge-kineto` against the simulator's ground truth.

make:  writes a PyTorch profiler (Kineto) trace for one simulated process
       from the simulator's truth file, the way libkineto writes one: the
       top-level schemaVersion, deviceProperties, distributedInfo,
       displayTimeUnit and baseTimeNanoseconds (CLOCK_REALTIME floored to 3
       months), "ts" in microseconds of CLOCK_REALTIME minus that base, host
       events (pid = the process's) and one "kernel" event per NCCL kernel
       (pid = the GPU, tid = its stream) at the truth's GPU start. The
       realtime - monotonic offset is this script's own reading (the best of
       3 pairs), not the recording's anchors. Options make a trace that must
       be refused: --shift-s (another run), --host (another host), --no-base
       (no time base); --gz writes it gzipped; --extras adds the shapes of
       real traces the events above lack (extra_events); --long-bytes N a
       member and an event argument N bytes long.
check: the merged file loads as JSON; every original top-level member and
       event is there unchanged and in order; the alignment metadata is
       there; every Coll of the process moved from its CLOCK_MONOTONIC time
       (--plain: the export without the merge) by what this script's own
       realtime reading says, within the stated error, and lies between its
       truth launch and end;
       every link arrow joins a Coll to the kernel of the same communicator,
       rank, function and sequence number, and at least --min-linked of the
       process's kernels are linked.
"""
import argparse
import gzip
import json
import sys
import time

TRIMONTH_S = 7889238  # libkineto's ChromeTraceBaseTime granularity
P2P = ("Send", "Recv")


def clock_pair():
    best = None
    for _ in range(3):
        a = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        r = time.clock_gettime_ns(time.CLOCK_REALTIME)
        b = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + (b - a) // 2))
    return best[1]


def load_truth(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def us(ns):
    return round(ns / 1000.0, 3)


def make(a):
    truth = load_truth(a.truth)
    off = clock_pair()
    hpid = a.write_pid if a.write_pid else a.pid
    real_now = time.clock_gettime_ns(time.CLOCK_REALTIME)
    base = (real_now // 1_000_000_000 // TRIMONTH_S) * TRIMONTH_S * 1_000_000_000
    shift = int(a.shift_s * 1e9)
    gpu_of = {}
    for t in truth:
        if t["kind"] == "comm" and t["pid"] == a.pid:
            gpu_of[(t["comm"], t["rank"])] = t["gpu"]
    ranks = sorted({r for (_, r) in gpu_of})
    ev = [{"name": "process_name", "ph": "M", "ts": 0, "pid": hpid, "tid": 0, "args": {"name": "python"}}]
    corr = 0
    for t in truth:
        if t["kind"] != "coll" or t["pid"] != a.pid or not t["emitted"] or t["ce"] or t["aborted"]:
            continue
        if not t["t_launch"]:
            continue
        corr += 1
        rel = lambda mono: us(mono + off - base + shift) if not a.no_base else us(mono - 23_000_000_000_000)
        ev.append({"ph": "X", "cat": "user_annotation", "name": "nccl:" + t["func"].lower(), "pid": hpid,
                   "tid": t["tid"], "ts": rel(t["t_launch"]), "dur": 1.5, "args": {"External id": corr}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": hpid, "tid": t["tid"],
                   "ts": rel(t["t_launch"]) + 0.5, "dur": 0.75, "args": {"correlation": corr}})
        gpu = gpu_of.get((t["comm"], t["rank"]), 0)
        name = "SendRecv" if t["func"] in P2P else t["func"] + "_Sum_f32_RING_LL"
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_" + name,
                   "pid": gpu, "tid": 7 + gpu, "ts": rel(t["t_start"]), "dur": us(t["t_end"] - t["t_start"]),
                   "args": {"External id": corr, "device": gpu, "stream": 7 + gpu, "correlation": corr,
                            "truth": {"comm": t["comm"], "rank": t["rank"], "func": t["func"], "seq": t["seq"]}}})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": hpid, "tid": hpid, "ts": ev[1]["ts"] + 0.25,
               "dur": 12.001, "args": {"Input Dims": [[2, 3], [3, 4]], "unicode": "\u00b5s \u2192 ok"}})
    if a.extras:
        ev += extra_events(ev, hpid)
    if a.long_bytes:  # a call stack as long as real ones get, and escapes JSON has that traces seldom use
        frames = "".join("frame_%06d (model.py:%d);" % (i, i) for i in range(a.long_bytes // 26 + 1))
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::long_stack", "pid": hpid, "tid": hpid,
                   "ts": ev[1]["ts"] + 0.5, "dur": 1.0,
                   "args": {"Call stack": frames[:a.long_bytes], "odd": "\u0000\b\f/\ud83d\ude00 \u00e9"}})
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": g, "name": "Simulated GPU", "totalGlobalMem": 85899345920}
                                for g in sorted(set(gpu_of.values()))],
           "distributedInfo": {"backend": "nccl", "rank": ranks[0] if ranks else 0, "world_size": 4},
           "displayTimeUnit": "ms", "traceEvents": ev, "traceName": "sim.pt.trace.json"}
    if a.long_bytes:
        doc["deviceProperties"].append({"id": 99, "name": "L" * a.long_bytes})
    if not a.no_base:
        doc["baseTimeNanoseconds"] = base
    if a.host:
        doc["host_name"] = a.host
    text = json.dumps(doc, indent=1).encode()
    if a.gz:
        with gzip.open(a.out, "wb") as f:
            f.write(text)
    else:
        with open(a.out, "wb") as f:
            f.write(text)
    colls = sum(1 for e in ev if e.get("cat") == "kernel" and "SendRecv" not in e["name"])
    json.dump({"offset_ns": off, "base_ns": base, "kernels": corr, "coll_kernels": colls}, open(a.out + ".clock.json", "w"))


def extra_events(ev, hpid):
    """Shapes of real traces: the GPUs' and a thread's names, labels and order; a flow from each launch to its
    kernel (ac2g, as libkineto writes them); a flow whose points start no slice; instants of thread and global
    scope; counter samples (one with a value that is not a non-negative integer); a string pid and tid (older
    Kineto's "Spans"); a null in args; a B/E pair (a phase the Perfetto merge has no form for)."""
    out = []
    launches = [e for e in ev if e.get("name") == "cudaLaunchKernel"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    for launch, k in zip(launches, kernels):
        cid = launch["args"]["correlation"]
        out.append({"ph": "s", "id": cid, "pid": launch["pid"], "tid": launch["tid"], "ts": launch["ts"],
                    "cat": "ac2g", "name": "ac2g"})
        out.append({"ph": "f", "id": cid, "pid": k["pid"], "tid": k["tid"], "ts": k["ts"], "cat": "ac2g",
                    "name": "ac2g", "bp": "e"})
    for g, stream in sorted({(k["pid"], k["tid"]) for k in kernels}):
        out.append({"name": "process_name", "ph": "M", "pid": g, "tid": 0, "args": {"name": "GPU %d" % g}})
        out.append({"name": "process_labels", "ph": "M", "pid": g, "tid": 0, "args": {"labels": "Simulated GPU"}})
        out.append({"name": "process_sort_index", "ph": "M", "pid": g, "tid": 0, "args": {"sort_index": 5000000 + g}})
        out.append({"name": "thread_name", "ph": "M", "pid": g, "tid": stream, "args": {"name": "stream %d" % stream}})
        out.append({"name": "thread_sort_index", "ph": "M", "pid": g, "tid": stream, "args": {"sort_index": stream}})
    first = ev[1]
    t0, tid = first["ts"], first["tid"]
    out.append({"name": "thread_name", "ph": "M", "pid": hpid, "tid": tid, "args": {"name": "thread %d (python)" % tid}})
    out.append({"ph": "s", "id": 900001, "pid": hpid, "tid": tid, "ts": round(t0 + 0.111, 3), "cat": "fwdbwd",
                "name": "fwdbwd"})
    out.append({"ph": "f", "id": 900001, "pid": hpid, "tid": tid, "ts": round(t0 + 0.222, 3), "cat": "fwdbwd",
                "name": "fwdbwd", "bp": "e"})
    out.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": hpid, "tid": tid,
                "ts": round(t0 + 0.3, 3), "args": {"Device Type": 0, "Bytes": 4096, "Total Allocated": 8192,
                                                  "Addr": "0x7f00deadbeef", "Note": None}})
    out.append({"ph": "i", "s": "g", "cat": "Trace", "name": "Iteration Start: PyTorch Profiler", "pid": "Traces",
                "tid": "PyTorch Profiler", "ts": t0})
    out.append({"ph": "C", "cat": "memory", "name": "GPU memory", "pid": hpid, "tid": 0, "ts": round(t0 + 1, 3),
                "args": {"allocated": 1024, "reserved": 2048}})
    out.append({"ph": "C", "cat": "sensor", "name": "temperature", "pid": hpid, "tid": 0, "ts": round(t0 + 2, 3),
                "args": {"celsius": -3.5}})
    out.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
                "ts": round(t0 - 1, 3), "dur": 50, "args": {"Op count": 0, "Input type": ["float", None],
                                                             "Input Strides": [[], [1]], "Empty": {}}})
    out.append({"ph": "B", "cat": "user", "name": "begin-end", "pid": hpid, "tid": tid, "ts": round(t0 + 3, 3)})
    out.append({"ph": "E", "pid": hpid, "tid": tid, "ts": round(t0 + 4, 3)})
    return out


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(a):
    opener = gzip.open if a.kineto.endswith(".gz") else open
    with opener(a.kineto, "rb") as f:
        orig = json.load(f)
    with open(a.merged) as f:
        merged = json.load(f)
    oe, me = orig["traceEvents"], merged["traceEvents"]
    if me[:len(oe)] != oe:
        bad = next(i for i in range(len(oe)) if i >= len(me) or me[i] != oe[i])
        fail("original event %d changed or missing: %r" % (bad, oe[bad]))
    for k, v in orig.items():
        if k != "traceEvents" and merged.get(k) != v:
            fail("top-level member %r changed" % k)
    info = merged.get("ncclscopeMerge")
    if not info:
        fail("no ncclscopeMerge metadata")
    if a.unaligned:
        if info["alignment"] != "unaligned":
            fail("alignment %r, want unaligned" % info["alignment"])
        ours = [e for e in me[len(oe):] if e.get("ph") == "M" and e.get("name") == "process_name"]
        if not ours or any(not e["args"]["name"].startswith("[unaligned] ") for e in ours):
            fail("a merged process track is not marked [unaligned]")
        print("unaligned merge: %d original events kept, %d added, every track marked" % (len(oe), len(me) - len(oe)))
        return
    if info["alignment"] != "realtime":
        fail("alignment %r" % info["alignment"])
    clock = json.load(open(a.kineto + ".clock.json"))
    if info["baseTimeNanoseconds"] != clock["base_ns"]:
        fail("base %d, the trace's is %d" % (info["baseTimeNanoseconds"], clock["base_ns"]))
    err_us = info["errorUs"]
    if not 0 < err_us < 1000:
        fail("stated error %r us" % err_us)
    truth = load_truth(a.truth)
    off, base = clock["offset_ns"], clock["base_ns"]
    added = me[len(oe):]
    pid_comm = {}
    for e in added:
        if e.get("name") == "ProfilerInit":
            pid_comm[e["pid"]] = (e["args"]["commId"], e["args"]["rank"])
    colls = {}
    for e in added:
        if e.get("cat") == "Coll" and e.get("ph") == "X" and e["pid"] in pid_comm:
            c, r = pid_comm[e["pid"]]
            colls[(int(c, 16), r, e["args"]["func"], e["args"]["seq"])] = e
    plain = {}
    with open(a.plain) as f:
        pe = json.load(f)["traceEvents"]
    plain_comm = {e["pid"]: (e["args"]["commId"], e["args"]["rank"]) for e in pe if e.get("name") == "ProfilerInit"}
    for e in pe:
        if e.get("cat") == "Coll" and e.get("ph") == "X" and e["pid"] in plain_comm:
            c, r = plain_comm[e["pid"]]
            plain[(int(c, 16), r, e["args"]["func"], e["args"]["seq"])] = e
    to_us = lambda mono: (mono + off - base) / 1000.0
    shift_us = (off - base) / 1000.0  # this script's own realtime - monotonic reading
    n = worst = 0
    for t in truth:
        if t["kind"] != "coll" or t["pid"] != a.pid or not t["emitted"] or t["ce"] or t["aborted"] or not t["t_launch"]:
            continue
        if t["func"] in P2P:
            continue
        key = (int(t["comm"], 16), t["rank"], t["func"], t["seq"])
        e, p = colls.get(key), plain.get(key)
        if e is None or p is None:
            fail("no merged or plain Coll for the truth's %s seq %d of rank %d" % (t["func"], t["seq"], t["rank"]))
        # The instant the plugin stamped (plain: CLOCK_MONOTONIC) lands where an independent realtime reading puts it.
        miss = abs((e["ts"] - p["ts"]) - shift_us)
        worst = max(worst, miss)
        if miss > err_us + 0.002:
            fail("Coll %s seq %d rank %d moved by %.3f us, an independent clock reading says %.3f: off by %.3f us > "
                 "stated error %.3f us" % (t["func"], t["seq"], t["rank"], e["ts"] - p["ts"], shift_us, miss, err_us))
        lo, hi = to_us(t["t_launch"]), to_us(t["t_end"])
        if not lo - err_us <= e["ts"] <= hi + err_us:
            fail("Coll %s seq %d rank %d at %.3f us, outside its truth [launch %.3f, end %.3f] us"
                 % (t["func"], t["seq"], t["rank"], e["ts"], lo, hi))
        n += 1
    if n == 0:
        fail("no Coll of process %d to check" % a.pid)
    slices = {(e["pid"], e["tid"], e["ts"]): e for e in added if e.get("cat") == "Coll" and e.get("ph") == "X"}
    kernels = {(e["pid"], e["tid"], e["ts"]): e for e in oe if e.get("cat") == "kernel"}
    starts = {e["id"]: e for e in added if e.get("ph") == "s" and e["id"] >= 1 << 62}
    links = 0
    for f in added:
        if f.get("ph") != "f" or f["id"] < 1 << 62:
            continue
        s = starts[f["id"]]
        coll, k = slices.get((s["pid"], s["tid"], s["ts"])), kernels.get((f["pid"], f["tid"], f["ts"]))
        if coll is None or k is None:
            fail("link %d does not join a Coll to a kernel" % f["id"])
        c, r = pid_comm[coll["pid"]]
        kt = k["args"]["truth"]
        if (int(c, 16), r, coll["args"]["func"], coll["args"]["seq"]) != (int(kt["comm"], 16), kt["rank"], kt["func"],
                                                                           kt["seq"]):
            fail("Coll %s seq %d linked to the kernel of %r" % (coll["args"]["func"], coll["args"]["seq"], kt))
        links += 1
    want = clock["coll_kernels"] if a.min_linked < 0 else a.min_linked
    if links != info["kernelsLinked"] or links < want:
        fail("%d links (metadata says %d), want at least %d" % (links, info["kernelsLinked"], want))
    print("merged: %d original events kept; %d Colls placed within %.3f us (worst %.3f us); "
          "%d of %d collective kernels linked, all to the right Coll; residual median %s us" %
          (len(oe), n, err_us, worst, links, clock["coll_kernels"], info.get("linkResidualMedianUs")))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--truth", required=True)
    m.add_argument("--pid", type=int, required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--gz", action="store_true")
    m.add_argument("--shift-s", type=float, default=0.0)
    m.add_argument("--host", default="")
    m.add_argument("--no-base", action="store_true")
    m.add_argument("--write-pid", type=int, help="host events under this pid (another process's trace)")
    m.add_argument("--extras", action="store_true", help="add the shapes of real traces (extra_events)")
    m.add_argument("--long-bytes", type=int, default=0,
                   help="add a deviceProperties entry and an event's argument of this many bytes each")
    c = sub.add_parser("check")
    c.add_argument("--truth", required=True)
    c.add_argument("--pid", type=int, required=True)
    c.add_argument("--kineto", required=True)
    c.add_argument("--merged", required=True)
    c.add_argument("--plain", help="the same export without the merge (--format chrome)")
    c.add_argument("--min-linked", type=int, default=-1, help="default: every collective's kernel")
    c.add_argument("--unaligned", action="store_true")
    a = p.parse_args()
    make(a) if a.cmd == "make" else check(a)


if __name__ == "__main__":
    main()
