#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope on real NCCL behaviour: the simulator's personalities against its truth.

usage: check_real_nccl.py CHECK WORKDIR [SEEDS]
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries)

  lifetimes  API events stopped 5 s before their Coll/P2p (a first, connecting
             collective on 2.28 nonblocking communicators) and KernelCh up to 5 s
             late (2.30): every exported parent is the truth's parent instance,
             none lost, none wrong
  leaks      2.30's leaks (copy-transport ProxyOps never stopped, receive steps
             started again, SendPeerWait repeated) with few open events held
             (NCCLSCOPE_SLAB_EVENTS): nothing is dropped, every leaked event is exported
             incomplete with its reason, every other event stops, and the folded
             SendPeerWait reports add up to the calls made
  exit       processes that exit with communicators alive: each trace ends
             (END says exit), has its counters and summary, and holds every
             event the truth started
  sigterm    the same for processes killed by SIGTERM (END says signal 15;
             the process still dies of SIGTERM)

Each check runs SEEDS seeds (default 3). Exit 0 pass, 1 fail. Stdlib only.
"""
import collections
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_match import load, match_starts, parents  # noqa: E402


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def simulate(work, args, env_extra=None, rc=0):
    """sim + export; returns (truth by kind, exported records, export stderr, dump dir). rc: the sim's
    expected exit status (-15: it ends by SIGTERM)."""
    dump = os.path.join(work, "dump")
    os.makedirs(dump, exist_ok=True)
    for name in os.listdir(dump):
        os.unlink(os.path.join(dump, name))
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_EVENT_MASK="all", NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1")
    env.update(env_extra or {})
    p = subprocess.run([os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--truth", truth_path] + args,
                       env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == rc, "ncclscope-sim %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr[-1500:]))
    out = os.path.join(work, "export.jsonl")
    e = subprocess.run([os.environ["NCCLSCOPE"], "export", dump, "--format", "jsonl", "-o", out],
                       capture_output=True, text=True, timeout=120)
    check(e.returncode == 0, "export exited %d: %s" % (e.returncode, e.stderr[-1500:]))
    truth, recs = load(truth_path, out)
    return truth, recs, e.stderr, dump


def events(recs):
    return [r for r in recs if r["recordType"] == "event"]


def process_counters(recs):
    """pid -> the process counters of its finalize record."""
    out = {}
    for r in recs:
        if r["recordType"] == "lifecycle" and r["func"] == "ProfilerFinalize" and "processCounters" in r["details"]:
            out[r["myPid"]] = r["details"]["processCounters"]
    return out


def check_lifetimes(work, seed):
    for nccl, extra in (("2.28", ["--connect-ms", "5000", "--nonblocking"]), ("2.30", ["--kch-lag-ms", "5000"])):
        truth, recs, _, _ = simulate(work, ["--nccl", nccl, "--seed", str(seed), "--iters", "1"] + extra)
        r = parents(truth, events(recs))
        print("  %s %s: %s" % (nccl, " ".join(extra), r))
        check(r["parent_ok"] > 500, "%s: too few parents compared (%d)" % (nccl, r["parent_ok"]))
        check(r["parent_lost"] == 0 and r["parent_wrong"] == 0,
              "%s %s: %d lost and %d wrong parents" % (nccl, " ".join(extra), r["parent_lost"], r["parent_wrong"]))


def check_leaks(work, seed):
    # 2048 open events held per communicator: the leaked events alone would fill that within the run
    truth, recs, _, _ = simulate(work, ["--nccl", "2.30", "--scenario", "leaks", "--seed", str(seed), "--iters", "1",
                                        "--ranks-per-proc", "4"], {"NCCLSCOPE_SLAB_EVENTS": "2048"})
    evs = events(recs)
    for pid, c in process_counters(recs).items():
        check(c.get("dropped", 0) == 0, "process %d dropped %d events (%s)" % (pid, c.get("dropped", 0), c))
    reasons = collections.Counter()
    leaked = copy_ops = 0
    for e, t in match_starts(truth, evs):
        want = None
        if t["type"] == "ProxyOp" and t.get("copy"):
            want, copy_ops = "neverStopped", copy_ops + 1
        elif t["type"] == "ProxyStep" and t.get("leaked"):
            want, leaked = "restarted", leaked + 1
        got = e.get("incompleteReason") if e.get("incomplete") else None
        reasons[got] += 1
        check(got == want, "%s %s (truth serial %d): exported %s, want %s" %
              (t["type"], e["eventAddr"], t["serial"], got or "stopped", want or "stopped"))
    print("  copy ProxyOps %d, restarted ProxySteps %d; exported %s" % (copy_ops, leaked, dict(reasons)))
    check(copy_ops > 100 and leaked > 100, "the scenario leaked too little to prove anything")
    # SendPeerWait (20): its lines, plus the repeats its "repeats" lines fold, = the calls the truth counts
    calls = sum(int(c["states"].get("20", 0)) for c in truth["counts"] if c["type"] == "ProxyStep")
    lines = repeats = 0
    for r in recs:
        if r["recordType"] == "state" and r["id"] == 20:
            if "repeats" in r:
                repeats += r["repeats"]
            else:
                lines += 1
    print("  SendPeerWait: %d calls; %d lines carry %d folded repeats" % (calls, lines, repeats))
    check(repeats > 0, "no SendPeerWait was folded")
    check(lines + repeats == calls, "SendPeerWait: %d lines + %d repeats != %d calls" % (lines, repeats, calls))


def check_end(work, seed, mode):
    truth, recs, err, dump = simulate(work, ["--nccl", "2.30", "--seed", str(seed), "--iters", "1", "--exit", mode,
                                             "--procs", "2"], rc=-15 if mode == "sigterm" else 0)
    traces = glob.glob(os.path.join(dump, "*.nstrace"))
    pids = {t["pid"] for t in truth["start"]}
    check(len(traces) == len(pids) and len(pids) >= 2, "%d traces for %d processes" % (len(traces), len(pids)))
    note = "exited without finalizing" if mode == "exit" else "ended by signal 15"
    check(err.count(note) == len(traces), "export notes %r %d times for %d traces:\n%s" %
          (note, err.count(note), len(traces), err))
    check("no end marker" not in err, "a trace has no end:\n" + err)
    counters = process_counters(recs)
    check(set(counters) == pids, "process counters for %s, processes %s" % (sorted(counters), sorted(pids)))
    for pid in pids:
        check(glob.glob(os.path.join(dump, "summary-*-%d.json" % pid)), "no summary for process %d" % pid)
    # every start the truth made (with a handle) is in the trace: nothing lost at the end. The trace
    # may hold a few more: the process writes its truth before it exits, and its proxy thread goes on
    made = collections.Counter((t["pid"], t["type"]) for t in truth["start"] if not t["handle_null"])
    got = collections.Counter((e["myPid"], e["type"][len("ncclProfile"):]) for e in events(recs))
    check(not (made - got), "events per (process, type) the truth started and the trace lacks: %s" % dict(made - got))
    check(sum((got - made).values()) <= 4 * len(pids), "events after the truth was written: %s" % dict(got - made))
    open_at_end = collections.Counter(e.get("incompleteReason") for e in events(recs) if e.get("incomplete"))
    print("  %d traces, %d events, incomplete: %s" % (len(traces), sum(got.values()), dict(open_at_end)))


CHECKS = {"lifetimes": check_lifetimes, "leaks": check_leaks,
          "exit": lambda w, s: check_end(w, s, "exit"), "sigterm": lambda w, s: check_end(w, s, "sigterm")}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in CHECKS:
        print(__doc__)
        return 2
    name, work = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.makedirs(work, exist_ok=True)
    try:
        for seed in range(1, seeds + 1):
            print("%s seed %d" % (name, seed))
            CHECKS[name](work, seed)
    except Fail as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
