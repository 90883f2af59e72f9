#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope end-to-end checks against the simulator's ground truth.

usage: check_truth.py CHECK WORKDIR
  env: NCCLSCOPE SIM PLUGIN (paths of the built binaries)

Every check runs ncclscope-sim in real time (default scenario unless said
otherwise) with the ncclscope plugin and NCCLSCOPE_EVENT_MASK=all, exports
the trace as JSON Lines (and runs `ncclscope report` where needed), and
compares with the simulator's --truth file (docs/simulator.md):

  exec_end      Coll/P2p execStop against the truth's t_end and the due time of
                the last KernelCh stop callback (cb_stop)
  gpu_clock     KernelCh gpuStart/gpuStop against the true gpu_start/gpu_stop:
                inside gpuErrorUs every time, median within 5 us after warm-up
  gpu_clock_v4  the same through the v4 ABI (no KernelLaunch): bounded by the receive
                handovers alone (env PLUGIN_V4: the plugin built with v4 only)
  busbw         bytes, algbwGBs, busbwGBs recomputed with nccl-tests' formulas
  links         MIN-mode send-side link latency/bandwidth from `report` vs the injected link model
  clock_fields  finalize gpuClockOffsetUs/DriftPpm/ErrorUs vs truth
  straggler     `report` names the late rank of the straggler scenario
  batch         ops of one kernel batch (2.27+) reported as the batch: the truth's batch figure within 2 % plus the
                timer's quantum at each end, the median within 1 %
  kernel_phase  NCCL 2.31 (profiler v7): every KernelPhase the device timed is exported under its KernelCh
                with the truth's phase name, its gpuStart/gpuStop inside gpuErrorUs; every Coll's, CollApi's
                and P2p's userTag is the call's
  clock_real_*  under real releases (--nccl 2.27..2.30: pTimers of other works, drift sources, overrun,
                late polls, GPU drift, shared GPUs), every bounded KernelCh/Coll/P2p gpuStart/gpuStop
                contains the op's own true time; median error within 5 us where launches are prompt

Failures print both sides. Exit 0 pass, 1 fail, 77 skip. Stdlib only.
"""
import collections
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth_match import load  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import Fail, check, run_named, fresh_dump  # noqa: E402

ITERS = 30  # ~1,080 Coll/P2p per rank of the main communicator: past the clock warm-up
WARMUP_OPS = 1000  # clock-fit warm-up, in operations per (comm, rank)
SETTLED_ERR_US = 5.0  # "a few us" after warm-up
CLOCK_TOL_US = 5.0  # the plugin and the simulator read CLOCK_MONOTONIC at slightly different points


def run(cmd, env=None, out=None):
    # within the ctest TIMEOUT (CMakeLists.txt): a real-time run on a machine other processes load
    # takes several times its idle time
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=150)
    if out:
        with open(out, "wb") as f:
            f.write(r.stdout)
    if r.returncode != 0:
        raise Fail("%s exited %d:\n%s" % (" ".join(cmd), r.returncode, r.stdout.decode(errors="replace")[-2000:]))
    return r.stdout.decode(errors="replace")


def simulate(work, args=(), report=False, clock=None, plugin=None, detail=None, types=None):
    """Runs the sim + export (+ report). Returns (truth by kind, export records, summary).
    clock: NCCLSCOPE_CLOCK for the plugin (None: its default). plugin: another build of it (None: $PLUGIN).
    detail: NCCLSCOPE_DETAIL (None: full). types: the export's --types (None: every event)."""
    dump = fresh_dump(work)
    truth_path = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, NCCLSCOPE_EVENT_MASK="all", NCCLSCOPE_DUMP_DIR=dump)
    if detail:
        env["NCCLSCOPE_DETAIL"] = detail
    if clock:
        env["NCCLSCOPE_CLOCK"] = clock
    # the ideal NCCL unless the check names a release (the real releases' behaviour has checks of its own, below)
    nccl = [] if "--nccl" in args else ["--nccl", "ideal"]
    run([os.environ["SIM"], "--plugin", plugin or os.environ["PLUGIN"], "--truth", truth_path] + nccl + list(args), env=env,
        out=os.path.join(work, "sim.log"))
    jsonl = os.path.join(work, "export.jsonl")
    run([os.environ["NCCLSCOPE"], "export", dump, "--format", "jsonl", "-o", jsonl] + (["--types", types] if types else []))
    truth, recs = load(truth_path, jsonl)
    summary = None
    if report:
        run([os.environ["NCCLSCOPE"], "report", dump, "-q", "--links", "1000"])
        with open(os.path.join(dump, "summary.json")) as f:
            summary = json.load(f)
    return truth, recs, summary


def events(recs, typ):
    return [r for r in recs if r["recordType"] == "event" and r["type"] == typ]


def ns(us):
    return int(round(us * 1000))


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def dist(values, unit=1e3):
    return "min %.2f p50 %.2f p90 %.2f p99 %.2f max %.2f us (n=%d)" % (
        min(values) / unit, pct(values, .5) / unit, pct(values, .9) / unit, pct(values, .99) / unit,
        max(values) / unit, len(values))


# ---- matching exported Coll/P2p to truth tasks ----

def match_ops(truth, recs):
    """[(exported event, truth coll record)]: Coll by (comm, rank, func, seq);
    P2p by (comm, rank, func, peer) in start order."""
    tcoll = {}
    tp2p = collections.defaultdict(list)
    for t in truth["coll"]:
        if t["aborted"] or t["replay"] or t["ce"]:
            continue
        comm = int(t["comm"], 16)
        if t["peer"] >= 0 and t["func"] in ("Send", "Recv"):
            tp2p[(comm, t["rank"], t["func"], t["peer"])].append(t)
        else:
            tcoll[(comm, t["rank"], t["func"], t["seq"])] = t
    pairs, missing = [], []
    for e in events(recs, "ncclProfileColl"):
        t = tcoll.get((e["commId"], e["rank"], e["func"], e["details"]["seq"]))
        (pairs.append((e, t)) if t else missing.append(e))
    ep2p = collections.defaultdict(list)
    for e in events(recs, "ncclProfileP2p"):
        if "incomplete" in e:
            missing.append(e)
            continue
        ep2p[(e["commId"], e["rank"], e["func"], e["details"]["peer"])].append(e)
    for k, evs in ep2p.items():
        evs.sort(key=lambda e: e["start"]["ts"])
        ts = sorted(tp2p.get(k, []), key=lambda t: t["t_start"])
        check(len(ts) == len(evs), "P2p %s: %d exported, %d in truth" % (k, len(evs), len(ts)))
        pairs.extend(zip(evs, ts))
    return pairs, missing


# ---- checks ----

