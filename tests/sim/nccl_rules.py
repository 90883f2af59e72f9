#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rules every NCCL release (2.23 .. 2.30) guarantees a profiler plugin, and only those.

usage: nccl_rules.py spy DIR        the recording plugin's call logs (DIR/rec.<pid>)
       nccl_rules.py export FILE    an `ncclscope export --format jsonl` file

Guaranteed (src/plugin/profiler*.cc, enqueue.cc, proxy.cc, transport/net.cc):
  handles     stop and state calls name a handle a start returned (or NULL)    [call logs]
  order       a child starts after its parent started
  types       the parent's type is one NCCL gives that child type
  states      a state is recorded after its event started and before it stopped
  kch_stop    KernelChStop is followed at once by the stop of that KernelCh (same thread)
  step_slots  step s+8 of a ProxyOp starts only after the last start of step s stopped
  groupapi    GroupApi: state 23 before 24, both before its stop
NOT guaranteed, so not checked: that every start is stopped (leaks, aborts, exits),
that an event is stopped once (IB NetPlugin), that a parent outlives its children,
that children stop before their parents. Prints per rule how many instances were
checked and failed; exit status 1 if any failed.
"""
import collections
import glob
import json
import os
import sys

T = {1: "Group", 2: "Coll", 4: "P2p", 8: "ProxyOp", 16: "ProxyStep", 32: "ProxyCtrl", 64: "KernelCh",
     128: "NetPlugin", 256: "GroupApi", 512: "CollApi", 1024: "P2pApi", 2048: "KernelLaunch", 4096: "CeColl",
     8192: "CeSync", 16384: "CeBatch"}
PARENTS = {"Coll": {"CollApi", "Group"}, "P2p": {"P2pApi", "Group"}, "ProxyOp": {"Coll", "P2p"},
           "ProxyStep": {"ProxyOp"}, "NetPlugin": {"ProxyStep"}, "KernelCh": {"Coll", "P2p"},
           "CollApi": {"GroupApi"}, "P2pApi": {"GroupApi"}, "KernelLaunch": {"GroupApi"},
           "CeColl": {"CollApi"}, "CeSync": {"CeColl"}, "CeBatch": {"CeColl"}}


class Stream:
    """Events (id -> type, parent id, pid, start/stop position) and calls per thread, in order."""

    def __init__(self):
        self.ev = {}  # id -> dict(type, parent, pid, start, stop, step)
        self.threads = collections.defaultdict(list)  # (pid, tid) -> [(pos, kind, id, state)]
        self.bad_handles = 0
        self.handle_calls = 0


def from_spy(d):
    s = Stream()
    pos = 0
    for f in sorted(glob.glob(os.path.join(d, "rec.*"))):
        pid = int(f.rsplit(".", 1)[1])
        live = {}  # handle -> current id (the recording plugin never reuses a handle while loaded)
        for line in open(f):
            r = json.loads(line)
            if r["ev"] not in ("start", "stop", "state"):
                continue
            pos += 1
            key = (pid, r["tid"])
            if r["ev"] == "start":
                if r["h"] == "(nil)":
                    continue
                eid = (pid, r["h"])
                parent = (pid, r["parent"]) if r["parent"] != "(nil)" else None
                foreign = r["type"] == 8 and r.get("pid") not in (None, pid)
                s.ev[eid] = {"type": T[r["type"]], "parent": None if foreign else parent, "pid": pid,
                             "start": pos, "stop": None, "step": r.get("step"), "states": []}
                live[r["h"]] = eid
                s.threads[key].append((pos, "start", eid, None))
                continue
            s.handle_calls += 1
            if r["h"] == "(nil)":
                continue
            eid = live.get(r["h"])
            if eid is None:
                s.bad_handles += 1
                continue
            if r["ev"] == "stop":
                if s.ev[eid]["stop"] is None:
                    s.ev[eid]["stop"] = pos
                s.threads[key].append((pos, "stop", eid, None))
            else:
                s.ev[eid]["states"].append((pos, r["state"]))
                s.threads[key].append((pos, "state", eid, r["state"]))
    return s


def from_export(path):
    s = Stream()
    calls = []
    for line in open(path):
        r = json.loads(line, parse_float=lambda x: x)
        if r.get("recordType") == "event":
            t = r["type"][len("ncclProfile"):]
            eid = r["eventAddr"]
            s.ev[eid] = {"type": t, "parent": r.get("parentObj") if not r.get("isPxn") or t != "ProxyOp" else None,
                         "pid": r["start"]["pid"], "start": None, "stop": None,
                         "step": r.get("details", {}).get("step"), "states": []}
            calls.append((r["start"]["ts"], 0, r["start"]["pid"], r["start"]["tid"], "start", eid, None))
            if r.get("stop") and not r.get("incomplete"):
                calls.append((r["stop"]["ts"], 2, r["stop"]["pid"], r["stop"]["tid"], "stop", eid, None))
        elif r.get("recordType") == "state":
            # "repeats": the plugin folded that many more identical reports into this line
            for _ in range(int(r.get("repeats", 1))):
                calls.append((r["ts"], 1, r["pid"], r["tid"], "state", r["eventAddr"], r["id"]))
    # time order; at equal times a start before a state before a stop
    calls.sort(key=lambda c: (float(c[0]), c[1]))
    for pos, (ts, _, pid, tid, kind, eid, state) in enumerate(calls, 1):
        e = s.ev.get(eid)
        if e is None:
            s.bad_handles += kind != "start"
            continue
        if kind == "start":
            e["start"] = pos
        elif kind == "stop":
            e["stop"] = pos
        else:
            e["states"].append((pos, state))
        s.threads[(pid, tid)].append((pos, kind, eid, state))
    return s


def check(s):
    res = collections.OrderedDict((k, [0, 0]) for k in
                                  ("handles", "order", "types", "states", "kch_stop", "step_slots", "groupapi"))
    res["handles"] = [s.handle_calls, s.bad_handles]
    for eid, e in s.ev.items():
        p = s.ev.get(e["parent"]) if e["parent"] is not None else None
        if p is not None:
            res["order"][0] += 1
            res["order"][1] += not (p["start"] is not None and e["start"] is not None and p["start"] < e["start"])
            if e["type"] in PARENTS:
                res["types"][0] += 1
                res["types"][1] += p["type"] not in PARENTS[e["type"]]
        for pos, st in e["states"]:
            res["states"][0] += 1
            res["states"][1] += not (e["start"] < pos and (e["stop"] is None or pos < e["stop"]))
        if e["type"] == "GroupApi" and e["states"]:
            res["groupapi"][0] += 1
            order = [st for _, st in e["states"] if st in (23, 24)]
            res["groupapi"][1] += order not in ([23, 24], [23], [24], [])
    for calls in s.threads.values():
        for i, (pos, kind, eid, state) in enumerate(calls):
            if kind == "state" and state == 22:
                res["kch_stop"][0] += 1
                nxt = calls[i + 1] if i + 1 < len(calls) else None
                res["kch_stop"][1] += not (nxt and nxt[1] == "stop" and nxt[2] == eid)
    # step slots: per ProxyOp, the last start of step s stopped before step s+8's first start
    steps = collections.defaultdict(lambda: collections.defaultdict(list))
    for eid, e in s.ev.items():
        if e["type"] == "ProxyStep" and e["parent"] is not None and e["step"] is not None:
            steps[e["parent"]][e["step"]].append(e)
    for op, by in steps.items():
        for st, es in by.items():
            if st + 8 in by:
                last = max(es, key=lambda e: e["start"])
                first_next = min(e["start"] for e in by[st + 8])
                res["step_slots"][0] += 1
                res["step_slots"][1] += not (last["stop"] is not None and last["stop"] < first_next)
    return res


def main():
    src, path = sys.argv[1], sys.argv[2]
    s = from_spy(path) if src == "spy" else from_export(path)
    res = check(s)
    failed = 0
    for rule, (n, bad) in res.items():
        print(f"{rule:11s} checked {n:7d} failed {bad}")
        failed += bad
    print(json.dumps({k: v for k, v in res.items()}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
