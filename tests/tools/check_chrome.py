#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks an `ncclscope export --format chrome` file against the structure
documented in docs/cli.md (python3 stdlib only).

usage: check_chrome.py FILE [--ranks N] [--min-flows N] [--jsonl FILE] [--moved N] [--async N]
Checks: valid JSON with a traceEvents list; every pid/tid used by a slice has
process_name/thread_name metadata; X slices nest properly on every track;
every flow id has one "s" and one "f", each inside a slice of its track,
with s.ts <= f.ts; instant events are well formed; per-channel tracks exist
for proxy/kernel slices; counter samples ("C") carry numeric args; async
slices ("b"/"e") pair up by id. With --jsonl (an export of the same traces),
every event appears exactly once (an X slice or an async slice with its
eventAddr); --moved / --async: how many events must have been moved off
their thread's track (a zero-length "moved" marker each) / written as
async slices. Exits 1 on any violation."""
import argparse
import collections
import json
import sys

EPS = 0.0015  # us: timestamps are printed with 3 decimals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--ranks", type=int, default=0, help="exact number of 'rank ...' process tracks")
    ap.add_argument("--min-flows", type=int, default=0)
    ap.add_argument("--jsonl", help="JSONL export of the same traces: every event must be drawn once")
    ap.add_argument("--moved", type=int, default=-1, help="exact number of moved-event markers")
    ap.add_argument("--async", dest="nasync", type=int, default=-1, help="exact number of async slices")
    args = ap.parse_args()
    errors = []
    with open(args.file, "rb") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print("no traceEvents list")
        return 1
    evs = doc["traceEvents"]
    pnames, tnames = {}, {}
    slices = collections.defaultdict(list)
    flows = collections.defaultdict(list)
    instants = 0
    counters = 0
    asyncs = collections.defaultdict(list)
    drawn = collections.Counter()  # eventAddr -> slices/async slices drawing the event
    markers = 0
    for i, e in enumerate(evs):
        ph = e.get("ph")
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            errors.append("event %d: pid/tid missing or not integers: %r" % (i, e))
            continue
        if ph == "M":
            if e.get("name") == "process_name":
                pnames[e["pid"]] = e["args"]["name"]
            elif e.get("name") == "thread_name":
                tnames[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        if not isinstance(e.get("ts"), (int, float)):
            errors.append("event %d: ts %r" % (i, e.get("ts")))
            continue
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                errors.append("event %d: dur %r" % (i, e.get("dur")))
                continue
            if not isinstance(e.get("name"), str) or not isinstance(e.get("args", {}), dict):
                errors.append("event %d: name/args" % i)
            slices[(e["pid"], e["tid"])].append((e["ts"], e["dur"], e.get("name"), e.get("cat")))
            if e.get("cat") == "moved":
                markers += 1
                if e["dur"] != 0:
                    errors.append("event %d: moved marker with a duration" % i)
            elif e.get("cat") != "state" and isinstance(e.get("args"), dict) and "eventAddr" in e["args"]:
                drawn[e["args"]["eventAddr"]] += 1
        elif ph in ("s", "f"):
            flows[e.get("id")].append(e)
        elif ph == "i":
            instants += 1
            if e.get("s") not in ("t", "p", "g"):
                errors.append("event %d: instant scope %r" % (i, e.get("s")))
        elif ph in ("b", "e"):
            asyncs[(e.get("cat"), e.get("id"))].append(e)
            if ph == "b" and isinstance(e.get("args"), dict) and "eventAddr" in e["args"]:
                drawn[e["args"]["eventAddr"]] += 1
        elif ph == "C":
            counters += 1
            a = e.get("args")
            if not isinstance(e.get("name"), str) or not isinstance(a, dict) or not a or \
                    not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in a.values()):
                errors.append("event %d: counter without numeric args: %r" % (i, e))
        else:
            errors.append("event %d: unexpected ph %r" % (i, ph))

    for (pid, tid), lst in slices.items():
        if pid not in pnames:
            errors.append("pid %d has slices but no process_name" % pid)
        if (pid, tid) not in tnames:
            errors.append("track %d/%d has slices but no thread_name" % (pid, tid))
        # Proper nesting: sort by start, longer first; a slice starting inside
        # the one on top of the stack must end inside it too.
        lst.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for ts, dur, name, cat in lst:
            end = ts + dur
            while stack and ts >= stack[-1][1] - EPS:
                stack.pop()
            if stack and end > stack[-1][1] + EPS:
                errors.append("track %d/%d (%s): slice %s [%.3f, %.3f] overlaps %s ending %.3f" %
                              (pid, tid, tnames.get((pid, tid)), name, ts, end, stack[-1][2], stack[-1][1]))
            stack.append((ts, end, name))

    def inside(e):
        for ts, dur, _, _ in slices.get((e["pid"], e["tid"]), ()):
            if ts - EPS <= e["ts"] <= ts + dur + EPS:
                return True
        return False

    def begin_end(groups, begin, end, what):
        """(key, begin event, end event) of each group made of exactly one event of phase begin and
        one of phase end; any other group is an error."""
        for key, pair in groups.items():
            phs = sorted(x["ph"] for x in pair)
            if phs != sorted([begin, end]):
                errors.append("%s %r has %r" % (what, key, phs))
                continue
            yield key, next(x for x in pair if x["ph"] == begin), next(x for x in pair if x["ph"] == end)

    for fid, s, f in begin_end(flows, "s", "f", "flow"):
        if f.get("bp") != "e":
            errors.append("flow %r: f without bp=e" % fid)
        if s["ts"] > f["ts"] + EPS:
            errors.append("flow %r goes back in time" % fid)
        if not inside(s) or not inside(f):
            errors.append("flow %r end not inside a slice of its track" % fid)
        if s.get("cat") != f.get("cat") or s.get("name") != f.get("name"):
            errors.append("flow %r: s/f name or cat differ" % fid)

    for key, b, e in begin_end(asyncs, "b", "e", "async slice"):
        if e["ts"] + EPS < b["ts"] or b.get("name") != e.get("name") or b["pid"] != e["pid"]:
            errors.append("async slice %r: end before begin or names/pids differ" % (key,))
        if b["pid"] not in pnames:
            errors.append("async slice %r: pid %d has no process_name" % (key, b["pid"]))
    if args.jsonl:
        want = set()
        with open(args.jsonl) as fh:
            for line in fh:
                rec = json.loads(line)
                if rec.get("recordType") == "event":
                    want.add(rec["eventAddr"])
        missing = [a for a in want if drawn[a] == 0]
        twice = [a for a, n in drawn.items() if n > 1]
        extra = [a for a in drawn if a not in want]
        if missing or twice or extra:
            errors.append("events drawn: %d missing (e.g. %s), %d drawn twice, %d not in the JSONL" %
                          (len(missing), missing[:2], len(twice), len(extra)))
    if args.moved >= 0 and markers != args.moved:
        errors.append("%d moved-event markers, want %d" % (markers, args.moved))
    if args.nasync >= 0 and len(asyncs) != args.nasync:
        errors.append("%d async slices, want %d" % (len(asyncs), args.nasync))
    ranks = [n for n in pnames.values() if n.startswith("rank ")]
    if args.ranks and len(ranks) != args.ranks:
        errors.append("%d rank tracks, want %d: %r" % (len(ranks), args.ranks, ranks))
    if len(flows) < args.min_flows:
        errors.append("%d flows, want at least %d" % (len(flows), args.min_flows))
    lane_cats = {"ProxyOp", "ProxyStep", "KernelCh", "NetPlugin"}
    for (pid, tid), lst in slices.items():
        if any(c in lane_cats for _, _, _, c in lst) and "ch " not in tnames.get((pid, tid), "") \
                and "channel ?" not in tnames.get((pid, tid), ""):
            errors.append("proxy/kernel slices on track %r, not a channel track" % tnames.get((pid, tid)))
    if not slices:
        errors.append("no slices")
    for e in errors[:50]:
        print(e)
    nslices = sum(len(v) for v in slices.values())
    print("%s: %d slices on %d tracks, %d processes (%d ranks), %d flows, %d instants, %d counter samples, "
          "%d moved, %d async: %s" %
          (args.file, nslices, len(slices), len(pnames), len(ranks), len(flows), instants, counters, markers,
           len(asyncs),
           "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