def check_exec_end(work):
    truth, recs, _ = simulate(work, ["--iters", "10"])
    pairs, missing = match_ops(truth, recs)
    check(not missing, "%d exported Coll/P2p without a truth task, e.g. %s" % (len(missing), missing[:1]))
    check(len(pairs) == len(truth["coll"]), "matched %d of %d truth tasks" % (len(pairs), len(truth["coll"])))
    cb = collections.defaultdict(int)  # (comm, rank, func, seq) -> latest due KernelCh stop callback
    for k in truth["kernel"]:
        key = (int(k["comm"], 16), k["rank"], k["func"], k["seq"])
        cb[key] = max(cb[key], k["cb_stop"])
    vs_end, vs_cb = [], []
    for e, t in pairs:
        check("execStop" in e["details"], "no execStop: %s" % json.dumps(e))
        x = ns(e["details"]["execStop"])
        d = x - t["t_end"]
        # never before the true end of the operation
        check(d >= -CLOCK_TOL_US * 1e3, "execStop %d before the true end %d by %.3f us:\n  export %s\n  truth  %s" %
              (x, t["t_end"], -d / 1e3, json.dumps(e), json.dumps(t)))
        vs_end.append(d)
        key = (e["commId"], e["rank"], e["func"], t["seq"])
        if e["type"] == "ncclProfileColl" and key in cb:
            c = x - cb[key]
            # the last child's stop callback: not before it was due, and not later than the
            # simulator's own scheduling slack on a busy machine
            check(c >= -CLOCK_TOL_US * 1e3, "execStop %d before the last KernelCh stop callback was due (%d):\n"
                  "  export %s\n  truth  %s" % (x, cb[key], json.dumps(e), json.dumps(t)))
            check(c <= 20e6, "execStop %d more than 20 ms after the last callback was due (%d)" % (x, cb[key]))
            vs_cb.append(c)
    print("execStop - truth t_end:          %s" % dist(vs_end))
    print("execStop - last callback due:    %s" % dist(vs_cb))
    lag_ok = sum(1 for d in vs_end if d <= 3040e3)
    print("within the model's lag bound (2-40 us, stalls <= 3 ms): %d of %d" % (lag_ok, len(vs_end)))


def kernel_truth(truth):
    """Truth kernels by (comm, rank, channel, pTimer start, pTimer stop, func, seq for a Coll | peer for a P2p):
    the tasks of one group share channels and the GPU timer's 2 us quantum, so the pTimers alone are ambiguous."""
    tk = {}
    for k in truth["kernel"]:
        which = k["peer"] if k["func"] in ("Send", "Recv") else k["seq"]
        tk[(int(k["comm"], 16), k["rank"], k["channel"], k["ptimer_start"], k["ptimer_stop"], k["func"], which)] = k
    return tk


def kernel_key(e, ops):
    """The kernel_truth key of an exported KernelCh; ops: exported Coll/P2p by eventAddr."""
    op = ops.get(e["parentObj"])
    if not op:
        return None
    which = op["details"]["peer"] if op["type"] == "ncclProfileP2p" else op["details"]["seq"]
    return (e["commId"], e["rank"], e["details"]["channel"], e["details"]["pTimer"], e["details"].get("pTimerStop"),
            op["func"], which)


def clock_conversions(truth, recs):
    """Every KernelCh gpuStart/gpuStop against the truth: each must lie inside its published bound.
    Returns (KernelCh events, ops by address, kernel truth, all errors, error/bound ratios, errors and bounds
    after warm-up, unbounded conversions)."""
    ops = {r["eventAddr"]: r for r in events(recs, "ncclProfileColl") + events(recs, "ncclProfileP2p")}
    tk = kernel_truth(truth)
    kch = sorted(events(recs, "ncclProfileKernelCh"), key=lambda e: e["start"]["ts"])
    check(kch, "no KernelCh events")
    seen = collections.Counter()
    errs, ratios, settled, bounds_settled = [], [], [], []
    unbounded = 0
    for e in kch:
        d = e["details"]
        t = tk.get(kernel_key(e, ops))
        check(t, "KernelCh without a truth record: %s" % json.dumps(e))
        check("gpuStart" in d and "gpuStop" in d, "KernelCh without gpuStart/gpuStop: %s" % json.dumps(e))
        key = (e["commId"], e["rank"])
        seen[key] += 1
        bound = d["gpuErrorUs"]
        for side, true_ns in (("gpuStart", t["gpu_start"]), ("gpuStop", t["gpu_stop"])):
            err = abs(ns(d[side]) - true_ns) / 1e3
            errs.append(err)
            if bound is None:
                unbounded += 1
                continue
            # the published bound must hold every time (plus the 1 ns of the 3-decimal print)
            check(err <= bound + 0.001, "%s off by %.3f us, bound %.3f us:\n  export %s\n  truth  %s" %
                  (side, err, bound, json.dumps(e), json.dumps(t)))
            ratios.append(err / bound if bound > 0 else 0)
            if seen[key] > WARMUP_OPS:
                settled.append(err)
                bounds_settled.append(bound)
    print("KernelCh conversions: %d, unbounded %d" % (len(errs), unbounded))
    print("true error:           %s" % dist(errs, 1))
    check(ratios, "no bounded conversion")
    print("error / bound:        max %.3f p99 %.3f" % (max(ratios), pct(ratios, .99)))
    check(settled, "no bounded conversion after %d KernelCh per (comm, rank)" % WARMUP_OPS)
    print("after warm-up: error %s; bound %s" % (dist(settled, 1), dist(bounds_settled, 1)))
    return kch, ops, tk, errs, ratios, settled, bounds_settled, unbounded


def check_settled(settled):
    """The goal: a median error of a few us after warm-up. Every single conversion must lie inside its
    bound (clock_conversions); its size follows the samples, which a loaded machine delays (CI saw one of
    6,800 at 7.5 us inside an 18 us bound), so the tail is printed, not held to the goal."""
    check(pct(settled, .5) <= SETTLED_ERR_US, "after warm-up the median true error is %.3f us (> %.1f)" %
          (pct(settled, .5), SETTLED_ERR_US))


def check_gpu_clock(work):
    # The plugin's default clock (TSC where invariant): the bound assumes a callback's timestamp is never
    # earlier than the GPU event it reports, which holds since the writer re-anchors before every drain.
    truth, recs, _ = simulate(work, ["--iters", str(ITERS)])
    kch, ops, tk, errs, ratios, settled, bounds_settled, unbounded = clock_conversions(truth, recs)
    # What the data allows: the fit is pinned by the shortest callback lag ("after" samples) and the shortest
    # gap from the start of a kernel's launch call (KernelLaunch, linked through GroupApi <- CollApi/P2pApi <-
    # Coll/P2p) to the kernel's start ("before" samples); its width is about their sum plus a timer quantum,
    # halved.
    apis = {r["eventAddr"]: r for r in events(recs, "ncclProfileCollApi") + events(recs, "ncclProfileP2pApi")}
    launch = {}
    for r in events(recs, "ncclProfileKernelLaunch"):
        k = (r["parentObj"], r["commId"])
        launch[k] = min(launch.get(k, r["start"]["ts"]), r["start"]["ts"])
    lag, gap = [], []
    for e in kch:
        t = tk[kernel_key(e, ops)]
        lag.append(ns(e["start"]["ts"]) - t["gpu_start"])
        lag.append(ns(e["stop"]["ts"]) - t["gpu_stop"])
        api = apis.get(ops[e["parentObj"]]["parentObj"])
        if api and (api["parentObj"], e["commId"]) in launch:
            gap.append(t["gpu_start"] - ns(launch[(api["parentObj"], e["commId"])]))
    check(gap, "no KernelCh could be linked to its KernelLaunch")
    gran = truth["gpu_clock"][0]["gran_ns"]
    ideal_us = (min(gap) + min(lag) + gran) / 2e3
    print("data-limited width: (min launch gap %.2f + min callback lag %.2f + quantum %.3f) / 2 = %.2f us" %
          (min(gap) / 1e3, min(lag) / 1e3, gran / 1e3, ideal_us))
    check_settled(settled)
    check(pct(bounds_settled, .5) <= 1.5 * ideal_us, "after warm-up the median bound %.3f us is more than "
          "1.5x the data-limited width %.3f us" % (pct(bounds_settled, .5), ideal_us))


