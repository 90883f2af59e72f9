#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope end-to-end: `ncclscope report` names a hang from the traces
alone, from the flight records alone, and from a mix of both.

usage: check_hangs.py CHECK WORKDIR [SEEDS]
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries)

For each seed (a comma-separated list, or N: seeds 1..N) the simulator's
`hang` scenario runs 8 ranks in 2 processes: one rank, chosen from the seed,
never posts AllReduce #k (k from the seed too); the truth's `hang` line
names it. `report` must then name exactly one hang: the truth's
communicator, function and seq, with the truth's rank as the only rank that
never posted it.

  traces      the watchdog off (NCCLSCOPE_HANG_TIMEOUT_SEC=0): no flight
              record at all. The other ranks give the collective up and every
              process finalizes, so each trace is complete (an END block):
              the hang shows as a collective one rank never posted, nor
              anything after it. seenStuck is false (nothing saw it stuck).
  flightrecs  the watchdog on (1 s, well before the others give up after 8 s):
              the traces are removed, the flight records stay. seenStuck is
              true, and the ranks of the truth other than the hung one are
              all stuck in it.
  flightrecs_bare
              the same with the analysis off (NCCLSCOPE_ANALYSIS=0): the
              flight recorder alone follows the writer's events.
  mix         the same run; the trace of the process with the hung rank is
              removed, and the other process's flight record: the hung rank
              is known from a flight record only, the other process's ranks
              from their trace only.

Exit 0 pass, 1 fail. Stdlib only.
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import Fail, check, outcome, fresh_dump  # noqa: E402

RANKS_PER_PROC = 4
WATCHDOG_SEC = 1.0  # NCCLSCOPE_HANG_TIMEOUT_SEC when the watchdog is on
GIVE_UP_MS = {"traces": 6000, "flightrecs": 8000, "flightrecs_bare": 8000, "mix": 8000}  # the other ranks give up after this (a loaded machine starts processes late)


def simulate(work, check_name, seed):
    """The `hang` scenario; returns (its truth's hang line, dump dir, sim log)."""
    dump = fresh_dump(work)
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump,
               NCCLSCOPE_HANG_TIMEOUT_SEC="0" if check_name == "traces" else str(WATCHDOG_SEC))
    if check_name == "flightrecs_bare":
        env["NCCLSCOPE_ANALYSIS"] = "0"
    cmd = [os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--truth", truth_path, "--nccl", "ideal",
           "--procs", "2", "--ranks-per-proc", str(RANKS_PER_PROC), "--nodes", "2", "--scenario", "hang",
           "--seed", str(seed), "--hang-timeout-ms", str(GIVE_UP_MS[check_name])]
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = r.stdout.decode(errors="replace")
    with open(os.path.join(work, "sim.log"), "w") as f:
        f.write(out)
    check(r.returncode == 0, "%s exited %d:\n%s" % (" ".join(cmd), r.returncode, out[-2000:]))
    with open(truth_path) as f:
        hangs = [o for o in map(json.loads, f) if o["kind"] == "hang"]
    check(len(hangs) == 1, "seed %d: the truth has %d hang lines" % (seed, len(hangs)))
    return hangs[0], dump


def flightrecs(dump):
    """Per flight record: (path, its pid, the ranks it lists)."""
    out = []
    for path in sorted(glob.glob(os.path.join(dump, "flightrec-*.json"))):
        with open(path) as f:
            fr = json.load(f)
        out.append((path, fr["pid"], {c["rank"] for c in fr["communicators"]}))
    return out


def trace_of_pid(dump, pid):
    paths = [p for p in glob.glob(os.path.join(dump, "*.nstrace")) if p.endswith("-%d.nstrace" % pid)]
    check(len(paths) == 1, "no single trace of pid %d in %s: %s" % (pid, dump, os.listdir(dump)))
    return paths[0]


