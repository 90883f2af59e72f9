#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ncclscope report` names mismatched collectives, against the simulator's truth.

usage: check_mismatch.py NCCLSCOPE SIM PLUGIN WORKDIR [--seeds N]

For each scenario mismatch_func, mismatch_count, mismatch_dtype and skip and
seeds 1..N (2 in a sanitizer's build; two processes of two ranks, --fast; the scenarios' own hang
timeouts: 3 s in skip, which hangs, so a loaded machine gives up nothing
early): the simulator's `mismatch`
truth line names the odd rank, what it posted and what the others posted.
`report` must exit 3 (a hang or a mismatch found); summary.json's
"mismatches" must hold exactly that rank, of the kind the scenario makes
("call", or "skipped" for skip), with the function, seq, count and datatype
each side posted; summary.txt must name the rank in a verdict within its
first 15 lines (skip: also the hang it causes, the odd rank never posting
the others' last collective).

Then a healthy run (exit 0, no INCOMPLETE verdict, "communicatorsIncomplete" empty)
whose second process's files are deleted: `report` still exits 0 but names,
per communicator, the ranks the truth's "comm" records put in that process
(an INCOMPLETE verdict within the first 15 lines, and the JSON list).
Exits 1 with the first problem."""
import argparse
import json
import os
import shutil
import subprocess
import sys

KIND = {"mismatch_func": "call", "mismatch_count": "call", "mismatch_dtype": "call", "skip": "skipped"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def truth_line(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f if '"kind":"mismatch"' in l]
    if len(lines) != 1:
        fail("%s: %d mismatch lines in the truth, want 1" % (path, len(lines)))
    return lines[0]


def same_call(got, want, what):
    for k, g in (("func", "func"), ("seq", "seq"), ("count", "count"), ("dtype", "datatype")):
        if got.get(g) != want[k]:
            fail("%s: %s is %r, the truth's %r (report %r, truth %r)" % (what, g, got.get(g), want[k], got, want))


def one(a, scenario, seed):
    work = os.path.join(a.workdir, "%s-%d" % (scenario, seed))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    dump, truth = os.path.join(work, "dump"), os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1")
    sim = subprocess.run([a.sim, "--plugin", a.plugin, "--fast", "--scenario", scenario, "--seed", str(seed),
                          "--procs", "2", "--ranks-per-proc", "2", "--truth", truth],
                         env=env, capture_output=True, text=True)
    if sim.returncode != 0:
        fail("simulator %s seed %d: exit %d\n%s" % (scenario, seed, sim.returncode, sim.stderr[-2000:]))
    t = truth_line(truth)
    rep = subprocess.run([a.ncclscope, "report", dump, "-q"], capture_output=True, text=True)
    if rep.returncode != 3:
        fail("%s seed %d: report exited %d, want 3 (a mismatch found)\n%s" % (scenario, seed, rep.returncode,
                                                                            rep.stderr))
    with open(os.path.join(dump, "summary.json")) as f:
        mm = json.load(f)["mismatches"]
    what = "%s seed %d" % (scenario, seed)
    if len(mm) != 1 or len(mm[0]["ranks"]) != 1:
        fail("%s: want one communicator with one odd rank, got %s" % (what, json.dumps(mm)))
    c, r = mm[0], mm[0]["ranks"][0]
    if c["commId"] != t["comm"] or r["rank"] != t["rank"] or r["kind"] != KIND[scenario]:
        fail("%s: report names %s rank %d (%s), the truth %s rank %d (%s)" %
             (what, c["commId"], r["rank"], r["kind"], t["comm"], t["rank"], KIND[scenario]))
    same_call(r["othersPosted"], t["expected"], what + " othersPosted")
    if scenario != "skip":
        same_call(r["posted"], t["posted"], what + " posted")
    with open(os.path.join(dump, "summary.txt")) as f:
        head = f.readlines()[:15]
    verdicts = "".join(head)
    if "# verdict: MISMATCH in communicator %s" % t["comm"] not in verdicts or \
            "rank %d " % t["rank"] not in verdicts:
        fail("%s: the first 15 lines of summary.txt do not name rank %d's mismatch:\n%s" % (what, t["rank"], verdicts))
    if scenario == "skip" and "never posted by: rank %d;" % t["rank"] not in verdicts:
        fail("%s: no hang verdict naming rank %d in the first 15 lines:\n%s" % (what, t["rank"], verdicts))
    return t["rank"]


def ranges(ranks):
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append("%d" % ranks[i] if i == j else "%d-%d" % (ranks[i], ranks[j]))
        i = j + 1
    return ",".join(out)


def incomplete(a):
    work = os.path.join(a.workdir, "incomplete")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    dump, truth = os.path.join(work, "dump"), os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1")
    sim = subprocess.run([a.sim, "--plugin", a.plugin, "--fast", "--procs", "2", "--ranks-per-proc", "2",
                          "--truth", truth], env=env, capture_output=True, text=True)
    if sim.returncode != 0:
        fail("simulator (healthy): exit %d\n%s" % (sim.returncode, sim.stderr[-2000:]))
    with open(truth) as f:
        comms = [json.loads(l) for l in f if '"kind":"comm"' in l]
    pids = sorted({c["pid"] for c in comms})
    if len(pids) != 2:
        fail("want 2 processes in the truth, got %s" % pids)

    def report():
        rep = subprocess.run([a.ncclscope, "report", dump, "-q"], capture_output=True, text=True)
        if rep.returncode != 0:
            fail("report exited %d, want 0 (no hang, no mismatch)\n%s" % (rep.returncode, rep.stderr))
        with open(os.path.join(dump, "summary.json")) as f:
            got = json.load(f)["communicatorsIncomplete"]
        with open(os.path.join(dump, "summary.txt")) as f:
            return got, "".join(f.readlines()[:15])

    got, head = report()
    if got or "INCOMPLETE" in head:
        fail("healthy run: a verdict or an incomplete communicator: %s\n%s" % (json.dumps(got), head))
    gone = pids[1]
    for name in os.listdir(dump):
        if "-%d." % gone in name:
            os.remove(os.path.join(dump, name))
    want = {}
    for c in comms:
        want.setdefault(c["comm"], {"nranks": c["nranks"], "gone": []})
        if c["pid"] == gone:
            want[c["comm"]]["gone"].append(c["rank"])
    got, head = report()
    byid = {c["commId"]: c for c in got}
    if set(byid) != set(want):
        fail("incomplete communicators %s, the truth %s" % (sorted(byid), sorted(want)))
    for comm, w in want.items():
        ranks = sorted(w["gone"])
        if byid[comm]["ranksWithoutRecord"] != ranks or byid[comm]["nranks"] != w["nranks"]:
            fail("%s: report %s, the truth ranks %s of %d" % (comm, json.dumps(byid[comm]), ranks, w["nranks"]))
        line = "%s %s of %d left no trace or flight record" % ("ranks" if len(ranks) > 1 else "rank",
                                                              ranges(ranks), w["nranks"])
        if not any(l.startswith("# verdict: INCOMPLETE communicator %s" % comm) and line in l
                   for l in head.splitlines()):
            fail("%s: no verdict '%s' in the first 15 lines:\n%s" % (comm, line, head))
    print("incomplete: process %d's files deleted, its ranks named in %d communicators" % (gone, len(want)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ncclscope")
    p.add_argument("sim")
    p.add_argument("plugin")
    p.add_argument("workdir")
    p.add_argument("--seeds", type=int, default=5)
    a = p.parse_args()
    ldd = subprocess.run(["ldd", a.ncclscope], capture_output=True, text=True).stdout
    if ("libasan" in ldd or "libtsan" in ldd) and a.seeds > 2:
        a.seeds = 2  # a sanitizer's build: the same paths, fewer seeds (each `skip` run waits 3 s for its hang)
    for scenario in KIND:
        ranks = [one(a, scenario, seed) for seed in range(1, a.seeds + 1)]
        print("%s: %d seeds, odd rank named each time (ranks %s)" % (scenario, a.seeds, ranks))
    incomplete(a)
    print("ok")


main()
