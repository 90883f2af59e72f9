#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope end-to-end checks across simulated hosts.

usage: check_hosts.py CHECK WORKDIR [SEEDS]
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries), SIMCLOCK (the clock shim, for `drift`)

The simulator runs 8 ranks in 2 processes on 2 simulated hosts
(--host-ns: a UTS namespace per node; --host-offset-s: node 1's
CLOCK_MONOTONIC shifted by a time namespace), with the ncclscope plugin and
its watchdog; `ncclscope report` then reads the dump directory.

  hang        for each seed (a comma-separated list, or N: seeds 1..N): the
              `hang` scenario (one rank never posts AllReduce #k, both from the
              seed). A flight record is written within the hang timeout + 5 s
              of the stuck collective's start (its writer's own clock: the
              first episode's detectNs, when that tick wrote the file), and
              `report` names exactly one hang: the truth's communicator and
              seq, with the truth's rank as the only rank that never posted it.
  hang_traces the same run with the watchdog off (NCCLSCOPE_HANG_TIMEOUT_SEC=0):
              no flight record is written, and `report` names the hang from
              the traces alone: the truth's communicator, seq and rank.
  straggler   the `straggler` scenario with host clocks seconds apart: the
              truth's late rank is ranked first by lateness on aligned clocks
              and is the only straggler named; the report's clock offset of
              node 1's host is within 10 us of the truth's mono_offset_ns.
  drift       for each seed: the `default` scenario with node 1's CLOCK_MONOTONIC
              also running 25..50 ppm fast or slow (--host-drift-ppm: the clock
              shim of env SIMCLOCK LD_PRELOADed; CLOCK_REALTIME stays true):
              the report's offset of node 1's clock, at the middle and both
              ends of its anchors, within 10 us of the truth's.
  drift_realtime  the same with node 1's CLOCK_REALTIME drifting too (a host
              without NTP: --host-drift-realtime): its anchors cannot show the
              drift, the collectives' ends must (the ranks of a collective
              end together).
  default     the `default` scenario on the same two hosts: no straggler named
              (but one the truth shows late: a process the loaded machine starved),
              no hang, and the host offset within 10 us of the truth's.

Namespaces need root or unprivileged user namespaces, and time namespaces a
5.6+ kernel: when `ncclscope-sim --host-ns --host-offset-s` cannot make
them, the check is skipped (exit 77) and says why. Exit 0 pass, 1 fail.
Stdlib only.
"""
import glob
import json
import statistics
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import Fail, Skip, check, outcome, fresh_dump  # noqa: E402

HANG_TIMEOUT_SEC = 1.5  # the plugin's watchdog (NCCLSCOPE_HANG_TIMEOUT_SEC)
SIM_GIVE_UP_MS = 5000  # the other ranks give the collective up after this (the sim's --hang-timeout-ms)
HOST_OFFSET_S = 4  # node 1's CLOCK_MONOTONIC is 2..4 s off node 0's
SKEW_TOL_US = 10.0
LATE_TOL_FRAC, LATE_TOL_US = 0.02, 100.0  # the straggler's lateness may miss the truth's by 2 % + 100 us
TRULY_LATE_US = 100.0  # a rank the truth shows this late (median) may be named in `default` (a starved process)
DRIFT_PPM = 50  # node 1's clock runs 25..50 ppm fast or slow
STRAGGLER_US = 50000  # the late rank's delay: well above the launch jitter of a loaded 2-core machine


def simulate(work, args, env_extra=None):
    """Runs the sim on two simulated hosts, then `report`. Returns (truth by kind, summary, dump dir)."""
    dump = fresh_dump(work)
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_EVENT_MASK="all")
    env.update(env_extra or {})
    cmd = [os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--truth", truth_path, "--nccl", "ideal",
           "--procs", "2", "--ranks-per-proc", "4", "--nodes", "2", "--host-ns",
           "--host-offset-s", str(HOST_OFFSET_S)] + list(args)
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = r.stdout.decode(errors="replace")
    with open(os.path.join(work, "sim.log"), "w") as f:
        f.write(out)
    if r.returncode != 0:
        if any(w in out for w in ("cannot create simulated hosts", "unshare(CLONE_NEWTIME)", "cannot set the offsets")):
            raise Skip("simulated hosts need namespaces this machine does not give: " + out.strip()[-400:])
        raise Fail("%s exited %d:\n%s" % (" ".join(cmd), r.returncode, out[-2000:]))
    truth = {}
    with open(truth_path) as f:
        for line in f:
            o = json.loads(line)
            truth.setdefault(o["kind"], []).append(o)
    hosts = truth.get("host", [])
    if len({h["hostname"] for h in hosts}) < 2 or not any(h["mono_offset_ns"] for h in hosts):
        raise Skip("the simulator ran without separate hosts or clocks (no UTS/time namespace): %s" % hosts)
    r = subprocess.run([os.environ["NCCLSCOPE"], "report", dump, "-q", "--links", "100"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    with open(os.path.join(work, "report.log"), "wb") as f:
        f.write(r.stdout)
    want = 3 if "hang" in truth else 0  # 3: a hang found
    check(r.returncode == want, "report exited %d, want %d:\n%s" % (r.returncode, want,
                                                                   r.stdout.decode(errors="replace")[-2000:]))
    with open(os.path.join(dump, "summary.json")) as f:
        summary = json.load(f)
    return truth, summary, dump


def model_to_local(host, m):
    """A simulated host's CLOCK_MONOTONIC at modelled time m (node 0's clock; sim/hosts.c)."""
    return m + host["mono_offset_ns"] + host.get("drift_ppm", 0.0) * 1e-6 * (m - host.get("drift_pivot_ns", 0))


def true_offset_at(host, ref, local_ns):
    """The truth's offset of host's CLOCK_MONOTONIC from ref's, when host's reads local_ns."""
    d = host.get("drift_ppm", 0.0) * 1e-6
    m = (local_ns - host["mono_offset_ns"] + d * host.get("drift_pivot_ns", 0)) / (1 + d)
    return local_ns - model_to_local(ref, m)


def host_offset_errors(truth, summary):
    """Per simulated host: the report's clock offset (its CLOCK_MONOTONIC minus the reference host's)
    minus the truth's, us."""
    true_off = {h["hostname"]: h["mono_offset_ns"] for h in truth["host"]}
    rep = {h["host"]: h for h in summary["hosts"]}
    check(set(rep) == set(true_off), "report's hosts %s, truth's %s" % (sorted(rep), sorted(true_off)))
    ref = [h for h in summary["hosts"] if h["reference"]][0]["host"]
    return {name: (rep[name]["clockOffsetNs"] - (true_off[name] - true_off[ref])) / 1e3 for name in rep}


