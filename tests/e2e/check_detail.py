#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope end-to-end: the detail levels (NCCLSCOPE_DETAIL).

usage: check_detail.py CHECK WORKDIR
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries)

  ops       under every NCCL personality, `ops` without escalation records
            operations (Coll, P2p, ProxyOp) and no KernelCh, ProxyStep,
            ProxyCtrl or NetPlugin, even with NCCLSCOPE_EVENT_MASK=all; the trace's DETAIL block says
            so; `full` under the same run records KernelCh and ProxyStep.
  sampled   `sampled` at 100 ms a second, no escalation: full detail periods
            of 100 ms one second apart (DETAIL blocks); a bounded share of
            the operations carries KernelCh; windows.jsonl's
            ncclscope_ops_gpu_timed_total counts exactly the operations the
            trace gives GPU times, and the bandwidth series say which timing
            they come from.
  hang      the `hang` scenario under `sampled`: the operation one rank never
            joins escalates to full detail within one watchdog period
            (reason inflight) in every process that started it, and
            `report` names the hang from the traces.
  straggler the `straggler` scenario under `sampled`: the late rank's
            lateness (its GPU's: its calls come on time) escalates to full
            detail (reason straggler) and the
            collectives after it carry their KernelCh as under `full`.
  config    an unknown level gives one warning naming the valid ones (and
            `full` is used); NCCLSCOPE_SAMPLE_MS out of range is refused with
            its range.

Exit 0 pass, 1 fail, 77 skip. Stdlib only.
"""
import collections
import glob
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import check, fresh_dump, run_named, varint  # noqa: E402

DETAIL_TYPES = {"ncclProfileKernelCh", "ncclProfileProxyStep", "ncclProfileProxyCtrl", "ncclProfileNetPlugin"}
OPS_TYPES = {"ncclProfileColl", "ncclProfileP2p"}
WHY = ["start", "sample", "sample-end", "inflight", "straggler", "busbw-drop", "signal", "calm"]


def run(cmd, env, timeout=240, want=0):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == want, "%s exited %d, want %d:\n%s" % (" ".join(cmd), r.returncode, want, out[-3000:]))
    return out


def simulate(work, detail_env, args, name="dump"):
    dump = fresh_dump(os.path.join(work, name))
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=dump, NCCLSCOPE_NO_CUDA="1", NCCL_DEBUG="INFO", **detail_env)
    for k in ("NCCLSCOPE_EVENT_MASK", "NCCL_PROFILE_EVENT_MASK"):
        if k not in detail_env:
            env.pop(k, None)
    log = run([os.environ["SIM"], "--plugin", os.environ["PLUGIN"]] + args, env)
    return dump, log


def export(dump):
    out = os.path.join(dump, "..", "out.jsonl")
    run([os.environ["NCCLSCOPE"], "export", dump, "-o", out], dict(os.environ))
    events = {}
    with open(out) as f:
        for line in f:
            o = json.loads(line)
            if o.get("recordType") == "event":
                events[o["eventAddr"]] = o
    return events


def detail_blocks(dump):
    """The DETAIL blocks of every trace (docs/trace-format.md): [(ts, mask, full, reason)] per file."""
    out = {}
    for path in glob.glob(os.path.join(dump, "*.nstrace")):
        b = open(path, "rb").read()
        at, blocks = 32, []
        while at + 24 <= len(b):
            magic, kind, _, size, _, _ = struct.unpack_from("<IHHIIQ", b, at)
            if magic != 0x3142534E:
                break
            if kind == 11:
                p, i, d = b[at + 24:at + 24 + size], 0, {}
                while i < len(p):
                    k, i = varint(p, i)
                    t, i = varint(p, i)
                    check(t == 0, "DETAIL property %d is not a u64" % k)
                    d[k], i = varint(p, i)
                blocks.append((d[39], d[37], d[71], WHY[d[72]]))
            at += 24 + size
        out[path] = blocks
    check(out, "no trace in %s" % dump)
    return out


def children(events):
    kids = collections.defaultdict(list)
    for e in events.values():
        if e.get("parentObj"):
            kids[e["parentObj"]].append(e)
    return kids


def check_ops(work):
    for nccl in ("2.23", "2.25", "2.26", "2.27", "2.28", "2.29", "2.30"):
        for mask in (None, "all"):
            env = {"NCCLSCOPE_DETAIL": "ops", "NCCLSCOPE_ESCALATE_SEC": "0"}  # a first collective's connection escalates
            if mask:
                env["NCCLSCOPE_EVENT_MASK"] = mask
            dump, _ = simulate(work, env, ["--nccl", nccl, "--fast", "--iters", "3", "--nodes", "2"])
            types = collections.Counter(e["type"] for e in export(dump).values())
            what = "NCCL %s, DETAIL=ops%s" % (nccl, ", EVENT_MASK=all" if mask else "")
            check(not DETAIL_TYPES & set(types), "%s recorded %s" % (what, dict(types)))
            for t in ("ncclProfileColl", "ncclProfileP2p", "ncclProfileProxyOp"):
                check(types[t] > 0, "%s recorded no %s: %s" % (what, t, dict(types)))
            for path, blocks in detail_blocks(dump).items():
                check(blocks and blocks[0][2] == 0 and blocks[0][3] == "start" and not blocks[0][1] & 0xF0,
                      "%s: %s's first DETAIL block is %s" % (what, path, blocks[:1]))
                check(all(not b[2] for b in blocks), "%s: full detail in %s" % (what, blocks))
    dump, _ = simulate(work, {"NCCLSCOPE_DETAIL": "full"}, ["--fast", "--iters", "3", "--nodes", "2"])
    types = collections.Counter(e["type"] for e in export(dump).values())
    for t in ("ncclProfileKernelCh", "ncclProfileProxyStep"):
        check(types[t] > 0, "DETAIL=full recorded no %s: %s" % (t, dict(types)))


def check_sampled(work):
    env = {"NCCLSCOPE_DETAIL": "sampled", "NCCLSCOPE_SAMPLE_MS": "100", "NCCLSCOPE_ESCALATE_SEC": "0",
           "NCCLSCOPE_WINDOW_SEC": "1"}
    dump, log = simulate(work, env, ["--iters", "500", "--nodes", "2", "--seed", "1"])  # 4 s on an idle machine
    for path, blocks in detail_blocks(dump).items():
        check(len(blocks) >= 4, "%s: %d DETAIL blocks (a run of seconds)" % (path, len(blocks)))
        check([b[2] for b in blocks] == [1 - i % 2 for i in range(len(blocks))],
              "%s: the DETAIL blocks do not alternate full/ops: %s" % (path, blocks))
        t0 = blocks[0][0]
        for i in range(2, len(blocks) - 1, 2):  # the first period lasts until the writer's first passes
            start, end = blocks[i][0] - t0, blocks[i + 1][0] - t0
            # each period begins on the second (the writer's poll, 2 ms, and a loaded machine: 60 ms late at most)
            check(abs(start - round(start / 1e9) * 1e9) <= 60e6 and 40e6 <= end - start <= 160e6,
                  "%s: full detail from %.3f s to %.3f s, not 100 ms from a whole second" % (path, start / 1e9,
                                                                                            end / 1e9))
            check(blocks[i + 1][3] == "sample-end" and (i == 0 or blocks[i][3] == "sample"),
                  "%s: reasons %s" % (path, blocks[i:i + 2]))
    events = export(dump)
    kids = children(events)
    ops = [e for e in events.values() if e["type"] in OPS_TYPES]
    # (that a task's KernelCh and ProxySteps come together or not at all is NCCL's, and the simulator's
    # sim.nccl.mask_runtime checks it; here, under 2.30's model of the pTimer ring, a few sampled
    # operations' KernelCh never start)
    detailed = sum(1 for e in ops if any(k["type"] == "ncclProfileKernelCh" for k in kids[e["eventAddr"]]))
    share = detailed / max(1, len(ops))
    check(len(ops) > 100 and 0 < share <= 0.5, "%d of %d operations carry KernelCh (100 ms a second)" %
          (detailed, len(ops)))
    # coverage: the windows' GPU-timed operations against the trace: the operations whose pTimers the export
    # finds their own (a bounded GPU time; a pTimer that may be another work's is published unbounded). The
    # plugin judged each one when it ended, with the same rules and the clock fit of that moment.
    gpu_trace = sum(1 for e in ops if e.get("details", {}).get("gpuErrorUs") is not None)
    lines = []
    for path in glob.glob(os.path.join(dump, "*windows*.jsonl")):
        with open(path) as f:
            lines += [json.loads(x) for x in f]
    check(lines, "no windows.jsonl in %s: %s" % (dump, os.listdir(dump)))
    last = {}
    for w in lines:
        for m in w["metrics"]:
            for p in m["points"]:
                last[(w["pid"], m["name"], json.dumps(p["labels"], sort_keys=True))] = p.get("value", p.get("count"))
    total = sum(v for k, v in last.items() if k[1] == "ncclscope_ops_total")
    gpu = sum(v for k, v in last.items() if k[1] == "ncclscope_ops_gpu_timed_total")
    check(total == len(ops), "ncclscope_ops_total %s, the trace has %d operations" % (total, len(ops)))
    print("operations %d, with KernelCh %d, GPU-timed: windows %d, export %d" % (len(ops), detailed, gpu, gpu_trace))
    check(0 < gpu <= detailed and abs(gpu - gpu_trace) <= 0.05 * gpu_trace + 2,
          "ncclscope_ops_gpu_timed_total %s; in the trace %d operations carry KernelCh, %d have bounded GPU times" %
          (gpu, detailed, gpu_trace))
    timings = {json.loads(k[2]).get("timing") for k in last if k[1] == "ncclscope_busbw_bytes_per_second"}
    check(timings and timings <= {"gpu", "cpu"}, "busbw series timing labels: %s" % timings)
    ratios = [v for k, v in last.items() if k[1] == "ncclscope_detail_full_ratio"]
    check(ratios and all(0 <= r <= 1 for r in ratios), "ncclscope_detail_full_ratio: %s" % ratios)


def check_hang(work):
    truth = os.path.join(work, "truth.jsonl")
    os.makedirs(work, exist_ok=True)
    # escalations hold 0.5 s: the first collective's connection (in flight 1 s) escalates too, and is over
    env = {"NCCLSCOPE_DETAIL": "sampled", "NCCLSCOPE_HANG_TIMEOUT_SEC": "2", "NCCLSCOPE_ESCALATE_SEC": "0.5"}
    dump, log = simulate(work, env, ["--truth", truth, "--nccl", "ideal", "--procs", "2", "--ranks-per-proc", "4",
                                     "--nodes", "2", "--scenario", "hang", "--seed", "3", "--hang-timeout-ms", "6000"])
    with open(truth) as f:
        hang = [o for o in map(json.loads, f) if o["kind"] == "hang"]
    check(len(hang) == 1, "the truth has %d hang lines" % len(hang))
    hang = hang[0]
    events = export(dump)
    # the first start of the collective the hung rank never posted, on the other ranks
    stuck = [e for e in events.values() if e["type"] == "ncclProfileColl" and e["details"].get("seq") == hang["seq"]
             and e["commId"] == int(hang["comm"], 16)]
    check(stuck, "no rank started seq %s" % hang["seq"])
    # per process: the DETAIL state from its first start of the stuck collective to one watchdog period later
    for path, blocks in detail_blocks(dump).items():
        pid = int(path.rsplit("-", 1)[1].split(".")[0])
        mine = [e["start"]["ts"] * 1000 for e in stuck if e["start"]["pid"] == pid]  # us -> ns: the trace clock
        check(mine, "%s: its ranks never started seq %s" % (path, hang["seq"]))
        t_stuck = min(mine)
        before = [b for b in blocks if b[0] <= t_stuck]
        during = [b for b in blocks if t_stuck < b[0] <= t_stuck + 2e9]
        # (the flight recorder takes an operation without detail as done after 1 s without news: the
        # escalation then ends, NCCLSCOPE_ESCALATE_SEC later)
        check(any(b[3] == "inflight" and b[2] == 1 for b in during) or (before and before[-1][3] == "inflight"),
              "%s: no escalation for the operation in flight: %s" % (path, before[-3:] + during))
    check("full detail for at least" in log and "inflight" in log, "no INFO line for the escalation")
    rep = run([os.environ["NCCLSCOPE"], "report", dump, "-q", "--json", os.path.join(work, "summary.json")],
              dict(os.environ), want=3)  # 3: a hang found
    with open(os.path.join(work, "summary.json")) as f:
        rep = json.dumps(json.load(f).get("hangs"))
    check(hang["func"] in rep and str(hang["seq"]) in rep, "report does not name %s seq %s" % (hang["func"],
                                                                                            hang["seq"]))


def check_straggler(work):
    # 1 s windows: the straggler shows in every closed window, each extending the escalation by 2 s. Its kernels
    # start late, its calls do not: it is last only in the collectives that every rank's GPU timed, those of the
    # sampling periods. 300 ms of them a second gives each window some 30 at 10 ms a collective (8 are needed;
    # the unit test writer.detail covers that threshold).
    # 10 ms late, not the simulator's 3 ms: on a loaded machine a rank's thread waits that long for a core now and
    # then, and its launch (so its kernel) comes late by as much; the injected lateness stays the larger.
    env = {"NCCLSCOPE_DETAIL": "sampled", "NCCLSCOPE_SAMPLE_MS": "300", "NCCLSCOPE_WINDOW_SEC": "1",
           "NCCLSCOPE_ESCALATE_SEC": "2"}
    dump, log = simulate(work, env, ["--scenario", "straggler", "--iters", "100", "--seed", "1",
                                     "--straggler-us", "10000"])
    named = list(re.finditer(r"straggler: rank (\d+) of commId (0x[0-9a-f]+) \(communicator \d+\) arrived last in "
                             r"\d+ of \d+ collectives( timed by the GPU)?", log))
    check(named, "no INFO line for a straggler escalation:\n" + log[-2000:])
    # the simulator makes the last rank of the communicator late. A rank whose thread the scheduler held back
    # (other processes on the cores) is late by its calls, and may be named too; by the GPU, only the straggler.
    nranks = {m.group(1): int(m.group(2)) for m in re.finditer(r"commId (0x[0-9a-f]+), rank \d+ of (\d+)\)", log)}
    late = [m for m in named if int(m.group(1)) == nranks.get(m.group(2), 0) - 1]
    check(late, "no escalation names the last rank of its communicator: %s" % [m.group(0) for m in named])
    print("escalations: %s" % "; ".join(m.group(0) for m in named))
    check(all(m in late for m in named if m.group(3)), "an escalation by the GPU's times names another rank: %s" %
          [m.group(0) for m in named if m.group(3) and m not in late])
    esc = [b for blocks in detail_blocks(dump).values() for b in blocks if b[3] == "straggler"]
    check(esc, "no DETAIL block with reason straggler: %s" % detail_blocks(dump))
    t_esc = min(b[0] for b in esc)
    events = export(dump)
    kids = children(events)
    blocks = [b for bl in detail_blocks(dump).values() for b in bl]
    t_end = min([b[0] for b in blocks if b[0] > t_esc and b[2] == 0] + [float("inf")])  # full detail until then
    after = [e for e in events.values() if e["type"] == "ncclProfileColl" and t_esc + 50e6 < e["start"]["ts"] * 1000 < t_end]
    check(after, "no collective after the escalation")
    with_kch = sum(1 for e in after if any(k["type"] == "ncclProfileKernelCh" for k in kids[e["eventAddr"]]))
    # full detail from then on: the collectives carry their channels' KernelCh (but those NCCL runs without, as
    # under full detail: a share of them is batched or has no kernel work of its own)
    dump_full, _ = simulate(work, {"NCCLSCOPE_DETAIL": "full"}, ["--scenario", "straggler", "--iters", "5"], "full")
    ev_full = export(dump_full)
    kids_full = children(ev_full)
    colls_full = [e for e in ev_full.values() if e["type"] == "ncclProfileColl"]
    share_full = sum(1 for e in colls_full if any(k["type"] == "ncclProfileKernelCh" for k in kids_full[e["eventAddr"]]))
    share_full /= max(1, len(colls_full))
    check(with_kch >= 0.9 * share_full * len(after), "%d of %d collectives after the escalation carry KernelCh "
          "(under full detail %.0f %% do)" % (with_kch, len(after), 100 * share_full))


def check_config(work):
    dump, log = simulate(work, {"NCCLSCOPE_DETAIL": "sometimes", "NCCLSCOPE_SAMPLE_MS": "0"},
                         ["--fast", "--iters", "1"])
    bad = [line for line in log.splitlines() if "NCCLSCOPE_DETAIL=" in line]
    check(len(bad) == 1 and "ops, sampled, full" in bad[0] and "using full" in bad[0], "warning: %s" % bad)
    bad = [line for line in log.splitlines() if "NCCLSCOPE_SAMPLE_MS=" in line]
    check(len(bad) == 1 and "[1, 1000]" in bad[0], "warning: %s" % bad)
    check("detail full;" in log, "the level used is not full:\n" + log[-1500:])


CHECKS = {"ops": check_ops, "sampled": check_sampled, "hang": check_hang, "straggler": check_straggler,
          "config": check_config}

if __name__ == "__main__":
    sys.exit(run_named(CHECKS, __doc__, sys.argv))
