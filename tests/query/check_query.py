#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The queries users copy from the docs, run by the real engine.

usage: check_query.py stragglers WORKDIR
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries)

  stragglers  ncclscope-sim's `straggler` scenario (8 ranks in 2 processes, one
              rank's kernels 20 ms late) with the ncclscope plugin; each trace
              exported into its own JSON Lines file, as docs/performance.md
              says to at scale; docs/queries/stragglers.sql run by DuckDB (its
              official Node API, tests/query/package.json): the top row is the
              truth's late rank of the truth's communicator, and its median
              lateness the truth's within the bound `ncclscope report` gives
              that rank's arrivals (its GPU clock fit's: the query converts
              kernel starts with it), 1 % and 50 us.

DuckDB's Node API missing (npm ci in tests/query not run): skipped (exit 77),
saying so; .ci/deps.sh installs it. Exit 0 pass, 1 fail. Stdlib only.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import Skip, check, fresh_dump, run_named  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
QUERY = os.path.join(HERE, "..", "..", "docs", "queries", "stragglers.sql")
STRAGGLER_US = 20000


def run(cmd, env=None, cwd=None, timeout=180):
    r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == 0, "%s exited %d:\n%s" % (" ".join(cmd), r.returncode, out[-2000:]))
    return out


def check_stragglers(work):
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        raise Skip("no node (Debian nodejs); .ci/deps.sh installs it")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "@duckdb", "node-api")):
        raise Skip("DuckDB's Node API is not installed: run `npm ci` in tests/query (.ci/deps.sh does)")
    dump = fresh_dump(work)
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump)
    run([os.environ["SIM"], "--plugin", os.environ["PLUGIN"], "--truth", truth_path, "--nccl", "ideal",
         "--procs", "2", "--ranks-per-proc", "4", "--scenario", "straggler", "--seed", "1", "--iters", "20",
         "--straggler-us", str(STRAGGLER_US)], env=env)
    with open(truth_path) as f:
        late = [o for o in map(json.loads, f) if o["kind"] == "straggler"][0]
    # one export per trace, as at scale: each file in a directory of its own
    export = os.path.join(work, "export")
    shutil.rmtree(export, ignore_errors=True)
    os.makedirs(export)
    traces = sorted(n for n in os.listdir(dump) if n.endswith(".nstrace"))
    check(len(traces) == 2, "want 2 traces, found %s" % traces)
    for name in traces:
        one = os.path.join(work, "one", name)
        shutil.rmtree(one, ignore_errors=True)
        os.makedirs(one)
        os.symlink(os.path.join(dump, name), os.path.join(one, name))
        run([os.environ["NCCLSCOPE"], "export", one, "-o", os.path.join(export, name[:-len(".nstrace")] + ".jsonl")])
    out = run([node, os.path.join(HERE, "run_sql.mjs"), os.path.abspath(QUERY)], cwd=work)
    lines = out.strip().splitlines()
    cols = json.loads(lines[0])
    rows = [dict(zip(cols, json.loads(line))) for line in lines[1:]]
    check(rows, "the query returned no row:\n%s" % out)
    top = rows[0]
    print("DuckDB: %s" % ", ".join("rank %s %.1f us" % (r["rank"], r["median_late_us"]) for r in rows[:4]))
    check(int(top["commId"]) == int(late["comm"], 16) and int(top["rank"]) == late["rank"],
          "top row %s; the truth's straggler: comm %s rank %d" % (top, late["comm"], late["rank"]))
    # its lateness: the query converts the kernel starts with each GPU's published fit, so the truth lies
    # within that fit's bound (the straggler's GPU starts every kernel late: a bound as wide as the delay;
    # `report` does better by placing that clock by the collectives' ends, which SQL over one file cannot)
    run([os.environ["NCCLSCOPE"], "report", dump, "-q"])
    with open(os.path.join(dump, "summary.json")) as f:
        summary = json.load(f)
    comm = [c for c in summary["lateness"] if int(c["commId"], 16) == int(late["comm"], 16)]
    check(comm, "report has no lateness for %s" % late["comm"])
    rep = [r for r in comm[0]["ranks"] if r["rank"] == late["rank"]][0]
    true_late = truth_lateness(truth_path, late["comm"], late["rank"])
    bound = rep["arrivalBoundUs"]
    print("truth: rank %d %.1f us; report %.1f us; the arrivals' bound +-%s us"
          % (late["rank"], true_late, rep["medianUs"], bound))
    check(bound is not None and abs(top["median_late_us"] - true_late) <= bound + 0.01 * abs(true_late) + 50,
          "DuckDB's median lateness %.1f us, the truth's %.1f us, bound +-%s us"
          % (top["median_late_us"], true_late, bound))


def truth_lateness(truth_path, comm, rank):
    """The truth's median over the collectives of (rank's kernel start - the collective's median), us."""
    by_seq = {}
    with open(truth_path) as f:
        for o in map(json.loads, f):
            if (o["kind"] == "coll" and o["comm"] == comm and not o.get("ce") and not o.get("aborted")
                    and o.get("peer", -1) < 0):  # collectives only, as the query and the report
                by_seq.setdefault((o["func"], o["seq"]), {})[o["rank"]] = o["t_start"]
    late = [(arr[rank] - statistics.median(arr.values())) / 1e3 for arr in by_seq.values() if rank in arr]
    return statistics.median(late)

if __name__ == "__main__":
    sys.exit(run_named({"stragglers": check_stragglers}, __doc__, sys.argv))
