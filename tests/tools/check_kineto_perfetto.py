#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`export --format perfetto --merge-kineto` against the Kineto trace it
merged and the Chrome merge (`--format chrome --merge-kineto`) of the same
inputs.

usage: check_kineto_perfetto.py MERGED.pftrace --kineto TRACE.json[.gz] --chrome MERGED.json
           --proto SUBSET.proto [--protoc PROTOC] [--min-linked N] [--not-drawn N]

1. The file passes check_perfetto.py's checks 1-4: the schema, the
   sequences, declared tracks, slices that nest as trace_processor pairs them.
2. Every "X" event of the trace is one slice: its name, category, start and
   duration to the ns, and its arguments (nested ones too; a null member
   left out, "0x..." strings as pointers), on the track of its process (its
   process_name, else "process N") and thread (its thread_name, else
   "thread N", or that with " (overlapping #k)" where it overlaps an earlier
   slice without nesting). pids and tids that are not numbers are numbered
   as tools/merge/kineto_draw.h says. Each flow point that starts no slice is a
   zero-length slice of its own.
3. Every instant is there (the process track for "s":"g"/"p"), every counter
   sample of non-negative integers is a counter value, and each flow of the
   trace (category and id) joins exactly the slices at its points.
4. Every slice and instant of the merge's own tracks (pid > ncclscopeMerge's
   pidBase in the Chrome merge) is there with the same name, start, duration
   and track name; each Chrome link arrow (Coll to NCCL kernel) is a flow
   from a "NCCL kernel" slice at the Coll's start to the kernel's slice; at
   least --min-linked of them.
5. The "ncclscopeMerge" instant carries the Chrome merge's metadata
   (alignment, base, pidBase, error, kernels linked) and the count of the
   trace's events not drawn (--not-drawn); the "kinetoTrace" instant every
   top-level member of the trace but traceEvents.