def check_gpu_clock_sampled(work):
    # NCCLSCOPE_DETAIL=sampled: KernelCh for 30 ms of every second only, so the fit has a few samples a second
    # and long gaps between them: every conversion must still lie inside its published bound (or say
    # unbounded), the bound wider than under full detail where the samples are fewer.
    truth, recs, _ = simulate(work, ["--iters", str(ITERS)], detail="sampled")
    ops = events(recs, "ncclProfileColl") + events(recs, "ncclProfileP2p")
    kch = events(recs, "ncclProfileKernelCh")
    print("operations %d, KernelCh %d (sampled)" % (len(ops), len(kch)))
    check(kch and len({k["parentObj"] for k in kch}) < len(ops) / 2,
          "%d of %d operations have KernelCh under sampling" % (len({k["parentObj"] for k in kch}), len(ops)))
    errs = []
    tk = kernel_truth(truth)
    by = {r["eventAddr"]: r for r in ops}
    bounded = unbounded = 0
    for e in kch:
        d, t = e["details"], tk.get(kernel_key(e, by))
        check(t, "KernelCh without a truth record: %s" % json.dumps(e))
        if "gpuStart" not in d or d.get("gpuErrorUs") is None:
            unbounded += 1
            continue
        for side, true_ns in (("gpuStart", t["gpu_start"]), ("gpuStop", t["gpu_stop"])):
            err = abs(ns(d[side]) - true_ns) / 1e3
            check(err <= d["gpuErrorUs"] + 0.001, "%s off by %.3f us, bound %.3f us (sampled)" %
                  (side, err, d["gpuErrorUs"]))
            errs.append(err)
        bounded += 1
    check(bounded, "no bounded conversion under sampling (%d unbounded)" % unbounded)
    print("bounded %d, unbounded %d; true error %s" % (bounded, unbounded, dist(errs, 1)))


PROMPT_POLL_P10_US = 10.0  # the simulator's poll model alone: lags log-uniform from 2 to 40 us, p10 2.7 us