def check_skew(truth, summary):
    errs = host_offset_errors(truth, summary)
    print("host clock offset, report - truth (us): %s" % ", ".join("%s %+.3f" % kv for kv in sorted(errs.items())))
    bad = {k: v for k, v in errs.items() if abs(v) > SKEW_TOL_US}
    check(not bad, "residual skew over %.0f us: %s" % (SKEW_TOL_US, bad))


def one_hang(work, seed):
    t0 = time.monotonic()
    truth, summary, dump = simulate(work, ["--scenario", "hang", "--seed", str(seed), "--hang-timeout-ms",
                                           str(SIM_GIVE_UP_MS)],
                                    {"NCCLSCOPE_HANG_TIMEOUT_SEC": str(HANG_TIMEOUT_SEC)})
    wall = time.monotonic() - t0
    want = truth["hang"][0]
    comm = int(want["comm"], 16)
    # the flight record: within the timeout + 5 s of the stuck collective's start, on its writer's clock
    frs = sorted(glob.glob(os.path.join(dump, "flightrec-*.json")))
    check(frs, "seed %d: no flight record in %s" % (seed, dump))
    delays = []
    for path in frs:
        with open(path) as f:
            fr = json.load(f)
        # an episode's detectNs: the watchdog tick that found it stuck and wrote this file (rewritten since)
        eps = [e for e in fr["episodes"]
               if int(e["commId"], 16) == comm and e["seq"] == want["seq"] and e["func"] == "AllReduce"]
        if eps:
            first = min(eps, key=lambda e: e["detectNs"])
            delays.append((first["detectNs"] - min(e["startNs"] for e in eps)) / 1e9)
    check(delays, "seed %d: no flight record has an episode for %s seq %d" % (seed, want["comm"], want["seq"]))
    check(min(delays) <= HANG_TIMEOUT_SEC + 5,
          "seed %d: the first flight record came %.2f s after the collective started (timeout %.1f s + 5 s)"
          % (seed, min(delays), HANG_TIMEOUT_SEC))
    hangs = summary["hangs"]
    got = [(h["commId"], h["func"], h["seq"], h["neverPosted"]) for h in hangs]
    check(len(hangs) == 1, "seed %d: want exactly one hang (%s %s seq %d, rank %d), report has %s"
          % (seed, want["comm"], want["func"], want["seq"], want["rank"], got))
    h = hangs[0]
    check(int(h["commId"], 16) == comm and h["func"] == want["func"] and h["seq"] == want["seq"]
          and h["neverPosted"] == [want["rank"]],
          "seed %d: truth: %s %s seq %d, rank %d never posted it; report: %s"
          % (seed, want["comm"], want["func"], want["seq"], want["rank"], got))
    print("seed %d: PASS rank %d comm %s seq %d, flight record %.2f s after the start (timeout %.1f s), wall %.1f s"
          % (seed, want["rank"], want["comm"], want["seq"], min(delays), HANG_TIMEOUT_SEC, wall))


