#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a job pays per operation, per ncclscope detail level: the plugin's calls plus NCCL's own work.

    bench/detail_cost.py [--build DIR] [--reps N] [--iters K] [--nccl VER] [--emulate-detail]

For three workloads of `ncclscope-sim --bench-nccl` (an 8 KiB AllReduce on one node, the same on two
nodes, a Send/Recv pair on one node; sim/timing/bench_nccl.c) it prints one table per workload, a row per
configuration:
  none              no plugin
  empty 0xFFF       the empty plugin (NULL handles) with every event of the measurement the model is
                    calibrated with (an empty plugin returning NULL handles with mask 0xFFF against no
                    plugin, 1M iterations)
  empty <level>     the empty plugin with the mask of an ncclscope detail level (SIM_BASELINE_MASK)
  ncclscope <level> ncclscope with NCCLSCOPE_DETAIL=<level>
Columns, per operation and rank: plugin_ns, the time inside the plugin's calls (the simulator's timing
less one clock read per call; --reps runs, median); nccl_ns, NCCL's modelled work for the bits the mask
enabled (sim/personalities/nccl_cost.c, docs/simulator.md); their sum; and ratio, (no-plugin time + sum) / no-plugin
time, where the no-plugin time per iteration is the one measured on real GPUs for that workload
(26.40 us one-node AllReduce, 22.12 us two-node AllReduce, 26.66 us one-node Send/Recv).