Prints counts; exits 1 with the first problems on failure. stdlib only."""
import argparse
import gzip
import json
import os
import sys
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_perfetto import decode, flow_holders, one  # noqa: E402

PID_MAX = 1 << 30  # tools/merge/kineto_draw.c: larger pids are numbered like string ones
SYNTH_TID = 0x80000000
KINETO_FLOW_BASE = 1 << 61
LINK_FLOW_BASE = 1 << 62


def ns(us):
    """Microseconds as written (a Decimal) to integer ns, as tools/merge/kineto_trace.c reads them."""
    return int((Decimal(us) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def norm(v):
    """A Kineto argument as the Perfetto drawer writes it: "0x..." hex strings as pointers, null members dropped,
    an empty array or object an annotation without a value (Perfetto's debug annotations have no form for one)."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if x is not None} if v else None
    if isinstance(v, list):
        return [norm(x) for x in v] if v else None
    if isinstance(v, str) and 3 <= len(v) <= 22 and v.startswith("0x"):
        try:
            return int(v[2:], 16)
        except ValueError:
            return v
    if isinstance(v, Decimal):
        return float(v)
    return v


def same(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


def numbering(events):
    """(pid, tid) numbers per event, as tools/merge/kineto_draw.c gives them."""
    def raw(v):
        return "" if v is None else json.dumps(v) if not isinstance(v, Decimal) else str(v)
    nums = [e["pid"] for e in events if type(e.get("pid")) is int and 0 <= e["pid"] < PID_MAX]
    next_pid, next_tid, given, out = max(nums, default=-1) + 1, SYNTH_TID, {}, []
    for e in events:
        p = e.get("pid")
        if type(p) is int and 0 <= p < PID_MAX:
            pid = p
        else:
            key = ("pid", raw(p))
            if key not in given:
                given[key], next_pid = next_pid, next_pid + 1
            pid = given[key]
        t = e.get("tid")
        if type(t) is int and 0 <= t < SYNTH_TID:
            tid = t
        else:
            key = ("tid", pid, raw(t))
            if key not in given:
                given[key], next_tid = next_tid, next_tid + 1
            tid = given[key]
        out.append((pid, tid))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--kineto", required=True)
    ap.add_argument("--chrome", required=True)
    ap.add_argument("--proto", required=True)
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--min-linked", type=int, default=1)
    ap.add_argument("--not-drawn", type=int, default=0)
    a = ap.parse_args()
    problems = []
    d = decode(a.trace, a.proto, a.protoc, problems)
    if d is None:
        print("FAIL: %s" % problems[-1])
        return 1
    tracks, events, slices, process_of = d["tracks"], d["events"], d["slices"], d["process_of"]
    opener = gzip.open if a.kineto.endswith(".gz") else open
    with opener(a.kineto, "rb") as f:
        kin = json.load(f, parse_float=Decimal)
    chrome = json.load(open(a.chrome), parse_float=Decimal)
    info = chrome["ncclscopeMerge"]
    pid_base = info["pidBase"]

    def where(e):
        """(process pid, process name, track name) of a decoded event."""
        proc = process_of(e["track"])
        p = one(proc, "process") if proc else None
        return (one(p, "pid") if p else None, one(p, "process_name") if p else None,
                one(tracks.get(e["track"], {}), "name"))

    # ---- 2. the trace's slices ----
    ke = kin["traceEvents"]
    ids = numbering(ke)
    pname, tname = {}, {}
    for e, (pid, tid) in zip(ke, ids):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            pname[pid] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            tname[(pid, tid)] = e["args"]["name"]
    starts = defaultdict(list)  # (pid, tid, ts) -> X events starting there
    want = Counter()
    want_args = {}
    for e, (pid, tid) in zip(ke, ids):
        if e.get("ph") != "X" or "ts" not in e:
            continue
        ts, dur = ns(e["ts"]), max(ns(e.get("dur", 0)), 0)
        starts[(pid, tid, ts)].append((dur, e))
        key = (pid, pname.get(pid, "process %d" % pid), tname.get((pid, tid), "thread %d" % tid), e.get("name", ""),
               e.get("cat"), ts, dur)
        want[key] += 1
        if e.get("args") is not None:
            want_args.setdefault(key, []).append(norm(e["args"]))
    flows = defaultdict(list)  # (cat, id) -> [(pid, ts, holder name)]
    for e, (pid, tid) in zip(ke, ids):
        if e.get("ph") not in ("s", "t", "f") or "ts" not in e or "id" not in e:
            continue
        ts = ns(e["ts"])
        at = starts.get((pid, tid, ts))
        if at:
            holder = max(at, key=lambda x: x[0])[1]["name"]  # the enclosing one of those starting there
        else:
            holder = e.get("name", "")
            want[(pid, pname.get(pid, "process %d" % pid), tname.get((pid, tid), "thread %d" % tid), holder,
                  e.get("cat"), ts, 0)] += 1
        flows[(e.get("cat"), json.dumps(e["id"], default=str))].append((pid, ts, holder))
    got, got_slices, overlapping = Counter(), defaultdict(list), 0
    for s in slices:
        pid, proc_name, track = where(s)
        if pid is None or pid >= pid_base:
            continue
        base = track
        if track and " (overlapping #" in track:
            base, overlapping = track[:track.rindex(" (overlapping #")], overlapping + 1
        key = (pid, proc_name, base, s["name"], s["cat"], s["ts"], s["end"]["ts"] - s["ts"])
        got[key] += 1
        got_slices[key].append(s)
    for key in (want - got):
        problems.append("trace slice missing: %s" % (key,))
    for key in (got - want):
        problems.append("slice not in the trace: %s" % (key,))
    for key, arglist in want_args.items():
        drawn = [s["args"] for s in got_slices.get(key, [])]
        for args in arglist:
            match = next((i for i, g in enumerate(drawn) if same(g, args)), None)
            if match is None:
                problems.append("slice %s: arguments %r, drawn %r" % (key[3], args, drawn[:1]))
            else:
                drawn.pop(match)

    # ---- 3. instants, counters, the trace's flows ----
    inst_want, inst_got = Counter(), Counter()
    for e, (pid, tid) in zip(ke, ids):
        if e.get("ph") in ("i", "I") and "ts" in e:
            scope = "process" if e.get("s") in ("g", "p") else tname.get((pid, tid), "thread %d" % tid)
            inst_want[(pid, scope, e["name"], ns(e["ts"]))] += 1
    counters_want, counters_got = Counter(), Counter()
    for e in ke:
        if e.get("ph") == "C" and all(type(v) is int and v >= 0 for v in e.get("args", {}).values()):
            for k, v in e["args"].items():
                counters_want[("%s %s" % (e["name"], k), ns(e["ts"]), v)] += 1
    for e in events:
        pid, proc_name, track = where(e)
        if e["type"] == "TYPE_INSTANT" and pid is not None and pid < pid_base:
            scope = "process" if "process" in tracks.get(e["track"], {}) else track
            inst_got[(pid, scope, e["name"], e["ts"])] += 1
        elif e["type"] == "TYPE_COUNTER" and pid is not None and pid < pid_base:
            counters_got[(one(tracks.get(e["track"], {}), "name"), e["ts"], e["value"])] += 1
    if inst_want != inst_got:
        problems.append("instants: missing %s, extra %s" % (list(inst_want - inst_got)[:3], list(inst_got - inst_want)[:3]))
    if counters_want != counters_got:
        problems.append("counters: want %s, got %s" % (dict(counters_want), dict(counters_got)))
    holders = flow_holders(slices, events)
    got_flows = Counter()
    for f, hs in holders.items():
        if KINETO_FLOW_BASE <= f < LINK_FLOW_BASE:
            got_flows[tuple(sorted((where(h)[0], h["ts"], h["name"]) for h in hs))] += 1
    want_flows = Counter(tuple(sorted(points)) for points in flows.values())
    if want_flows != got_flows:
        problems.append("the trace's flows: missing %s, extra %s" % (list(want_flows - got_flows)[:2],
                                                                       list(got_flows - want_flows)[:2]))

    # ---- 4. the merge's own tracks, and the link arrows ----
    ce = chrome["traceEvents"][len(ke):]
    cthreads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ce if e.get("ph") == "M" and e["name"] == "thread_name"}
    ours_want, ours_got = Counter(), Counter()
    for e in ce:
        if e.get("ph") == "X":
            ours_want[("X", e["pid"], cthreads.get((e["pid"], e["tid"])), e["name"], ns(e["ts"]), ns(e["dur"]))] += 1
        elif e.get("ph") == "b":
            ours_want[("b", e["pid"], e["name"], ns(e["ts"]))] += 1
        elif e.get("ph") == "i":
            ours_want[("i", e["pid"], e["name"], ns(e["ts"]))] += 1
    async_tracks = {u for u, t in tracks.items() if "process" not in t and "counter" not in t
                    and one(t, "name") and not any(one(t, "name") == n for n in cthreads.values())}
    links = {}
    for s in slices:
        pid, _, track = where(s)
        if pid is None or pid <= pid_base:
            continue
        if s["cat"] == "kernel link":
            links[s["flows"][0] if s["flows"] else None] = s
        elif s["track"] in async_tracks and track == s["name"]:
            ours_got[("b", pid, s["name"], s["ts"])] += 1
        else:
            ours_got[("X", pid, track, s["name"], s["ts"], s["end"]["ts"] - s["ts"])] += 1
    for e in events:
        pid = where(e)[0]
        if e["type"] == "TYPE_INSTANT" and pid is not None and pid > pid_base and e["name"] != "parent":
            ours_got[("i", pid, e["name"], e["ts"])] += 1
    if ours_want != ours_got:
        problems.append("the merge's own slices and instants: missing %s, extra %s"
                        % (list(ours_want - ours_got)[:3], list(ours_got - ours_want)[:3]))
    cflows = defaultdict(dict)
    for e in ce:
        if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int) and e["id"] >= LINK_FLOW_BASE:
            cflows[e["id"]][e["ph"]] = e
    nlinked = 0
    for fid, se in cflows.items():
        hs = holders.get(fid, [])
        link = links.get(fid)
        kern = [h for h in hs if h is not link]
        if not link or len(hs) != 2 or len(kern) != 1:
            problems.append("link %d: %d events carry it here" % (fid, len(hs)))
            continue
        if where(link)[0] != se["s"]["pid"] or link["ts"] != ns(se["s"]["ts"]):
            problems.append("link %d: starts at pid %s %d ns, Chrome pid %s %s us" % (fid, where(link)[0], link["ts"],
                                                                                      se["s"]["pid"], se["s"]["ts"]))
        if where(kern[0])[0] != se["f"]["pid"] or kern[0]["ts"] != ns(se["f"]["ts"]) or "ncclDevKernel" not in kern[0]["name"]:
            problems.append("link %d: ends on %s at %d ns, Chrome at %s us" % (fid, kern[0]["name"], kern[0]["ts"],
                                                                               se["f"]["ts"]))
        nlinked += 1
    if len(links) != len(cflows) or nlinked < a.min_linked:
        problems.append("%d link arrows (%d checked), Chrome has %d, want at least %d"
                        % (len(links), nlinked, len(cflows), a.min_linked))

    # ---- 5. the metadata instants ----
    meta = {e["name"]: e["args"] for e in events if e["type"] == "TYPE_INSTANT" and where(e)[0] == pid_base}
    m = (meta.get("ncclscopeMerge") or {}).get("ncclscopeMerge")
    if not m:
        problems.append("no ncclscopeMerge instant")
    else:
        for k in ("alignment", "baseTimeNanoseconds", "pidBase", "errorUs", "ncclKernels", "kernelsLinked"):
            if k in info and not same(m.get(k), norm(info[k])):
                problems.append("ncclscopeMerge %s: %r, Chrome %r" % (k, m.get(k), info[k]))
        nd = (m.get("kinetoEventsDrawn") or {}).get("notDrawn")
        if nd != a.not_drawn:
            problems.append("%s of the trace's events not drawn, want %d" % (nd, a.not_drawn))
    top = meta.get("kinetoTrace")
    for k, v in kin.items():
        if k != "traceEvents" and (top is None or not same(top.get(k), norm(v))):
            problems.append("top-level member %r: %r, the trace's %r" % (k, (top or {}).get(k), v))

    print("perfetto merge: %d bytes; the trace's %d slices (%d on overlapping tracks), %d instants, %d counter "
          "values, %d flows; the merge's %d slices and instants, %d link arrows"
          % (d["size"], sum(want.values()), overlapping, sum(inst_want.values()), sum(counters_want.values()),
             len(want_flows), sum(ours_want.values()), nlinked))
    if problems:
        for p in problems[:20]:
            print("FAIL:", p)
        print("(%d problems)" % len(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
