#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ncclscope report`'s GPU time by kernel phase (NCCL 2.31+ KernelPhase),
against the simulator's truth.

usage: check_phases.py NCCLSCOPE SIM PLUGIN WORKDIR [--seeds N]

`--nccl 2.31`, two processes of two ranks, real time, seeds 1..N:
- straggler: the last rank starts every collective 100 ms late (far beyond
  what a loaded machine makes its ranks wait for each other);
- waiter: every rank but one (the truth's `waiter` line) does.
summary.json's "kernelPhases" must hold, per rank and phase, exactly the
GPU time of the truth's `phase` records (pTimer stop - start, summed); the
ranks it names (waitsForPeers, waitedFor) must be those report_phases.c's
rules name from the truth's phases, each in a verdict within summary.txt's
first 15 lines; and in at least one seed per scenario the rank named must
be the scenario's (the straggler as waited for, the waiter as waiting: on
a loaded machine the simulated ranks also wait milliseconds for each
other, which the phases show as they are); `report` exits 0 (neither is a
hang). Exits 1 with the first problem."""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys

PHASES = ("initial_sync", "compute", "final_sync")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def one(a, scenario, seed):
    work = os.path.join(a.workdir, "%s-%d" % (scenario, seed))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    dump, truth = os.path.join(work, "dump"), os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1")
    sim = subprocess.run([a.sim, "--plugin", a.plugin, "--nccl", "2.31", "--scenario", scenario, "--seed", str(seed),
                          "--straggler-us", "100000", "--procs", "2", "--ranks-per-proc", "2", "--truth", truth],
                         env=env, capture_output=True, text=True)
    if sim.returncode != 0:
        fail("simulator %s seed %d: exit %d\n%s" % (scenario, seed, sim.returncode, sim.stderr[-2000:]))
    want = collections.defaultdict(lambda: [0, 0, 0])
    named = None
    with open(truth) as f:
        for line in f:
            o = json.loads(line)
            if o["kind"] == "phase":
                want[o["rank"]][o["phase"]] += o["ptimer_stop"] - o["ptimer_start"]
            elif o["kind"] == scenario:
                named = o["rank"]
    rep = subprocess.run([a.ncclscope, "report", dump, "-q"], capture_output=True, text=True)
    what = "%s seed %d" % (scenario, seed)
    if rep.returncode != 0:
        fail("%s: report exited %d, want 0\n%s" % (what, rep.returncode, rep.stderr))
    with open(os.path.join(dump, "summary.json")) as f:
        kp = json.load(f).get("kernelPhases", [])
    if len(kp) != 1:
        fail("%s: %d communicators with phases, want 1" % (what, len(kp)))
    got = {r["rank"]: [r[p + "Ns"] for p in PHASES] for r in kp[0]["ranks"]}
    if got != dict(want):
        fail("%s: GPU time per rank and phase %s, the truth's %s" % (what, got, dict(want)))
    shares = {r: v[0] / max(1, sum(v)) for r, v in want.items()}
    waits, waited = verdicts(want)
    if kp[0].get("waitsForPeers") != waits or kp[0].get("waitedFor") != waited:
        fail("%s: waitsForPeers %s, waitedFor %s; the truth's phases say %s, %s (shares %s)" %
             (what, kp[0].get("waitsForPeers"), kp[0].get("waitedFor"), waits, waited,
              {r: round(v, 2) for r, v in sorted(shares.items())}))
    found = waited if scenario == "straggler" else waits
    with open(os.path.join(dump, "summary.txt")) as f:
        head = "".join(f.readlines()[:15])
    verb = "is waited for" if scenario == "straggler" else "waits for its peers"
    if found is not None and ("# verdict: rank %d of communicator" % found not in head or verb not in head):
        fail("%s: no verdict naming rank %d (%s) in the first 15 lines:\n%s" % (what, found, verb, head))
    return named, found, round(100 * shares[named])


def verdicts(ns):
    """tools/report/report_phases.c's rules on the truth's GPU time per rank and phase: (the rank that waits for its
    peers, the rank they wait for), each None when no rank is named."""
    share = {r: v[0] / max(1, sum(v)) for r, v in ns.items()}
    order = sorted(share.values())
    n = len(order)
    med = order[n // 2] if n % 2 else (order[n // 2 - 1] + order[n // 2]) / 2
    tot = sorted(sum(v) for v in ns.values())
    med_ns = tot[n // 2] if n % 2 else (tot[n // 2 - 1] + tot[n // 2]) / 2
    most = max(share, key=lambda r: (share[r], -r))
    least = min(share, key=lambda r: (share[r], r))
    waits = most if (order[-1] >= 0.5 and order[-1] - med >= 0.2 and order[-1] - order[-2] >= 0.1 and
                     sum(ns[most]) >= med_ns) else None
    waited = least if (med >= 0.25 and med - order[0] >= 0.2 and order[1] - order[0] >= 0.1) else None
    return waits, waited


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ncclscope")
    p.add_argument("sim")
    p.add_argument("plugin")
    p.add_argument("workdir")
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    for scenario in ("straggler", "waiter"):
        got = [one(a, scenario, seed) for seed in range(1, a.seeds + 1)]
        print("%s: %d seeds, (the scenario's rank, the rank named, its initial_sync share %%): %s" %
              (scenario, a.seeds, got))
        # what the truth's phases show is named; and at least one seed shows the scenario's rank as built
        if not any(named == found for named, found, _ in got):
            fail("%s: no seed's phases name the scenario's rank: %s" % (scenario, got))
    print("ok")


main()
