#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ncclscope export` and `ncclscope report` agree on the events, python3 stdlib only.

usage: check_agreement.py EXPORT.jsonl SUMMARY.json [--min-events N]

From the JSONL export, per event type: events, never stopped
("incomplete"), parents that are event ids, raw PXN parents, parents the
plugin lost, PXN events, and the hierarchy digest (the sum over events
with a parent id of mix(id ^ mix(parent)) mod 2^64, mix being the id map's
64-bit finalizer, src/util/idmap.c). The report's "events" section holds
the same numbers as its assembler counted them; every one must be equal.
Exits 1 on any difference (both sides printed)."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import pop_option  # noqa: E402

M64 = (1 << 64) - 1
ADDR_MIN_LEN = 2 + 4 + 16  # "0x" + file index (4+ hex digits) + 16 hex digits of the id


def mix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    k ^= k >> 33
    return k


def from_export(path):
    per = {}
    with open(path) as fh:
        for line in fh:
            rec = json.loads(line)
            if rec.get("recordType") != "event":
                continue
            t = per.setdefault(rec["type"], {"events": 0, "neverStopped": 0, "withParent": 0, "rawParent": 0,
                                              "parentLost": 0, "pxn": 0, "hierarchyDigest": 0})
            t["events"] += 1
            t["neverStopped"] += 1 if rec.get("incomplete") else 0
            t["parentLost"] += 1 if rec.get("parentLost") else 0
            t["pxn"] += 1 if rec.get("isPxn") else 0
            parent = rec.get("parentObj")
            if parent is None:
                continue
            if len(parent) < ADDR_MIN_LEN:  # a raw foreign pointer, not an eventAddr
                t["rawParent"] += 1
                continue
            t["withParent"] += 1
            child = int(rec["eventAddr"], 16) & M64
            t["hierarchyDigest"] = (t["hierarchyDigest"] + mix(child ^ mix(int(parent, 16) & M64))) & M64
    return per


def from_report(path):
    with open(path) as fh:
        events = json.load(fh)["events"]
    per = {}
    for e in events:
        d = dict(e)
        name = d.pop("type")
        d["hierarchyDigest"] = int(d["hierarchyDigest"], 16)
        per[name] = d
    return per


def main():
    args = sys.argv[1:]
    min_events = pop_option(args, "--min-events", int, 1)
    exp, rep = from_export(args[0]), from_report(args[1])
    errors = []
    for name in sorted(set(exp) | set(rep)):
        a, b = exp.get(name, {}), rep.get(name, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key, 0) != b.get(key, 0):
                errors.append("%s %s: export %s, report %s" % (name, key, a.get(key, 0), b.get(key, 0)))
    total = sum(t["events"] for t in exp.values())
    if total < min_events:
        errors.append("only %d events exported, want at least %d" % (total, min_events))
    for e in errors:
        print(e)
    never = sum(t["neverStopped"] for t in exp.values())
    print("agreement: %d events of %d types, %d never stopped: %s" % (total, len(exp), never,
                                                                     "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
