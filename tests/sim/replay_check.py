#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare a recording (JSON Lines export contract) with what a replay of it made.

Usage:
  replay_check.py stream ORIGINAL.jsonl SPY_DIR REPLAY_TRUTH [--max-dev-ms X]
      The replay drove the recording plugin (tests/sim/recording_plugin.c),
      whose per-process call logs are SPY_DIR/rec.<pid>. Per recorded thread,
      the replay made exactly the recorded calls in the recorded order (start,
      state, stop; event type; state id), every parent it passed is the handle
      returned for the recorded parent, pTimers and transfer sizes are as
      recorded, and 99 % of the event durations are within X ms (default 1) of
      the recorded ones (the largest deviation is printed: on a 2-vCPU VM a
      thread's wake-up alone is late by 1-4 ms now and then, in the recorded
      run as in its replay).
  replay_check.py fixed ORIGINAL.jsonl REPLAYED.jsonl [--max-dev-ms X]
      Record -> export -> replay -> export is a fixed point: the same events
      (type, details, hierarchy, states), per-thread order, 99 % of the
      durations within X ms.
Exit status 0 when every check holds; failures are printed with both sides.
"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import pop_option  # noqa: E402

FAILS = []


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append(f"FAIL {what}: got {got!r} want {want!r}")
        if len(FAILS) <= 30:
            print(FAILS[-1])


TYPES = ["Group", "Coll", "P2p", "ProxyOp", "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin", "GroupApi",
         "CollApi", "P2pApi", "KernelLaunch", "CeColl", "CeSync", "CeBatch"]


def type_index(name):
    return TYPES.index(name[len("ncclProfile"):] if name.startswith("ncclProfile") else name)


def ts_ns(x):
    """µs as written with (at least) 3 decimals -> ns, from the text."""
    s = repr(x) if isinstance(x, float) else str(x)
    if "e" in s or "E" in s:
        return round(float(s) * 1000)
    whole, _, frac = s.partition(".")
    frac = (frac + "000")[:3]
    neg = whole.startswith("-")
    v = abs(int(whole)) * 1000 + int(frac)
    return -v if neg else v


def load_recording(path):
    """Per (pid, tid): calls in replay order; and events by address."""
    events, states, lines = {}, [], []
    with open(path) as f:
        raw = f.read().splitlines()
    for i, line in enumerate(raw):
        if not line.strip():
            continue
        try:
            # keep the text of timestamps exact
            r = json.loads(line, parse_float=lambda s: s)
        except ValueError:
            continue
        rt = r.get("recordType")
        if rt == "event":
            r["_order"] = i
            events[r["eventAddr"]] = r
        elif rt == "state":
            r["_order"] = i
            states.append(r)
    def depth(ev):
        d = 0
        p = ev.get("parentObj")
        while p in events and d < 16:
            d += 1
            p = events[p].get("parentObj")
        return d
    calls = {}
    for a, ev in events.items():
        st = ev["start"]
        calls.setdefault((st["pid"], st["tid"]), []).append(
            (ts_ns(st["ts"]), 1 + depth(ev), ev["_order"], "start", a, None))
        sp = ev.get("stop")
        if sp and not ev.get("incomplete"):
            calls.setdefault((sp["pid"], sp["tid"]), []).append((ts_ns(sp["ts"]), 41, ev["_order"], "stop", a, None))
    for s in states:
        if s["eventAddr"] not in events:
            continue
        # "repeats": the plugin folded that many more identical reports into this line
        for _ in range(int(s.get("repeats", 1))):
            calls.setdefault((s["pid"], s["tid"]), []).append((ts_ns(s["ts"]), 40, s["_order"], "state",
                                                               s["eventAddr"], s))
    for k in calls:
        calls[k].sort(key=lambda c: (c[0], c[1], c[2]))
    return events, calls