def poll_lag_p10_us(truth):
    """How promptly the proxy threads ran: the tenth percentile over the truth's kernels of the stop
    callback's time minus the kernel's end (cb_stop - gpu_stop), us."""
    lags = sorted(k["cb_stop"] - k["gpu_stop"] for k in truth["kernel"])
    return lags[len(lags) // 10] / 1e3 if lags else 0.0


def check_gpu_clock_v4(work):
    # A v4 plugin gets no KernelLaunch (nor API) events: the only "before" samples are the receive handovers of
    # Simple-protocol Colls (RecvGPUWait before the kernel's last channel stop). Ops of a comm before its first
    # such Coll, and comms without network receives, stay one-sided (unbounded).
    # the events the check reads: the whole mask's export is ten times larger (ProxyStep, NetPlugin), and decoding
    # it was most of the check's CPU time
    truth, recs, _ = simulate(work, ["--iters", str(ITERS)], plugin=os.environ["PLUGIN_V4"],
                              types="Coll,P2p,KernelCh,KernelLaunch")
    check(not events(recs, "ncclProfileKernelLaunch"), "a v4 plugin received KernelLaunch events")
    kch, ops, tk, errs, ratios, settled, bounds_settled, unbounded = clock_conversions(truth, recs)
    check(unbounded <= 0.2 * len(errs), "%d of %d conversions unbounded" % (unbounded, len(errs)))
    # Both sides of a v4 fit come from the proxy thread (its KernelCh callbacks, its receive handovers), so
    # its width follows how promptly that thread ran. The median goal holds "where launches and polls
    # are prompt": here when the tenth percentile of the stop callbacks' lag (the plugin's callback time
    # minus the true kernel end) stays within PROMPT_POLL_P10_US. On an idle 2-core machine whose cores
    # sleep between polls it was 25 us and the median error 6-15 us (every conversion inside its bound);
    # beside a busy loop 13 us and 4.5 us. Containment (above) holds either way.
    p10 = poll_lag_p10_us(truth)
    if p10 <= PROMPT_POLL_P10_US:
        check_settled(settled)
    else:
        print("median goal not held to: the proxy's stop callbacks came late (lag p10 %.1f us > %.1f us); "
              "median error after warm-up %.2f us" % (p10, PROMPT_POLL_P10_US, pct(settled, .5)))


NCCL_TESTS_FACTOR = {"AllReduce": lambda n: 2.0 * (n - 1) / n, "AllGather": lambda n: (n - 1) / n,
                     "ReduceScatter": lambda n: (n - 1) / n, "AllToAll": lambda n: (n - 1) / n,
                     "AlltoAll": lambda n: (n - 1) / n, "Gather": lambda n: (n - 1) / n,
                     "Scatter": lambda n: (n - 1) / n}
PER_RANK_COUNT = {"AllGather", "ReduceScatter", "AllToAll", "AlltoAll", "Gather", "Scatter"}
DTYPE_SIZE = {"ncclInt8": 1, "ncclUint8": 1, "ncclInt32": 4, "ncclUint32": 4, "ncclInt64": 8, "ncclUint64": 8,
              "ncclFloat16": 2, "ncclFloat32": 4, "ncclFloat64": 8, "ncclBfloat16": 2, "ncclFloat8e4m3": 1,
              "ncclFloat8e5m2": 1}


def check_busbw(work):
    truth, recs, _ = simulate(work, ["--iters", "5"])
    nranks = {}
    for r in recs:
        if r["recordType"] == "lifecycle" and r["func"] == "ProfilerInit":
            nranks[(r["myPid"], r["commId"], r["rank"])] = r["details"]["nranks"]
    kids = collections.defaultdict(list)
    for e in events(recs, "ncclProfileKernelCh"):
        kids[e["parentObj"]].append(e)
    n_checked = collections.Counter()
    batches = collections.defaultdict(list)
    for e in events(recs, "ncclProfileColl") + events(recs, "ncclProfileP2p"):
        d = e["details"]
        n = nranks[(e["myPid"], e["commId"], e["rank"])]
        size = d["count"] * DTYPE_SIZE[d["dtype"]] * (n if e["func"] in PER_RANK_COUNT else 1)
        check(d.get("bytes") == size, "bytes %s, nccl-tests says %d: %s" % (d.get("bytes"), size, json.dumps(e)))
        basis = d.get("bwBasis")
        ch = kids[e["eventAddr"]]
        if basis == "batch":
            # its GPU interval is its kernel batch's: no bandwidth of its own, the batch's instead (below)
            check("algbwGBs" not in d and "busbwGBs" not in d, "a batched op with a bandwidth of its own: %s" %
                  json.dumps(e))
            batches[(e["myPid"], d["batch"])].append((e, n, ch))
            n_checked[(e["func"], basis)] += 1
            continue
        if basis == "gpu":
            dur = max(k["details"]["pTimerStop"] for k in ch) - min(k["details"]["pTimer"] for k in ch)
        elif basis == "exec":
            dur = ns(d["execStop"]) - ns(e["start"]["ts"])
        elif basis == "enqueue":
            dur = ns(e["duration"])
        else:
            raise Fail("no bandwidth: %s" % json.dumps(e))
        check(basis != "gpu" or len(ch) == d["channels"], "gpu basis with %d of %d KernelCh" % (len(ch), d["channels"]))
        alg = size / dur
        bus = alg * NCCL_TESTS_FACTOR.get(e["func"], lambda _: 1.0)(n)
        for key, want in (("algbwGBs", alg), ("busbwGBs", bus)):
            got = d[key]
            check(abs(got - want) <= 1e-9 * max(1.0, abs(want)), "%s %r, nccl-tests formula %r (bytes %d, %s "
                  "duration %d ns, nranks %d): %s" % (key, got, want, size, basis, dur, n, json.dumps(e)))
        n_checked[(e["func"], basis)] += 1
    for key, members in batches.items():
        # the batch's bytes over its interval (every KernelCh of its ops: one batch interval), nccl-tests factor
        d0 = members[0][0]["details"]
        size = sum(e["details"]["bytes"] for e, _, _ in members)
        ks = [k for _, _, ch in members for k in ch]
        dur = max(k["details"]["pTimerStop"] for k in ks) - min(k["details"]["pTimer"] for k in ks)
        funcs = {e["func"] for e, _, _ in members}
        n = members[0][1]
        alg = size / dur
        bus = alg * (NCCL_TESTS_FACTOR.get(funcs.pop(), lambda _: 1.0)(n) if len(funcs) == 1 else 1.0)
        check(all(e["details"]["batchOps"] == len(members) for e, _, _ in members) and d0["batchBytes"] == size,
              "batch %s: %d ops exported, %s; bytes %d: %s" % (key, len(members), d0["batchOps"], size, json.dumps(d0)))
        for k, want in (("batchAlgbwGBs", alg), ("batchBusbwGBs", bus)):
            check(abs(d0[k] - want) <= 1e-9 * max(1.0, want), "%s %r, its ops' bytes %d over %d ns say %r" %
                  (k, d0[k], size, dur, want))
    print("checked: %s; %d kernel batches" % (dict(n_checked), len(batches)))
    check(sum(n_checked.values()) == len(truth["coll"]), "checked %d ops, truth has %d" %
          (sum(n_checked.values()), len(truth["coll"])))


def check_links(work):
    """Send side: a ProxyStep's SendWait -> stop is the link's transfer time (the sender records SendWait once the
    receiver's buffer was granted and the isend posted), so MIN mode must recover the injected latency and
    bandwidth, for every channel's connection (each has a simulated link of its own) that has a fit. Only those
    are ranked ("slowestLinks"): a fit needs 3 sizes seen 4 times spanning 4x. Receive side: RecvWait is recorded
    when the irecv is posted, before the peer has the data, and the stop comes after the flush and after the GPU
    consumed it: that time is a receive wait, never shorter than the link's transfer (checked), not a link
    estimate; it is listed apart ("otherLinks") with the all-channel aggregates and the links without a fit."""
    # 20 iterations: the rarest step sizes (one per iteration) get 20 chances to run undisturbed
    truth, recs, summary = simulate(work, ["--iters", "20"], report=True)
    link = truth["link"][0]
    want_lat, want_bw = link["lat_us"], link["gbps"] / 8.0  # Gbit/s -> GB/s
    ranked, other = summary["slowestLinks"], summary["otherLinks"]
    for l in ranked:
        check(l["isSend"] and l["channel"] >= 0 and l["min"]["ok"] and l["noFit"] is None and
              l["min"]["points"] >= 3, "a ranked row that is no fitted send link: %s" % json.dumps(l))
    check([r["min"]["bandwidthGBs"] for r in ranked] == sorted(r["min"]["bandwidthGBs"] for r in ranked),
          "slowest links not ranked by bandwidth")
    for l in other:
        check(not l["isSend"] or l["channel"] < 0 or l["noFit"], "a fitted send link not ranked: %s" % json.dumps(l))
        check(l["noFit"] or l["min"]["ok"], "a row without a fit and without a reason: %s" % json.dumps(l))
        check(not l["noFit"] or l["minPerSize"], "a row without a fit shows no time per size: %s" % json.dumps(l))
    recvs = [l for l in other if not l["isSend"]]
    check(ranked and recvs, "the report ranks %d send links and lists %d receive rows" % (len(ranked), len(recvs)))
    # How well the simulator kept the link model, per (comm, rank, peer, step size): steps whose stop ran within
    # 150 ns of the model's completion time after a SendWait on a free link.
    xfer = collections.defaultdict(list)
    for x in truth["xfer"]:
        xfer[(int(x["comm"], 16), x["rank"], x["peer"])].append(x)
    bad, impossible = [], []
    # the all-channel rows too (not ranked: several connections), where a fit exists: the fastest step of
    # each size over every channel
    aggregates = [l for l in other if l["isSend"] and l["channel"] < 0 and l["min"]["ok"]]
    for l in ranked + aggregates:
        m = l["min"]
        lat, bw = m["latencyUs"], m["bandwidthGBs"]
        ok = abs(lat - want_lat) <= 0.05 * want_lat and abs(bw - want_bw) <= 0.05 * want_bw
        print("rank %d -> %d channel %d send MIN lat %.4f us (%+.2f %%) bw %.4f GB/s (%+.2f %%) (R2 %s, %d sizes); "
              "injected %.3f us %.3f GB/s %s" % (l["rank"], l["peer"], l["channel"], lat, 100 * (lat / want_lat - 1),
                                                bw, 100 * (bw / want_bw - 1), m["r2"], m["points"], want_lat, want_bw,
                                                "ok" if ok else "OFF"))
        xs = sorted(xfer.get((int(l["commId"], 16), l["rank"], l["peer"]), []), key=lambda x: x["bytes"])
        check(xs, "no truth xfer records for rank %d -> %d" % (l["rank"], l["peer"]))
        if not ok:
            bad.append(l)
            # the MIN fit uses the sizes seen at least 4 times: one of them whose fastest step on this channel
            # missed the model's time (the simulator ran none on time there: the truth's on-time counts are per
            # peer, not per channel) cannot give the model's time
            late = [p for p in l["minPerSize"] if p["n"] >= 4 and
                    p["minUs"] > 1.02 * (want_lat + p["bytes"] / (want_bw * 1e3))]
            if l["channel"] < 0 and any(x["steps"] >= 4 and x["on_time"] == 0 for x in xs):
                late = late or [{"bytes": x["bytes"], "minUs": float("nan"), "n": x["steps"]} for x in xs]
            if late:
                print("    no on-time step on this channel for: " + ", ".join(
                    "%d B (fastest %.3f us of %d)" % (p["bytes"], p["minUs"], p["n"]) for p in late))
                impossible.append(l)
    for key, xs in sorted(xfer.items()):
        print("    simulator rank %d -> %d: " % key[1:] + ", ".join("%d B %d/%d on time" % (x["bytes"], x["on_time"],
                                                                                         x["steps"]) for x in xs))
        agg = [l for l in other if l["isSend"] and l["channel"] < 0 and (int(l["commId"], 16), l["rank"], l["peer"])
               == key]
        chans = [l for l in ranked + other if l["isSend"] and l["channel"] >= 0 and
                 (int(l["commId"], 16), l["rank"], l["peer"]) == key]
        steps = sum(x["steps"] for x in xs)
        check(len(agg) == 1 and agg[0]["steps"] == steps, "rank %d -> %d: the all-channel row counts %s send steps, "
              "the simulator timed %d" % (key[1], key[2], [a["steps"] for a in agg], steps))
        check(sum(l["steps"] for l in chans) == steps, "rank %d -> %d: the channel rows count %d send steps, the "
              "simulator timed %d" % (key[1], key[2], sum(l["steps"] for l in chans), steps))
    for l in recvs:
        m = l["min"]
        print("rank %d <- %d channel %d recv: %s" % (l["rank"], l["peer"], l["channel"], "MIN lat %.4f us bw %.4f GB/s "
              "(R2 %s, %d sizes): receive wait, not a link estimate" % (m["latencyUs"], m["bandwidthGBs"], m["r2"],
                                                                       m["points"]) if m["ok"] else l["noFit"]))
        # every receive waits at least for the transfer: no size's fastest receive beats the link model
        for p in l["minPerSize"]:
            model_us = want_lat + p["bytes"] / (want_bw * 1e3)
            check(p["minUs"] >= 0.95 * model_us, "rank %d <- %d channel %d: a %d B receive in %.3f us, faster than "
                  "the link's %.3f us" % (l["rank"], l["peer"], l["channel"], p["bytes"], p["minUs"], model_us))
    wrong = [l for l in bad if l not in impossible]
    check(not wrong, "%d link(s) not recovered within 5 %%" % len(wrong))
    if impossible:
        print("%d row(s) not checked: the simulator ran no step of some size on time there (this machine could not "
              "keep a real-time schedule); see above" % len(impossible))
    if len(impossible) == len(ranked + aggregates):
        print("SKIP: no row could be checked")
        sys.exit(77)


def truth_clock_for(truth, comm, rank):
    """The truth gpu_clock record whose model reproduces this (comm, rank)'s pTimers."""
    ks = [k for k in truth["kernel"] if int(k["comm"], 16) == comm and k["rank"] == rank][:20]
    best, best_err = None, None
    for g in truth["gpu_clock"]:
        err = 0
        for k in ks:
            v = k["gpu_start"] * (1 + g["drift_ppm"] * 1e-6) + g["offset_ns"]
            err = max(err, abs(v - k["ptimer_start"]))
        if best is None or err < best_err:
            best, best_err = g, err
    return best, best_err


def check_clock_fields(work):
    truth, recs, _ = simulate(work, ["--iters", str(ITERS)])
    fins = [r for r in recs if r["recordType"] == "lifecycle" and r["func"] == "ProfilerFinalize"]
    checked = 0
    for r in fins:
        d = r["details"]
        if "gpuClockOffsetUs" not in d:
            continue
        g, fit_err = truth_clock_for(truth, r["commId"], r["rank"])
        check(g and fit_err < 4096, "no truth GPU clock reproduces comm %x rank %d" % (r["commId"], r["rank"]))
        ref_ns = ns(d["gpuClockRefUs"]) if "gpuClockRefUs" in d else ns(r["start"]["ts"])
        true_off_us = (g["offset_ns"] + g["drift_ppm"] * 1e-6 * ref_ns) / 1e3
        off_err = abs(d["gpuClockOffsetUs"] - true_off_us)
        drift_err = abs(d["gpuClockDriftPpm"] - g["drift_ppm"])
        bound = d["gpuClockErrorUs"]
        print("comm %x rank %d: offset %.3f us (true %.3f, off by %.3f, bound %s), drift %.4f ppm (true %.4f), "
              "%d samples" % (r["commId"], r["rank"], d["gpuClockOffsetUs"], true_off_us, off_err, bound,
                              d["gpuClockDriftPpm"], g["drift_ppm"], d.get("gpuClockSamples", -1)))
        check(bound is not None, "unbounded clock fit for comm %x rank %d" % (r["commId"], r["rank"]))
        # offsets near 1.8e18 ns: doubles carry ~0.25 us there, hence the small extra tolerance
        check(off_err <= bound + 0.5, "offset off by %.3f us, published bound %.3f us" % (off_err, bound))
        # the drift is only known as well as the offset at both ends of the fitted span
        init = [i for i in recs if i["recordType"] == "lifecycle" and i["func"] == "ProfilerInit" and
                i["myPid"] == r["myPid"] and i["commId"] == r["commId"] and i["rank"] == r["rank"]]
        span_us = r["start"]["ts"] - init[0]["start"]["ts"]
        check(drift_err * 1e-6 * span_us <= 2 * bound + 0.5, "drift off by %.4f ppm: %.3f us over the %.0f us run, "
              "bound %.3f us" % (drift_err, drift_err * 1e-6 * span_us, span_us, bound))
        checked += 1
    check(checked >= 2, "only %d finalize records carry gpuClock fields" % checked)
    # one fit per GPU: the split communicator shares its rank's GPU (truth `comm` records) and, in the default
    # scenario, its proxy thread, so its last fit is its GPU's, the same as the world communicator's there
    gpu_of = {(c["pid"], int(c["comm"], 16), c["rank"]): c["gpu"] for c in truth["comm"]}
    refs = collections.defaultdict(set)  # (pid, GPU) -> the reference points of its communicators' fits
    for r in fins:
        if "gpuClockOffsetUs" in r["details"]:
            refs[(r["myPid"], gpu_of.get((r["myPid"], r["commId"], r["rank"])))].add(r["details"].get("gpuClockRefUs"))
    shared = [k for k in refs if sum(1 for r in fins if "gpuClockOffsetUs" in r["details"] and (r["myPid"], gpu_of.get(
        (r["myPid"], r["commId"], r["rank"]))) == k) > 1]
    for pid, gpu in shared:
        check(len(refs[(pid, gpu)]) == 1, "GPU %s of pid %d: its communicators publish fits with references %s, "
              "not one GPU's fit" % (gpu, pid, sorted(refs[(pid, gpu)])))
    check(len(shared) >= 2, "no GPU with two communicators' fits (%d)" % len(shared))


def check_straggler(work):
    truth, recs, summary = simulate(work, ["--scenario", "straggler", "--iters", "20"], report=True)
    late = truth["straggler"]
    check(late, "the truth names no straggler")
    want = {(int(s["comm"], 16), s["rank"]): s["delay_ns"] for s in late}
    got = {int(c["commId"], 16): c for c in summary["crossRank"]}
    # arrival = kernel start: the truth's, and the converted one the report compares (export gpuStart)
    true_start = {(int(c["comm"], 16), c["func"], c["seq"], c["rank"]): c["t_start"] / 1e3
                  for c in truth["coll"] if c["peer"] < 0}
    conv = {}
    for r in recs:
        d = r.get("details", {})
        if r.get("type") == "ncclProfileColl" and d.get("gpuStart"):
            conv[(r["commId"], r["func"], d["seq"], r["rank"])] = (d["gpuStart"], d["gpuErrorUs"])
    for (comm, rank), delay in want.items():
        c = got.get(comm)
        check(c, "no cross-rank entry for comm %x; report: %s" % (comm, summary["crossRank"]))
        ranks = range(c["nranks"])
        compared = truly_last = ambiguous = 0
        gaps, bounds = [], []
        for f, seq in sorted({(k[1], k[2]) for k in true_start if k[0] == comm}):
            t = [true_start.get((comm, f, seq, r)) for r in ranks]
            g = [conv.get((comm, f, seq, r)) for r in ranks]
            if None in t or None in g:
                continue
            compared += 1
            order = sorted(ranks, key=lambda r: t[r])
            last, second = order[-1], order[-2]
            bound = g[last][1] + g[second][1]
            bounds.append(bound)
            if last == rank:
                truly_last += 1
                gaps.append(t[last] - t[second])
            # within the published error bounds the report may call it either way
            if t[last] - t[second] <= bound:
                ambiguous += 1
        reported = c["lastCounts"][rank] if rank < len(c["lastCounts"]) else 0
        true_gap = sum(gaps) / len(gaps) if gaps else 0.0
        print("comm %x: report says rank %d last in %d of %d, mean gap %.1f us; truth: rank %d late by %.1f us, "
              "last in %d (%d within the error bounds), mean gap %.1f us; bound sum max %.1f us" %
              (comm, c["lastRank"], reported, c["compared"], c["meanGapUs"], rank, delay / 1e3, truly_last,
               ambiguous, true_gap, max(bounds) if bounds else -1))
        check(compared >= 40 and c["compared"] == compared, "report compared %d collectives, the truth has %d" %
              (c["compared"], compared))
        # the simulator's threads run on a shared machine: its late rank is late most of the time, not always;
        # when the machine kept it from being late at all, there is no straggler to find
        if truly_last < 0.6 * compared:
            check(abs(reported - truly_last) <= ambiguous + 2, "rank %d last in %d collectives by the report, %d by "
                  "the truth" % (rank, reported, truly_last))
            print("SKIP: the simulator made rank %d last in only %d of %d (this machine could not keep its schedule)"
                  % (rank, truly_last, compared))
            sys.exit(77)
        check(c["lastRank"] == rank, "wrong straggler")
        # the report converts every GPU time again with the final fit, as the export does: where the
        # truth's order is clear of the bounds, both agree
        check(abs(reported - truly_last) <= ambiguous,
              "rank %d last in %d collectives by the report, %d by the truth" % (rank, reported, truly_last))
        # each gap is off by at most its two arrivals' bounds: the mean by at most their mean (plus the
        # points where the simulator and the plugin read the clock)
        allowed = (sum(bounds) / len(bounds) if bounds else 0.0) + CLOCK_TOL_US
        print("mean gap off by %.1f us, allowed %.1f us" % (c["meanGapUs"] - true_gap, allowed))
        check(abs(c["meanGapUs"] - true_gap) <= allowed,
              "mean gap %.1f us, true %.1f us, allowed +-%.1f us" % (c["meanGapUs"], true_gap, allowed))


# ---- real NCCL personalities: a pTimer can be another work's time ----

REAL_SEEDS = (1, 2)
# (nccl, scenario, options, prompt): prompt = launches and proxy polls on time, where the bounded conversions'
# median error must stay within SETTLED_ERR_US
REAL_CASES = {
    # 2.27 (v4): no launch events, receive samples only, 3-4 us median: not "prompt" in that sense
    "clock_real_default": [("2.30", "default", [], True), ("2.28", "default", [], True),
                           ("2.27", "default", [], False)],
    "clock_real_nocoll": [("2.29", "nocoll", ["--iters", "10"], False)],
    "clock_real_overrun": [("2.30", "overrun", ["--nodes", "1", "--kch-lag-ms", "200"], False),
                           ("2.30", "default", ["--async-depth", "8"], True)],
    "clock_real_timing": [("2.30", "default", ["--kch-lag-ms", "1000"], False),
                          ("2.30", "default", ["--gpu-drift-ppm", "50"], False),
                          ("2.30", "default", ["--timeslice-us", "200"], False)],
}


def own_kernels(truth):
    """Truth kernel records by kernel_truth's key, as lists: when pTimers are another work's, two records may
    share one key. Also every record of one task (comm, rank, op index, func, seq | peer)."""
    by_key, by_task = collections.defaultdict(list), collections.defaultdict(list)
    for k in truth["kernel"]:
        which = k["peer"] if k["func"] in ("Send", "Recv") else k["seq"]
        by_key[(int(k["comm"], 16), k["rank"], k["channel"], k["ptimer_start"], k["ptimer_stop"], k["func"],
                which)].append(k)
        by_task[(k["comm"], k["rank"], k["op"], k["func"], which)].append(k)
    return by_key, by_task


def containment(truth, recs):
    """Every bounded gpuStart/gpuStop of the export (KernelCh, Coll, P2p) against the op's own true times
    (truth kernel records: gpu_start/gpu_stop are the op's own work's). Returns counters and the errors."""
    by_key, by_task = own_kernels(truth)
    ops = {r["eventAddr"]: r for r in events(recs, "ncclProfileColl") + events(recs, "ncclProfileP2p")}
    st = collections.Counter()
    errs, outside = [], []
    task_of = {}
    for e in events(recs, "ncclProfileKernelCh"):
        d = e["details"]
        cand = by_key.get(kernel_key(e, ops), [])
        if len(cand) != 1:
            st["kch_unmatched" if not cand else "kch_ambiguous"] += 1
            continue
        t = cand[0]
        which = t["peer"] if t["func"] in ("Send", "Recv") else t["seq"]
        task_of[e["parentObj"]] = (t["comm"], t["rank"], t["op"], t["func"], which)
        own = t["own_start"] and t["own_stop"]
        st["kch"] += 1
        st["kch_own" if own else "kch_foreign"] += 1
        if "gpuStart" not in d or d.get("gpuErrorUs") is None:
            st["kch_unbounded"] += 1
            continue
        st["kch_bounded"] += 1
        if not own:
            st["kch_foreign_bounded"] += 1
        for side, true_ns in (("gpuStart", t["gpu_start"]), ("gpuStop", t["gpu_stop"])):
            if side not in d:
                continue
            err = abs(ns(d[side]) - true_ns) / 1e3
            errs.append(err)
            if not true_ns or err > d["gpuErrorUs"] + 0.001:
                outside.append("KernelCh %s off by %.3f us, bound %.3f us:\n    export %s\n    truth  %s" %
                               (side, err, d["gpuErrorUs"], json.dumps(e), json.dumps(t)))
    for addr, e in ops.items():
        d = e["details"]
        if "gpuStart" not in d:
            continue
        ks = by_task.get(task_of.get(addr), [])
        if not ks:
            st["op_unmatched"] += 1
            continue
        st["op"] += 1
        if d.get("gpuErrorUs") is None:
            st["op_unbounded"] += 1
            continue
        st["op_bounded"] += 1
        for side, true_ns in (("gpuStart", min(k["gpu_start"] for k in ks)),
                              ("gpuStop", max(k["gpu_stop"] for k in ks) if all(k["gpu_stop"] for k in ks) else 0)):
            err = abs(ns(d[side]) - true_ns) / 1e3
            errs.append(err)
            if not true_ns or err > d["gpuErrorUs"] + 0.001:
                outside.append("%s %s off by %.3f us, bound %.3f us:\n    export %s\n    truth  %s" %
                               (e["type"], side, err, d["gpuErrorUs"], json.dumps(e), json.dumps(ks)))
    return st, errs, outside


def check_clock_real(name, work):
    """Under NCCL releases whose pTimers can be another work's (2.27+: the 64-slot ring; 2.29+: AllGatherV
    Broadcasts; self send/recv; a GPU ahead of the proxy; late polls, drift, shared GPUs), every published
    conversion must contain the op's own true time, or be unbounded. Where launches and polls are prompt, the
    bounded ones stay within a few us (median)."""
    failures = []
    for nccl, scenario, opts, prompt in REAL_CASES[name]:
        for seed in REAL_SEEDS:
            args = ["--nccl", nccl, "--scenario", scenario, "--iters", "3", "--seed", str(seed)] + opts
            case_work = os.path.join(work, "%s-%s-%d" % (nccl, scenario, seed))
            truth, recs, summary = simulate(case_work, args, report=True)
            # the report tells the user why GPU times are gone, where drift took them, and only there
            drift_rows = sum(1 for c in summary["clocks"] if c["opsPtimerForeign"]["drift"])
            with open(os.path.join(case_work, "dump", "summary.txt")) as f:
                hint = "lost GPU times to work-counter drift" in f.read()
            check(hint == (drift_rows > 0), "%s: the drift hint is %s with %d drifted rows"
                  % (" ".join(args), "printed" if hint else "absent", drift_rows))
            check(drift_rows > 0 or nccl != "2.30" or scenario != "default",
                  "%s: no drift, though 2.30 runs the default scenario's Broadcasts without a Coll" % " ".join(args))
            st, errs, outside = containment(truth, recs)
            conv = st["kch_bounded"] + st["op_bounded"]
            med = pct(errs, .5) if errs else float("nan")
            print("%s: KernelCh %d (%d of another work's), bounded %d, unbounded %d; ops %d, bounded %d; "
                  "outside their bound: %d of %d; error median %.2f us, p99 %.2f us%s" %
                  (" ".join(args), st["kch"], st["kch_foreign"], st["kch_bounded"], st["kch_unbounded"], st["op"],
                   st["op_bounded"], len(outside), conv, med, pct(errs, .99) if errs else float("nan"),
                   "; unmatched %d ambiguous %d" % (st["kch_unmatched"], st["kch_ambiguous"])
                   if st["kch_unmatched"] or st["kch_ambiguous"] else ""))
            for o in outside[:3]:
                print("  " + o)
            check(st["kch"] > 0, "no KernelCh matched the truth (%s)" % dict(st))
            if outside:
                failures.append("%s: %d of %d conversions outside their bound" % (" ".join(args), len(outside), conv))
            # prompt launches by the scenario, prompt polls by this run (see check_gpu_clock_v4)
            p10 = poll_lag_p10_us(truth)
            if prompt and errs and med > SETTLED_ERR_US and p10 <= PROMPT_POLL_P10_US:
                failures.append("%s: median error %.2f us > %.1f us" % (" ".join(args), med, SETTLED_ERR_US))
            elif prompt and errs and med > SETTLED_ERR_US:
                print("  median goal not held to: the proxy's stop callbacks came late (lag p10 %.1f us > %.1f us)"
                      % (p10, PROMPT_POLL_P10_US))
    check(not failures, "; ".join(failures))


BATCH_TOL = 0.02  # a batch's busbw within 2 % of the truth's figure


BATCH_CASES = {
    "batch": (("2.30", "batch", []), ("2.28", "batch", []), ("2.28", "default", [])),
    # KernelCh callbacks seen up to 150 ms late, each op's its own lag: a batch's ops complete far apart
    "batch_lag": (("2.30", "batch", ["--kch-lag-ms", "150"]),),
}


def check_batch(work, cases=BATCH_CASES["batch"]):
    """Ops that shared one kernel batch (NCCL 2.27+ gives every work of a batch the batch's interval) are
    reported as the batch: batchOps, batchBytes, and the batch's bandwidth = its bytes over its interval, which
    must be the truth's batch figure (bytes / (t_end - t_start)) within 2 %, beyond the timer's quantum; never an
    op's bytes over the batch's time. Ops alone in their batch are not batched. The report's batch rows too."""
    failures = []
    for nccl, scenario, extra in cases:
        for seed in REAL_SEEDS:
            args = ["--nccl", nccl, "--scenario", scenario, "--iters", "3", "--seed", str(seed)] + extra
            truth, recs, summary = simulate(os.path.join(work, "%s-%s-%d" % (nccl, scenario, seed)), args,
                                            report=True)
            gran = truth["gpu_clock"][0]["gran_ns"]
            by_key, _ = own_kernels(truth)
            tbatch = {(b["comm"], b["rank"], b["op"], b["batch"]): b for b in truth["batch"]}
            ops = {r["eventAddr"]: r for r in events(recs, "ncclProfileColl") + events(recs, "ncclProfileP2p")}
            seen, errs, st = set(), [], collections.Counter()
            within = beyond_quantum = 0
            for e in events(recs, "ncclProfileKernelCh"):
                op = ops.get(e["parentObj"])
                cand = by_key.get(kernel_key(e, ops), [])
                if not op or len(cand) != 1 or op["eventAddr"] in seen:
                    continue
                seen.add(op["eventAddr"])
                k, d = cand[0], op["details"]
                b = tbatch[(k["comm"], k["rank"], k["op"], k["batch"])]
                if "gpuErrorUs" in d and d["gpuErrorUs"] is None:
                    st["pTimers not its own"] += 1
                    continue
                if b["tasks"] < 2:
                    st["alone"] += 1
                    if d.get("bwBasis") == "batch":
                        failures.append("%s: an op alone in its batch reported batched: %s" % (" ".join(args), json.dumps(op)))
                    continue
                st["batched"] += 1
                if d.get("bwBasis") != "batch" or d.get("batchOps") != b["tasks"]:
                    failures.append("%s: an op of a %d-op batch reported %s: %s\n  truth %s" %
                                    (" ".join(args), b["tasks"], d.get("batchOps"), json.dumps(op), json.dumps(b)))
                    continue
                # the simulator's task bytes are not multiples of the datatype: count * size may be a few bytes short
                check(abs(d["batchBytes"] - b["bytes"]) <= 4 * b["tasks"], "batch bytes %d, truth %d" %
                      (d["batchBytes"], b["bytes"]))
                want = b["bytes"] / (b["t_end"] - b["t_start"])
                err = abs(d["batchAlgbwGBs"] / want - 1)
                # the pTimers are readings of a timer that ticks every gran ns: each end is that much uncertain
                tol = BATCH_TOL + 2.0 * gran / (b["t_end"] - b["t_start"])
                errs.append(err)
                within += err <= BATCH_TOL
                beyond_quantum += err > tol
                if err > tol:
                    failures.append("%s: batch bandwidth %.4f GB/s, truth %.4f (%.2f %%):\n  export %s\n  truth %s" %
                                    (" ".join(args), d["batchAlgbwGBs"], want, 100 * err, json.dumps(op),
                                     json.dumps(b)))
            median = pct(errs, .5) if errs else 0
            print("%s: %s; batch bandwidth error median %.2f %%, max %.2f %%, %d of %d within 2 %%, %d beyond "
                  "2 %% plus the timer's quantum" % (" ".join(args), dict(st), 100 * median,
                                                     100 * max(errs) if errs else 0, within, len(errs),
                                                     beyond_quantum))
            if scenario == "batch":
                check(st["batched"] > 0, "no batched op in the batch scenario")
                # Each batch is held to 2 % plus its ends' quantum above. A short batch's quantum share is
                # large, and how many batches are short depends on the run's timing (a loaded machine
                # stretches some and not others), so a count "within a flat 2 %" is no bound the data
                # supports; a bias would move the median, which is held to half the tolerance.
                if median > BATCH_TOL / 2:
                    failures.append("%s: batch bandwidth error median %.2f %%, over %.1f %%" %
                                    (" ".join(args), 100 * median, 100 * BATCH_TOL / 2))
            # the report: a batch row per (function, batch bytes, ops per batch), time = mean batch interval
            rows = [r for r in summary["collectives"] if r.get("batchOps", 0) >= 2]
            if scenario == "batch":
                check(rows, "the report has no batch rows: %s" % summary["collectives"])
            for r in rows:
                spans = [b["t_end"] - b["t_start"] for b in truth["batch"] if b["tasks"] == r["batchOps"]
                         and abs(b["bytes"] - r["bytes"]) <= 4 * b["tasks"]]
                if not spans:  # a batch split or merged: its ops and bytes are no batch of the truth's
                    failures.append("%s: report row %s: no batch of the truth has its ops and bytes" %
                                    (" ".join(args), json.dumps(r)))
                    continue
                ours = r["bytes"] / (r["timeUs"] * 1e3)
                # the report's time is the mean batch interval: compare with the truth's mean interval
                tmean = statistics.mean(spans)
                err = abs(ours / (r["bytes"] / tmean) - 1)
                print("  report: %s %d B, %d ops per batch, %d calls: algbw %.4f GB/s, truth %.4f (%.2f %%)" %
                      (r["func"], r["bytes"], r["batchOps"], r["calls"], ours, r["bytes"] / tmean, 100 * err))
                if err > BATCH_TOL + 2.0 * gran / tmean:
                    failures.append("%s: report row %s: %.2f %% off" % (" ".join(args), json.dumps(r), 100 * err))
    check(not failures, "\n".join(failures[:10]))


def check_kernel_phase(work):
    truth, recs, _ = simulate(work, ["--nccl", "2.31", "--iters", "4", "--user-tags", "5"])
    tph = {}
    for t in truth["phase"]:
        tph[(int(t["comm"], 16), t["rank"], t["channel"], t["ptimer_start"], t["ptimer_stop"])] = t
    kch = {e["eventAddr"]: e for e in events(recs, "ncclProfileKernelCh")}
    phases = events(recs, "ncclProfileKernelPhase")
    check(phases, "no KernelPhase events")
    bounded = 0
    for e in phases:
        d = e["details"]
        check(e["parentObj"] in kch, "KernelPhase whose parent is no KernelCh: %s" % json.dumps(e))
        t = tph.get((e["commId"], e["rank"], d["channel"], d["pTimer"], d.get("pTimerStop")))
        check(t, "KernelPhase without a truth phase: %s" % json.dumps(e))
        check(d["phaseId"] == t["phase"] and d["phaseName"] == t["name"], "phase %s, truth %s" % (d, t))
        check("gpuStart" in d and "gpuStop" in d, "KernelPhase without gpuStart/gpuStop: %s" % json.dumps(e))
        if d["gpuErrorUs"] is None:
            continue
        bounded += 1
        for side, true_ns in (("gpuStart", t["gpu_start"]), ("gpuStop", t["gpu_stop"])):
            err = abs(ns(d[side]) - true_ns) / 1e3
            check(err <= d["gpuErrorUs"] + 0.001, "%s off by %.3f us, bound %.3f us:\n  export %s\n  truth  %s" %
                  (side, err, d["gpuErrorUs"], json.dumps(e), json.dumps(t)))
    check(len(phases) == len(truth["phase"]), "%d KernelPhase exported, the truth has %d" %
          (len(phases), len(truth["phase"])))
    # before the clock fit has samples, or with pTimers that may be another work's, no bound is published
    kbounded = sum(1 for e in kch.values() if e["details"].get("gpuErrorUs") is not None)
    check(bounded > 0, "no KernelPhase conversion bounded (KernelCh: %d of %d)" % (kbounded, len(kch)))
    # userTag: the calls' tags (truth start records) against the exported Coll/CollApi/P2p details
    for typ in ("Coll", "CollApi", "P2p"):
        want = collections.Counter(t.get("tag", 0) for t in truth["start"] if t["type"] == typ and not t["handle_null"])
        got = collections.Counter(e["details"].get("userTag", 0) for e in events(recs, "ncclProfile" + typ))
        check(want == got, "%s userTag: export %s, truth %s" % (typ, dict(got), dict(want)))
        check(len(want) > 1, "%s: the run has no tagged calls: %s" % (typ, dict(want)))
    print("KernelPhase: %d exported, %d bounded (KernelCh: %d of %d); tags checked" %
          (len(phases), bounded, kbounded, len(kch)))


CHECKS = {"exec_end": check_exec_end, "kernel_phase": check_kernel_phase, "gpu_clock": check_gpu_clock, "gpu_clock_sampled": check_gpu_clock_sampled,
          "gpu_clock_v4": check_gpu_clock_v4, "busbw": check_busbw, "links": check_links,
          "clock_fields": check_clock_fields, "straggler": check_straggler}
CHECKS.update({name: (lambda work, name=name: check_batch(work, BATCH_CASES[name])) for name in BATCH_CASES})
CHECKS.update({name: (lambda work, name=name: check_clock_real(name, work)) for name in REAL_CASES})


def main():
    return run_named(CHECKS, __doc__, sys.argv)


if __name__ == "__main__":
    sys.exit(main())