def one_hang_traces(work, seed):
    """The hang with the watchdog off: the traces alone must name the rank that never posted."""
    truth, summary, dump = simulate(work, ["--scenario", "hang", "--seed", str(seed), "--hang-timeout-ms",
                                           str(SIM_GIVE_UP_MS)],
                                    {"NCCLSCOPE_HANG_TIMEOUT_SEC": "0"})
    want = truth["hang"][0]
    frs = glob.glob(os.path.join(dump, "flightrec-*.json"))
    check(not frs, "seed %d: the watchdog is off, yet flight records were written: %s" % (seed, frs))
    got = [(h["commId"], h["func"], h["seq"], h["neverPosted"], h["seenStuck"]) for h in summary["hangs"]]
    check(len(got) == 1 and int(got[0][0], 16) == int(want["comm"], 16) and got[0][1:4] == (
          want["func"], want["seq"], [want["rank"]]) and not got[0][4],
          "seed %d: truth: %s %s seq %d, rank %d never posted it; report (from traces only): %s"
          % (seed, want["comm"], want["func"], want["seq"], want["rank"], got))
    print("seed %d: PASS rank %d comm %s seq %d named from the traces alone" % (seed, want["rank"], want["comm"],
                                                                               want["seq"]))


def check_hang(work, seeds, one=one_hang):
    failures = []
    for seed in seeds:
        try:
            one(os.path.join(work, "seed-%d" % seed), seed)
        except Fail as e:
            print("seed %d: FAIL %s" % (seed, e))
            failures.append(seed)
    print("%d of %d seeds pass" % (len(seeds) - len(failures), len(seeds)))
    check(not failures, "seeds failing: %s" % failures)


def truth_lateness(truth, comm):
    """Per rank of comm: the median over its collectives of (its kernel start - the collective's median kernel
    start), us, from the truth's `coll` records (the modelled timeline: the host offsets are not in them).
    Collectives only, as the report: Send/Recv records (peer >= 0) are not."""
    by_seq = {}
    for o in truth.get("coll", []):
        if int(o["comm"], 16) == comm and not o.get("ce") and not o.get("aborted") and o.get("peer", -1) < 0:
            by_seq.setdefault((o["func"], o["seq"]), {})[o["rank"]] = o["t_start"]
    late = {}
    for arr in by_seq.values():
        if len(arr) < 2:
            continue
        mid = statistics.median(arr.values())
        for rank, t in arr.items():
            late.setdefault(rank, []).append((t - mid) / 1e3)
    return {rank: statistics.median(v) for rank, v in late.items()}


def lateness_of(summary, comm):
    for c in summary["lateness"]:
        if int(c["commId"], 16) == comm:
            return c
    return None


def check_straggler(work, seeds):
    seed = seeds[0]
    truth, summary, _ = simulate(work, ["--scenario", "straggler", "--seed", str(seed), "--iters", "40",
                                          "--straggler-us", str(STRAGGLER_US)])
    late = truth["straggler"][0]
    comm = int(late["comm"], 16)
    c = lateness_of(summary, comm)
    check(c, "no lateness for the straggler's communicator %s" % late["comm"])
    ranks = [r["rank"] for r in c["ranks"]]
    print("straggler: truth rank %d; report's order %s, outliers %s, first median %.1f us"
          % (late["rank"], ranks[:4], c["outliers"], c["ranks"][0]["medianUs"]))
    check(ranks[0] == late["rank"], "rank %d ranked first, truth's straggler is rank %d" % (ranks[0], late["rank"]))
    check(c["outliers"] == [late["rank"]], "stragglers named %s, truth %d" % (c["outliers"], late["rank"]))
    # its lateness: the truth's. Its GPU's kernels always start late, so its clock fit is as wide as the delay
    # (the launch calls bound nothing better); the report places that GPU's clock by the collectives' ends
    # (ranks finish together), within the fit's bound (which must hold the truth either way)
    truth_late = truth_lateness(truth, comm)
    check(late["rank"] in truth_late, "the truth has no collective of rank %d on %s that ran (aborted: %d of %d)"
          % (late["rank"], late["comm"], sum(1 for o in truth.get("coll", []) if o.get("aborted")),
             len(truth.get("coll", []))))
    true_late = truth_late[late["rank"]]
    first = c["ranks"][0]
    bound = first["arrivalBoundUs"]
    print("straggler: median lateness %.1f us +- %s (GPU clock moved by %s us on %s ops), truth %.1f us"
          % (first["medianUs"], bound, first.get("gpuClockRefinedUs"), first.get("gpuClockOpsMoved"), true_late))
    check(abs(first["medianUs"] - true_late) <= LATE_TOL_FRAC * abs(true_late) + LATE_TOL_US,
          "the straggler's lateness %.1f us misses the truth's %.1f us" % (first["medianUs"], true_late))
    check(bound is None or abs(first["medianUs"] - true_late) <= bound + LATE_TOL_US,
          "the truth's lateness %.1f us lies outside the straggler's arrival bound %.1f +- %s us"
          % (true_late, first["medianUs"], bound))
    check_skew(truth, summary)