def stream(orig, spy_dir, truth_path, max_dev_ms):
    events, rcalls = load_recording(orig)
    truth = [json.loads(l) for l in open(truth_path)]
    rec_of = {}  # (replay pid, replay tid) -> (recorded pid, recorded tid)
    for t in truth:
        if t.get("kind") == "replay_thread":
            rec_of[(t["pid"], t["tid"])] = (t["rec_pid"], t["rec_tid"])
    spy = {}
    for fpath in glob.glob(os.path.join(spy_dir, "rec.*")):
        pid = int(fpath.rsplit(".", 1)[1])
        for line in open(fpath):
            r = json.loads(line)
            if r["ev"] in ("start", "stop", "state"):
                spy.setdefault((pid, r["tid"]), []).append(r)
    check(len(rec_of) == len(rcalls), "replayed threads", len(rec_of), len(rcalls))
    handle_of = {}  # recorded eventAddr -> spy handle, from every thread's starts first
    for (rpid, rtid), (opid, otid) in rec_of.items():
        for c, g in zip(rcalls.get((opid, otid), []), spy.get((rpid, rtid), [])):
            if c[3] == "start" and g["ev"] == "start":
                handle_of[c[4]] = g["h"]
    spy_ts = {}     # recorded eventAddr -> [start ns, stop ns] in the replay
    compared = 0
    for (rpid, rtid), (opid, otid) in sorted(rec_of.items()):
        want = rcalls.get((opid, otid), [])
        got = spy.get((rpid, rtid), [])
        check(len(got) == len(want), f"calls of recorded thread {opid}/{otid}", len(got), len(want))
        for k, (c, g) in enumerate(zip(want, got)):
            ts, _, _, kind, addr, st = c
            ev = events[addr]
            if g["ev"] != kind:
                check(False, f"thread {opid}/{otid} call {k}: kind", g["ev"], kind)
                break
            compared += 1
            if kind == "start":
                t = type_index(ev["type"])
                check(g["type"] == 1 << t, f"thread {opid}/{otid} call {k}: type", g["type"], 1 << t)
                spy_ts[addr] = [g["ts"], None]
                p = ev.get("parentObj")
                if p in events:
                    check(g["parent"] == handle_of.get(p), f"{ev['type']} {addr}: parent handle",
                          g["parent"], handle_of.get(p))
                elif p is None:
                    check(g["parent"] == "(nil)", f"{ev['type']} {addr}: no parent", g["parent"], "(nil)")
                det = ev.get("details", {})
                if t == 6 and "pTimer" in det:
                    check(g.get("ptimer") == int(det["pTimer"]), f"KernelCh {addr}: pTimer", g.get("ptimer"),
                          det["pTimer"])
            elif kind == "stop":
                check(g["h"] == handle_of.get(addr), f"stop of {addr}: handle", g["h"], handle_of.get(addr))
                if addr in spy_ts:
                    spy_ts[addr][1] = g["ts"]
            else:
                check(g["h"] == handle_of.get(addr), f"state of {addr}: handle", g["h"], handle_of.get(addr))
                check(g["state"] == st["id"], f"state of {addr}: id", g["state"], st["id"])
                if st["id"] == 22 and "pTimer" in st:
                    check(g.get("ptimer") == int(st["pTimer"]), f"KernelChStop {addr}: pTimer", g.get("ptimer"),
                          st["pTimer"])
                if "transSize" in st and "transSize" in g:
                    check(g["transSize"] == int(st["transSize"]), f"state of {addr}: transSize", g["transSize"],
                          st["transSize"])
    devs = []
    for addr, (s0, s1) in spy_ts.items():
        ev = events[addr]
        if s1 is None or not ev.get("stop") or ev.get("incomplete"):
            continue
        rec_dur = ts_ns(ev["stop"]["ts"]) - ts_ns(ev["start"]["ts"])
        devs.append(abs((s1 - s0) - rec_dur))
    if devs:
        devs.sort()
        p99 = devs[int(len(devs) * 0.99)] / 1e6
        print(f"replay: {compared} calls compared, {len(devs)} durations: deviation median "
              f"{statistics.median(devs) / 1e3:.1f} us, p99 {p99 * 1e3:.1f} us, max {devs[-1] / 1e6:.3f} ms")
        check(p99 <= max_dev_ms, f"p99 of the duration deviations (ms)", p99, f"<= {max_dev_ms}")
    check(compared > 0, "calls compared", compared, "> 0")


