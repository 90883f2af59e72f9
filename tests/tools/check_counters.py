#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks how an export carries the plugin's process counters (the COUNTERS
block: events, drops per type, ring and handle drops, bad handles ...),
python3 stdlib only.

usage: check_counters.py --jsonl FILE [--chrome FILE] [--stats FILE]
                         [--expect KEY=VALUE ...] [--want-drops] [--scope last-fini|process]
JSONL: per process (myPid) exactly one lifecycle record carries
details.processCounters; with --scope last-fini (default) it is that
process's last ProfilerFinalize, with --scope process a process-scope
ProfilerFinalize (commId 0, rank -1). Its counters are consistent
(dropped = droppedRing + droppedHandles = sum of droppedByType). --expect
compares the sum over processes (nested keys with a dot:
droppedByType.ncclProfileColl=2); --stats compares with ns-trace-stats'
independent reading of the same traces. Chrome: every rank process track of
a process has an "ncclscope losses" counter sample with its numbers, and a
"ncclscope dropped by type" one when anything was dropped."""
import argparse
import collections
import json
import re
import sys


def flat(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jsonl", required=True)
    ap.add_argument("--chrome")
    ap.add_argument("--stats")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--want-drops", action="store_true")
    ap.add_argument("--scope", choices=("last-fini", "process"), default="last-fini")
    args = ap.parse_args()
    errors = []
    finis = collections.defaultdict(list)  # myPid -> [(lineno, record)]
    with open(args.jsonl) as fh:
        for n, line in enumerate(fh, 1):
            rec = json.loads(line)
            if rec.get("recordType") == "lifecycle" and rec.get("func") == "ProfilerFinalize":
                finis[rec["myPid"]].append((n, rec))
    per_pid = {}
    for pid, lst in finis.items():
        carriers = [(n, r) for n, r in lst if "processCounters" in r["details"]]
        if len(carriers) != 1:
            errors.append("pid %d: %d finalize records carry processCounters, want 1" % (pid, len(carriers)))
            continue
        n, r = carriers[0]
        if args.scope == "last-fini" and n != lst[-1][0]:
            errors.append("pid %d: processCounters on line %d, not on the last finalize (line %d)" % (pid, n, lst[-1][0]))
        if args.scope == "process" and (r["commId"] != 0 or r["rank"] != -1):
            errors.append("pid %d: process-scope finalize with commId/rank %r/%r" % (pid, r["commId"], r["rank"]))
        pc = r["details"]["processCounters"]
        for k, v in flat(pc).items():
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                errors.append("pid %d: processCounters.%s = %r" % (pid, k, v))
        d = pc.get("dropped")
        if "droppedRing" in pc and "droppedHandles" in pc and d != pc["droppedRing"] + pc["droppedHandles"]:
            errors.append("pid %d: dropped %r != droppedRing + droppedHandles" % (pid, d))
        if d != sum(pc.get("droppedByType", {}).values()):
            errors.append("pid %d: dropped %r != sum of droppedByType %r" % (pid, d, pc.get("droppedByType")))
        per_pid[pid] = pc
    if not per_pid:
        errors.append("no process counters in %s" % args.jsonl)
    total = collections.Counter()
    for pc in per_pid.values():
        total.update(flat(pc))
    for e in args.expect:
        k, v = e.split("=", 1)
        if total.get(k, 0) != int(v):
            errors.append("processCounters.%s = %r, want %s" % (k, total.get(k, 0), v))
    if args.want_drops and total.get("dropped", 0) == 0:
        errors.append("nothing dropped: the trace was meant to overflow")
    if args.stats:
        with open(args.stats) as fh:
            st = json.load(fh)
        pairs = [("events", "events"), ("dropped", "dropped"), ("droppedRing", "dropped_ring"),
                 ("droppedHandles", "dropped_handles"), ("badHandles", "bad_handles"),
                 ("parentLost", "parent_lost"), ("writeErrors", "write_errors")]
        for ours, theirs in pairs:
            if total.get(ours, 0) != st.get(theirs, 0):
                errors.append("processCounters.%s = %r, ns-trace-stats %s = %r" %
                              (ours, total.get(ours, 0), theirs, st.get(theirs)))
        names = ["ncclProfileGroup", "ncclProfileColl", "ncclProfileP2p", "ncclProfileProxyOp",
                 "ncclProfileProxyStep", "ncclProfileProxyCtrl", "ncclProfileKernelCh", "ncclProfileNetPlugin",
                 "ncclProfileGroupApi", "ncclProfileCollApi", "ncclProfileP2pApi", "ncclProfileKernelLaunch",
                 "ncclProfileCeColl", "ncclProfileCeSync", "ncclProfileCeBatch"]
        for i, t in enumerate(names):
            if total.get("droppedByType." + t, 0) != st["type_dropped"][i]:
                errors.append("droppedByType.%s = %r, ns-trace-stats %r" %
                              (t, total.get("droppedByType." + t, 0), st["type_dropped"][i]))
    if args.chrome:
        with open(args.chrome) as fh:
            doc = json.load(fh)
        pnames = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
                  if e.get("ph") == "M" and e.get("name") == "process_name"}
        losses = {e["pid"]: e for e in doc["traceEvents"] if e.get("ph") == "C" and e["name"] == "ncclscope losses"}
        bytype = {e["pid"]: e for e in doc["traceEvents"]
                  if e.get("ph") == "C" and e["name"] == "ncclscope dropped by type"}
        for cpid, name in pnames.items():
            m = re.match(r"rank -?\d+ \(.*:(\d+)\) comm ", name)
            if not m or int(m.group(1)) not in per_pid:
                continue
            pc = per_pid[int(m.group(1))]
            e = losses.get(cpid)
            if not e:
                errors.append("chrome: no 'ncclscope losses' counter on %r" % name)
                continue
            for k in ("dropped", "droppedRing", "droppedHandles", "badHandles"):
                if e["args"].get(k) != pc.get(k, 0):
                    errors.append("chrome %r: losses.%s = %r, want %r" % (name, k, e["args"].get(k), pc.get(k, 0)))
            want_types = {t[len("ncclProfile"):]: v for t, v in pc.get("droppedByType", {}).items()}
            got_types = bytype[cpid]["args"] if cpid in bytype else {}
            if got_types != want_types:
                errors.append("chrome %r: dropped by type %r, want %r" % (name, got_types, want_types))
    for e in errors[:50]:
        print(e)
    print("process counters: %d process(es), dropped %d, bad handles %d: %s" %
          (len(per_pid), total.get("dropped", 0), total.get("badHandles", 0), "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