def report(work, dump):
    r = subprocess.run([os.environ["NCCLSCOPE"], "report", dump, "-q"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    with open(os.path.join(work, "report.log"), "wb") as f:
        f.write(r.stdout)
    check(r.returncode == 3, "report exited %d, want 3 (a hang found):\n%s" %
          (r.returncode, r.stdout.decode(errors="replace")[-2000:]))
    with open(os.path.join(dump, "summary.json")) as f:
        return json.load(f)


def one(work, check_name, seed):
    want, dump = simulate(work, check_name, seed)
    frs = flightrecs(dump)
    traces = glob.glob(os.path.join(dump, "*.nstrace"))
    check(len(traces) == 2, "seed %d: want 2 traces, have %s" % (seed, os.listdir(dump)))
    if check_name == "traces":
        check(not frs, "seed %d: the watchdog is off, yet flight records: %s" % (seed, [p for p, _, _ in frs]))
    else:
        # both processes have ranks stuck in the collective: each writes a flight record listing its ranks
        check(len(frs) == 2, "seed %d: want a flight record per process, have %s" % (seed, [p for p, _, _ in frs]))
        hung = [fr for fr in frs if want["rank"] in fr[2]]
        check(len(hung) == 1, "seed %d: no single flight record lists rank %d: %s" % (seed, want["rank"], frs))
        if check_name.startswith("flightrecs"):
            for t in traces:
                os.unlink(t)
        else:
            os.unlink(trace_of_pid(dump, hung[0][1]))
            for path, _, _ in frs:
                if path != hung[0][0]:
                    os.unlink(path)
    summary = report(work, dump)
    hangs = summary["hangs"]
    got = [(h["commId"], h["func"], h["seq"], h["neverPosted"], h["seenStuck"]) for h in hangs]
    truth = "%s %s seq %d, rank %d never posted it" % (want["comm"], want["func"], want["seq"], want["rank"])
    check(len(hangs) == 1, "seed %d: truth: %s; report has %d hangs: %s" % (seed, truth, len(hangs), got))
    h = hangs[0]
    check(int(h["commId"], 16) == int(want["comm"], 16) and h["func"] == want["func"] and h["seq"] == want["seq"]
          and h["neverPosted"] == [want["rank"]], "seed %d: truth: %s; report: %s" % (seed, truth, got))
    others = sorted(set(range(2 * RANKS_PER_PROC)) - {want["rank"]})
    if check_name == "traces":
        check(not h["seenStuck"], "seed %d: no flight record, yet seenStuck: %s" % (seed, got))
        # the others posted it and gave it up: their traces end it, so they count as finished
        check(h["finished"] == others, "seed %d: finished %s, want %s" % (seed, h["finished"], others))
    else:
        check(h["seenStuck"], "seed %d: flight records with its episodes, yet not seenStuck: %s" % (seed, got))
        check(sorted(h["stuck"] + h["finished"]) == others,
              "seed %d: stuck %s finished %s, want the others %s" % (seed, h["stuck"], h["finished"], others))
        check(h["stuck"], "seed %d: no rank stuck in it: %s" % (seed, h))
    print("seed %d: PASS %s (%d flight record(s) read)" % (seed, truth, len(frs) if check_name != "mix" else 1))


def run(check_name, work, seeds):
    failures = []
    for seed in seeds:
        try:
            one(os.path.join(work, "seed-%d" % seed), check_name, seed)
        except Fail as e:
            print("seed %d: FAIL %s" % (seed, e))
            failures.append(seed)
    print("%d of %d seeds pass" % (len(seeds) - len(failures), len(seeds)))
    check(not failures, "seeds failing: %s" % failures)


def parse_seeds(s):
    return [int(x) for x in s.split(",")] if "," in s else list(range(1, int(s) + 1))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in GIVE_UP_MS:
        print(__doc__)
        sys.exit(2)
    seeds = parse_seeds(sys.argv[3]) if len(sys.argv) > 3 else [1, 2, 3]
    sys.exit(outcome(run, sys.argv[1], sys.argv[2], seeds))