def structure(path):
    """Threads keyed by the sequence of their calls (kind, type, state), which
    does not depend on pids, tids or event ids; events named by (thread key,
    position of their start in it); per event: type, parent name, details."""
    events, calls = load_recording(path)
    keyed = {}
    for tk, cs in calls.items():
        # the communicators and ranks a thread works for tell apart threads whose calls look alike
        sig = tuple((kind, events[addr]["type"], st["id"] if st else None) for _, _, _, kind, addr, st in cs)
        sig += tuple(sorted({(str(events[addr].get("commId")), events[addr].get("rank")) for _, _, _, _, addr, _ in cs}))
        keyed.setdefault(sig, []).append(cs)
    name = {}
    for sig, lists in keyed.items():
        # threads with the same call sequence: ordered by their first call
        lists.sort(key=lambda cs: cs[0][0] if cs else 0)
        for n, cs in enumerate(lists):
            for pos, (_, _, _, kind, addr, _) in enumerate(cs):
                if kind == "start":
                    name[addr] = (hash(sig), n, pos)
    evs, durs = {}, {}
    for addr, ev in events.items():
        # derived from times: the GPU clock, and whether an op's pTimers are its own (bwBasis), which weighs
        # launch times against callback times that a replay shifts by up to a ms
        det = {k: v for k, v in ev.get("details", {}).items()
               if k not in ("parentGroup", "gpuStart", "gpuStop", "gpuErrorUs", "execStop", "algbwGBs", "busbwGBs",
                            "bwBasis", "eventPid", "data")}
        p = ev.get("parentObj")
        n = name.get(addr)
        evs[n] = (ev["type"], name.get(p) if p in events else None, json.dumps(det, sort_keys=True),
                  ev.get("incomplete", False), ev.get("isPxn", False))
        if ev.get("stop") and not ev.get("incomplete"):
            durs[n] = ts_ns(ev["stop"]["ts"]) - ts_ns(ev["start"]["ts"])
    states = {}
    for tk, cs in calls.items():
        for _, _, _, kind, addr, st in cs:
            if kind == "state":
                states.setdefault(name.get(addr), []).append((st["id"], st.get("pTimer"), st.get("transSize")))
    return sorted(len(v) for v in keyed.values()), evs, durs, states


def fixed(orig, again, max_dev_ms):
    t1, e1, d1, s1 = structure(orig)
    t2, e2, d2, s2 = structure(again)
    check(t1 == t2, "threads per call sequence", t2, t1)
    check(len(e1) == len(e2), "events", len(e2), len(e1))
    bad = [k for k in e1 if e1[k] != e2.get(k)]
    check(not bad, f"events that differ (first: {e1[bad[0]] if bad else None} vs {e2.get(bad[0]) if bad else None})",
          len(bad), 0)
    badst = [k for k in s1 if s1[k] != s2.get(k)]
    check(not badst, "events whose states differ", len(badst), 0)
    devs = sorted(abs(d1[k] - d2[k]) for k in d1 if k in d2)
    worst = sorted(((abs(d1[k] - d2[k]), e1[k][0], d1[k], d2[k]) for k in d1 if k in d2), reverse=True)[:5]
    for w in worst:
        print(f"  largest deviations: {w[1]} recorded {w[2] / 1e3:.1f} us, replayed {w[3] / 1e3:.1f} us")
    if devs:
        p99 = devs[int(len(devs) * 0.99)] / 1e6
        print(f"fixed point: {len(e1)} events, {sum(len(v) for v in s1.values())} states; duration deviation median "
              f"{statistics.median(devs) / 1e3:.1f} us, p99 {p99 * 1e3:.1f} us, max {devs[-1] / 1e6:.3f} ms")
        check(p99 <= max_dev_ms, "p99 of the duration deviations (ms)", p99, f"<= {max_dev_ms}")


def main():
    args = sys.argv[1:]
    dev = pop_option(args, "--max-dev-ms", float, 1.0)
    if args[0] == "stream":
        stream(args[1], args[2], args[3], dev)
    elif args[0] == "fixed":
        fixed(args[1], args[2], dev)
    else:
        print(__doc__)
        return 2
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