Detail levels: the plugin logs "detail <level>" in its tracing INFO line when it knows
NCCLSCOPE_DETAIL; a plugin that does not (or --emulate-detail) gets the levels' masks through
NCCLSCOPE_EVENT_MASK instead: full 0x7F5F, ops 0x7F0F, and sampled as ops with full detail for
SAMPLED_FRACTION of the operations (weighted sum of the two runs). The empty plugin's "sampled" row is
that weighted sum too. Nothing here is a test: numbers are printed (docs/performance.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEVEL_MASKS = {"ops": 0x7F0F, "full": 0x7F5F}
SAMPLED_FRACTION = 0.03
WORKLOADS = [("coll-1node", "AllReduce 8 KiB, one node (no network)", 26.40),
             ("coll-net", "AllReduce 8 KiB, two nodes (network)", 22.12),
             ("p2p-1node", "Send/Recv 8 KiB, one node", 26.66)]


def sim_run(args, build, workload, plugin, env_extra, iters, nccl):
    env = dict(os.environ)
    for k in ("NCCLSCOPE_EVENT_MASK", "NCCLSCOPE_DETAIL", "SIM_BASELINE_MASK", "NCCL_PROFILER_PLUGIN"):
        env.pop(k, None)
    env.update(env_extra)
    dump = tempfile.mkdtemp(prefix="ncclscope-detail-")
    env.setdefault("NCCLSCOPE_DUMP_DIR", dump)
    env["NCCLSCOPE_NO_CUDA"] = "1"
    env["NCCL_DEBUG"] = "INFO"
    cmd = [os.path.join(build, "ncclscope-sim"), "--plugin", plugin, "--bench-nccl", workload,
           "--iters", str(iters), "--nccl", nccl]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    subprocess.run(["rm", "-rf", dump])
    line = next((l for l in p.stdout.splitlines() if l.startswith("BENCHNCCL ")), None)
    if p.returncode != 0 or not line:
        sys.exit(f"detail_cost: {' '.join(cmd)} failed ({p.returncode}): {p.stderr[-500:]}")
    return json.loads(line[len("BENCHNCCL "):]), p.stderr


def measure(a, workload, plugin, env_extra):
    runs = [sim_run(a, a.build, workload, plugin, env_extra, a.iters, a.nccl)[0] for _ in range(a.reps)]
    r = dict(runs[0])
    r["plugin_ns_per_op"] = statistics.median(x["plugin_ns_per_op"] for x in runs)
    r["nccl_ns_per_op"] = statistics.median(x["nccl_ns_per_op"] for x in runs)
    return r


def weighted(ops, full, f):
    r = dict(full)
    for k in ("plugin_ns_per_op", "nccl_ns_per_op"):
        r[k] = (1 - f) * ops[k] + f * full[k]
    r["mask"] = None
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--iters", type=int, default=2, help="thousands of operations per rank and run")
    ap.add_argument("--nccl", default="2.30")
    ap.add_argument("--emulate-detail", action="store_true",
                    help="set the levels' masks with NCCLSCOPE_EVENT_MASK even if the plugin knows NCCLSCOPE_DETAIL")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    empty = os.path.join(a.build, "libnccl-profiler-empty.so")
    nsc = os.path.join(a.build, "libnccl-profiler-ncclscope.so")
    for f in (empty, nsc, os.path.join(a.build, "ncclscope-sim")):
        if not os.path.exists(f):
            sys.exit(f"detail_cost: {f} missing: build first (cmake --build {a.build})")

    _, log = sim_run(a, a.build, "coll-1node", nsc, {"NCCLSCOPE_DETAIL": "ops"}, 1, a.nccl)
    knows = "detail ops" in log and not a.emulate_detail
    how = "NCCLSCOPE_DETAIL" if knows else "NCCLSCOPE_EVENT_MASK (emulated levels; sampled = weighted ops/full)"
    print(f"detail_cost: NCCL {a.nccl}, {a.iters * 1000} operations per rank and run, median of {a.reps}; "
          f"ncclscope levels through {how}")
    summary = []
    for workload, title, base_us in WORKLOADS:
        rows = [("none", measure(a, workload, "none", {}))]
        rows.append(("empty 0xFFF", measure(a, workload, empty, {"SIM_BASELINE_MASK": "0xFFF"})))
        em = {lvl: measure(a, workload, empty, {"SIM_BASELINE_MASK": hex(m)}) for lvl, m in LEVEL_MASKS.items()}
        rows += [("empty ops", em["ops"]), ("empty sampled", weighted(em["ops"], em["full"], SAMPLED_FRACTION)),
                 ("empty full", em["full"])]
        if knows:
            nl = {lvl: measure(a, workload, nsc, {"NCCLSCOPE_DETAIL": lvl}) for lvl in ("ops", "sampled", "full")}
        else:
            nl = {lvl: measure(a, workload, nsc, {"NCCLSCOPE_EVENT_MASK": hex(m)}) for lvl, m in LEVEL_MASKS.items()}
            nl["sampled"] = weighted(nl["ops"], nl["full"], SAMPLED_FRACTION)
        rows += [(f"ncclscope {lvl}", nl[lvl]) for lvl in ("ops", "sampled", "full")]
        print(f"\n{workload}: {title}; no-plugin time {base_us:.2f} us per operation (measured)")
        print(f"| {'configuration':<18} | {'mask':>6} | {'plugin_ns':>9} | {'nccl_ns':>8} | {'sum_ns':>8} | {'ratio':>6} |")
        print(f"|{'-' * 20}|{'-' * 8}:|{'-' * 10}:|{'-' * 9}:|{'-' * 9}:|{'-' * 7}:|")
        for name, r in rows:
            s = r["plugin_ns_per_op"] + r["nccl_ns_per_op"]
            mask = "mixed" if r.get("mask") is None else f"0x{r['mask']:X}"
            ratio = (base_us * 1000 + s) / (base_us * 1000)
            print(f"| {name:<18} | {mask:>6} | {r['plugin_ns_per_op']:>9.0f} | {r['nccl_ns_per_op']:>8.0f} | "
                  f"{s:>8.0f} | {ratio:>6.3f} |")
            summary.append({"workload": workload, "config": name, "mask": r.get("mask"),
                            "plugin_ns": round(r["plugin_ns_per_op"], 1), "nccl_ns": round(r["nccl_ns_per_op"], 1),
                            "ratio": round(ratio, 4)})
    print("\nDETAILCOST " + json.dumps({"nccl": a.nccl, "detail_env": knows, "rows": summary}))


if __name__ == "__main__":
    main()
