# SPDX-License-Identifier: Apache-2.0
"""Matching a ncclscope export to the simulator's truth (stdlib only).

Used by tests/e2e/check_real_nccl.py and bench/real_nccl.py."""
import collections
import json


def load(truth_path, jsonl_path):
    """(truth records by kind, exported JSON Lines records)."""
    truth = collections.defaultdict(list)
    with open(truth_path) as f:
        for line in f:
            o = json.loads(line)
            truth[o["kind"]].append(o)
    with open(jsonl_path) as f:
        recs = [json.loads(line) for line in f]
    return truth, recs


def match_starts(truth, evs):
    """[(exported event, truth start)]: per (pid, tid), the k-th exported start is
    the truth's k-th start that got a handle (the plugin records every start it
    accepted, in call order)."""
    tstarts = collections.defaultdict(list)
    for t in truth["start"]:
        if not t["handle_null"]:
            tstarts[(t["pid"], t["tid"])].append(t)
    estarts = collections.defaultdict(list)
    for e in evs:
        estarts[(e["start"]["pid"], e["start"]["tid"])].append(e)
    pairs = []
    for k, es in estarts.items():
        es.sort(key=lambda e: e["start"]["ts"])
        pairs.extend(zip(es, tstarts.get(k, [])))
    return pairs


def parents(truth, evs):
    """Exported parents against the truth's parent instances: ok, lost (none
    exported), wrong (another event)."""
    pairs = match_starts(truth, evs)
    addr_of = {(t["pid"], t["serial"]): e["eventAddr"] for e, t in pairs}
    lost = wrong = ok = 0
    for e, t in pairs:
        if t["parent"] is None or t.get("pxn"):
            continue
        want = addr_of.get((t["pid"], t["parent"]))
        if want is None:
            continue  # the parent itself was not recorded
        got = e.get("parentObj")
        if got is None:
            lost += 1
        elif got != want:
            wrong += 1
        else:
            ok += 1
    return {"parent_ok": ok, "parent_lost": lost, "parent_wrong": wrong}