def check_default(work, seeds):
    truth, summary, _ = simulate(work, ["--scenario", "default", "--seed", str(seeds[0]), "--iters", "4"])
    # No straggler is injected; one is named only where the truth shows that rank really late (a process the
    # loaded machine starved: its kernels did start late), never from noise of the measurement.
    named = [(c["commId"], c["outliers"]) for c in summary["lateness"] if c["outliers"]]
    false = []
    for comm, outliers in named:
        true_late = truth_lateness(truth, int(comm, 16))
        for rank in outliers:
            print("default: rank %d of %s named; the truth's median lateness %.1f us" % (rank, comm,
                                                                                           true_late.get(rank, 0)))
            if true_late.get(rank, 0) < TRULY_LATE_US:
                false.append((comm, rank, true_late.get(rank)))
    check(not false, "stragglers named in the default scenario that the truth does not show late: %s" % false)
    check(not summary["hangs"], "hangs in the default scenario: %s" % summary["hangs"])
    check_skew(truth, summary)


def one_drift(work, seed, realtime):
    if not os.environ.get("SIMCLOCK"):
        raise Skip("SIMCLOCK (the clock shim) is not set")
    truth, summary, _ = simulate(work, ["--scenario", "default", "--seed", str(seed), "--iters", "12",
                                        "--host-drift-ppm", str(DRIFT_PPM)]
                                 + (["--host-drift-realtime"] if realtime else []),
                                 {"LD_PRELOAD": os.environ["SIMCLOCK"], "NCCLSCOPE_FLUSH_MS": "200",
                                  # an ASan build: the shim comes before ASan's runtime in the library list
                                  "ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                                                         "verify_asan_link_order=0"]))})
    true_host = {h["hostname"]: h for h in truth["host"]}
    drifting = [h for h in truth["host"] if h["drift_ppm"]]
    check(drifting, "seed %d: no host clock drifts in the truth: %s" % (seed, truth["host"]))
    ref = true_host[[h for h in summary["hosts"] if h["reference"]][0]["host"]]
    for rep in summary["hosts"]:
        if rep["reference"]:
            continue
        t = true_host[rep["host"]]
        at, half = rep["clockOffsetAtNs"], rep["anchorSpanSec"] * 1e9 / 2
        errs = []
        for local in (at - half, at, at + half):
            said = rep["clockOffsetNs"] + rep["clockRatePpm"] * 1e-6 * (local - at)
            errs.append((said - true_offset_at(t, ref, local)) / 1e3)
        print("seed %d: %s drifts %.3f ppm%s (report: rate %.3f ppm, of which %+.3f from the collectives, "
              "%d anchors over %.2f s); offset error at the anchors' start, middle, end: %s us"
              % (seed, rep["host"], t["drift_ppm"], ", its realtime clock too" if realtime else "",
                 rep["clockRatePpm"], rep["refinedRatePpm"] if rep["refinementTaken"] else 0, rep["anchors"],
                 rep["anchorSpanSec"], ", ".join("%+.3f" % e for e in errs)))
        check(max(abs(e) for e in errs) <= SKEW_TOL_US,
              "seed %d: %s: offset off the truth by %s us (tolerance %.0f)" % (seed, rep["host"], errs, SKEW_TOL_US))


def check_drift(work, seeds):
    for seed in seeds:
        one_drift(os.path.join(work, "seed-%d" % seed), seed, False)


def check_drift_realtime(work, seeds):
    for seed in seeds:
        one_drift(os.path.join(work, "seed-%d" % seed), seed, True)


CHECKS = {"hang": check_hang, "hang_traces": lambda w, s: check_hang(w, s, one_hang_traces), "straggler": check_straggler, "default": check_default, "drift": check_drift,
          "drift_realtime": check_drift_realtime}


def parse_seeds(s):
    if "," in s:
        return [int(x) for x in s.split(",")]
    return list(range(1, int(s) + 1))


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in CHECKS:
        print(__doc__)
        return 2
    seeds = parse_seeds(sys.argv[3]) if len(sys.argv) == 4 else [1]
    return outcome(CHECKS[sys.argv[1]], sys.argv[2], seeds)


if __name__ == "__main__":
    sys.exit(main())
