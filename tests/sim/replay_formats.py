#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""--replay on recordings in the shapes the per-process JSONL recorders write (docs/simulator.md, "Replay").

Usage: replay_formats.py BUILD_DIR TEST. A simulator run recorded by ncclscope and exported is rewritten
into the recorder's shape (rewrite()): lifecycle lines with recordType "lifecycle", "event" or none,
pointers as "0x7f..." strings and "null", `ctx` and unknown fields on event lines, odd gpuUuid strings,
no derived fields, PXN events without communicator fields, and CUPTI kernel records made from the
simulator's truth (the true kernel intervals) on a clock of their own. The recording run's truth is the
reference for the GPU truth the replay writes; the replay's truth grades the plugin's GPU times.
"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import temp_under_one_dir  # noqa: E402

temp_under_one_dir("nsfmt-")

BUILD = sys.argv[1]
SIM = os.path.join(BUILD, "ncclscope-sim")
NCCLSCOPE = os.path.join(BUILD, "ncclscope")
PLUGIN = os.path.join(BUILD, "libnccl-profiler-ncclscope.so")
SPY = os.path.join(BUILD, "libnccl-profiler-recv6.so")
FAILS = []
# the CUPTI records' own clock: recording clock - CUPTI_OFFSET_NS (a foreign origin, as a GPU clock has)
CUPTI_OFFSET_NS = 1_234_567_890_123
DERIVED = {"bytes", "execStop", "gpuStart", "gpuStop", "gpuErrorUs", "algbwGBs", "busbwGBs", "bwBasis",
           "pTimerStop", "transSize", "netType", "device", "wr_id", "opcode", "qpNum", "length", "fd", "op"}
ODD_UUIDS = ["", "zz-not-hex-at-all", "GPU-" + "9f" * 60, "3f2a9c1e5b7d1e0fa9c24d6e8f0a1b2c\u00e9", "GPU-\\\"q"]


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append(f"FAIL {what}: got {got!r} want {want!r}")
        print(FAILS[-1])
    return cond


def eq(got, want, what):
    return check(got == want, what, got, want)


def record(args):
    """A simulator run (ideal NCCL) recorded by ncclscope, exported; with the run's truth."""
    tmp = tempfile.mkdtemp(prefix="simfmt")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=os.path.join(tmp, "dump"), NCCLSCOPE_EVENT_MASK="all",
               NCCLSCOPE_NO_CUDA="1")
    env.pop("NCCL_PROFILER_PLUGIN", None)
    truth = os.path.join(tmp, "truth.jsonl")
    p = subprocess.run([SIM, "--plugin", PLUGIN, "--nccl", "ideal", "--truth", truth] + args, env=env,
                       capture_output=True, text=True, timeout=100)
    eq(p.returncode, 0, f"recording run {args} (stderr: {p.stderr[-300:]})")
    out = os.path.join(tmp, "rec.jsonl")
    p = subprocess.run([NCCLSCOPE, "export", os.path.join(tmp, "dump"), "--format", "jsonl", "-o", out],
                       capture_output=True, text=True, timeout=100)
    eq(p.returncode, 0, f"export of the recording (stderr: {p.stderr[-300:]})")
    return tmp, [json.loads(l) for l in open(out)], [json.loads(l) for l in open(truth)]


def us(ns):
    """ns -> the recorder's microseconds with three decimals (a JSON number, exact)."""
    return json.loads("%d.%03d" % divmod(ns, 1000)) if ns >= 0 else -us(-ns)


def true_kernels(truth):
    """One kernel per (comm, rank, op): the union of its batches' intervals, in launch order per (comm, rank)."""
    by = collections.defaultdict(list)
    launch = {}
    for t in truth:
        if t["kind"] == "batch":
            by[(t["comm"], t["rank"], t["op"])].append(t)
        if t["kind"] == "coll":
            k = (t["comm"], t["rank"], t["op"])
            launch[k] = min(launch.get(k, t["t_launch"]), t["t_launch"])
    ks = collections.defaultdict(list)
    for (comm, rank, op), bs in by.items():
        ks[(int(comm, 16), rank)].append({"op": op, "start": min(b["t_start"] for b in bs),
                                          "end": max(b["t_end"] for b in bs), "launch": launch[(comm, rank, op)]})
    for v in ks.values():
        v.sort(key=lambda k: k["launch"])
    return ks


def rewrite(recs, truth, lifecycle="none", cupti=False, cupti_offset=CUPTI_OFFSET_NS):
    """The export rewritten in the recorder's shape. lifecycle: "none" (no recordType), "event", "lifecycle"."""
    addr = {}

    def ptr(a):
        if a is None:
            return "null"
        if a not in addr:
            addr[a] = "0x7f%010x" % (0x3a5c00 + 0x40 * len(addr))
        return addr[a]

    uuid = {}
    out, launches = [], collections.defaultdict(list)
    for r in recs:
        r = dict(r)
        rt = r["recordType"]
        if rt == "lifecycle":
            d = r["details"]
            if r["func"] == "ProfilerInit":
                r["details"] = {"nranks": d["nranks"], "commName": d["commName"] or "", "eventMask": 4095}
            else:
                r["details"] = {"totalDuration": 1.0, "poolChunks": 1, "poolSlots": 1024}
            r.pop("myPid", None)
            if lifecycle == "none":
                del r["recordType"]
            else:
                r["recordType"] = lifecycle
            r["gpuUuid"] = uuid.setdefault((r["commId"], r["rank"]), ODD_UUIDS[len(uuid) % len(ODD_UUIDS)])
        elif rt == "event":
            for k in ("myPid", "parentLost", "incomplete", "incompleteReason", "func"):
                r.pop(k, None)
            r["details"] = {k: v for k, v in r["details"].items() if k not in DERIVED}
            if "isSend" in r["details"]:
                r["details"]["isSend"] = bool(r["details"]["isSend"])
            for k in ("parentGroup",):
                if k in r["details"]:
                    r["details"][k] = ptr(r["details"][k])
            r["eventAddr"] = ptr(r["eventAddr"])
            if r.get("isPxn"):
                for k in ("commId", "rank", "gpuUuid"):
                    r.pop(k, None)  # the recorder knows no communicator for work done for another process
            else:
                r["parentObj"] = ptr(r["parentObj"])
                r["ctx"] = "0x55d0%08x" % (r["rank"] + 1)
                r["gpuUuid"] = uuid.get((r["commId"], r["rank"]), "")
            r["tag"] = {"written": "by a recorder", "n": [1, 2]}  # a field no reader knows
            if r["type"] == "ncclProfileKernelLaunch":
                launches[(r["commId"], r["rank"])].append(r)
        elif rt == "state":
            r["eventAddr"] = ptr(r["eventAddr"])
        out.append(r)
    kernels = []
    if cupti:
        corr = 1000
        tk = true_kernels(truth)
        for key, ls in launches.items():
            ls.sort(key=lambda e: e["start"]["ts"])
            ks = tk.get(key, [])
            eq(len(ks), len(ls), f"true kernels and recorded launches of {key}")
            for i, (launch, k) in enumerate(zip(ls, ks)):
                corr += 1
                launch["extCorrId"] = corr
                kernels.append(dict(k, ext=corr, comm=key[0], rank=key[1]))
                pid = launch["start"]["pid"]
                out.append({"recordType": "cuptiActivity", "type": "KERNEL", "extCorrId": corr, "corrId": 7 * corr,
                            "gpuUuid": ODD_UUIDS[i % len(ODD_UUIDS)], "deviceId": key[1],
                            "start": {"ts": us(k["start"] - cupti_offset), "pid": pid, "tid": pid + 99},
                            "stop": {"ts": us(k["end"] - cupti_offset), "pid": pid, "tid": pid + 99},
                            "duration": us(k["end"] - k["start"]), "name": "ncclDevKernel_Generic_4",
                            "stream": "0x%x" % (16 + key[1]),
                            "details": {"gridX": 2, "gridY": 1, "gridZ": 1, "blockX": 544, "blockY": 1, "blockZ": 1}})
        pid = out[-1]["start"]["pid"] if kernels else 1
        out.append({"recordType": "cuptiActivity", "type": "MEMCPY", "extCorrId": 0, "corrId": 3, "deviceId": 0,
                    "start": {"ts": 1.0, "pid": pid, "tid": pid}, "stop": {"ts": 2.0, "pid": pid, "tid": pid},
                    "duration": 1.0, "name": "HtoD", "size": 64})
    return out, kernels


def write(tmp, name, lines):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        for l in lines:
            f.write((l if isinstance(l, str) else json.dumps(l, separators=(",", ":"))) + "\n")
    return path


def replay(path, plugin=SPY, env=None, expect_rc=0, args=()):
    tmp = tempfile.mkdtemp(prefix="simfmtr")
    e = dict(os.environ, NCCLSCOPE_REC_OUT=os.path.join(tmp, "rec"))
    e.pop("NCCL_PROFILER_PLUGIN", None)
    e.update(env or {})
    truth = os.path.join(tmp, "truth.jsonl")
    p = subprocess.run([SIM, "--plugin", plugin, "--truth", truth, "--replay", path] + list(args), env=e,
                       capture_output=True, text=True, timeout=200)
    if expect_rc is not None:
        eq(p.returncode, expect_rc, f"exit status of the replay of {os.path.basename(path)} "
           f"(stderr: {p.stderr[-500:]})")
    spy = collections.Counter()
    for f in glob.glob(os.path.join(tmp, "rec.*")):
        for l in open(f):
            r = json.loads(l)
            if r["ev"] == "start":
                spy[r["type"]] += 1
    tr = [json.loads(l) for l in open(truth)] if os.path.exists(truth) else []
    return p, spy, tr, tmp


T = {"Group": 1, "Coll": 2, "P2p": 4, "ProxyOp": 8, "ProxyStep": 16, "ProxyCtrl": 32, "KernelCh": 64,
     "NetPlugin": 128, "GroupApi": 256, "CollApi": 512, "P2pApi": 1024, "KernelLaunch": 2048, "CeColl": 4096,
     "CeSync": 8192, "CeBatch": 16384}


def want_starts(lines):
    c = collections.Counter()
    for r in lines:
        if isinstance(r, dict) and r.get("recordType") == "event" and r["type"] != "ProfilerLifecycle":
            c[T[r["type"][len("ncclProfile"):]]] += 1
    return c


def replays_all(lines, path, label):
    p, spy, tr, _ = replay(path)
    check("0 skipped" in p.stderr, f"{label}: nothing is skipped", p.stderr[-500:], "0 skipped")
    eq(dict(spy), dict(want_starts(lines)), f"{label}: every recorded event is started, by type")
    inits = sum(1 for r in lines if isinstance(r, dict) and r.get("func") == "ProfilerInit")
    eq(sum(t["kind"] == "init" for t in tr), inits, f"{label}: every communicator is initialised")
    eq(sum(t["kind"] == "finalize" for t in tr), inits, f"{label}: and finalized")
    return p, tr


def t_lifecycle():
    """Lifecycle lines with recordType none, "event" and "lifecycle" (v5 event set: no CE types)."""
    tmp, recs, truth = record(["--iters", "1", "--fast"])
    check(not any(r.get("type", "").startswith("ncclProfileCe") for r in recs), "a v5 event set has no CE events")
    for variant in ("none", "event", "lifecycle"):
        lines, _ = rewrite(recs, truth, lifecycle=variant)
        replays_all(lines, write(tmp, f"lifecycle_{variant}.jsonl", lines), f"lifecycle recordType {variant}")


def t_fields():
    """ctx and unknown fields on every event line, odd gpuUuid strings, pointers "null", PXN events without
    communicator fields: all of it replayed, nothing skipped."""
    tmp, recs, truth = record(["--iters", "1", "--fast", "--scenario", "pxn", "--procs", "2", "--ranks-per-proc",
                               "2"])
    lines, _ = rewrite(recs, truth)
    check(any(r.get("isPxn") and "commId" not in r for r in lines), "the recording has PXN events without commId")
    check(all(r.get("ctx") for r in lines if r.get("recordType") == "event" and not r.get("isPxn")),
          "every event line has ctx")
    check({r.get("gpuUuid") for r in lines if r.get("func") == "ProfilerInit"} >= set(ODD_UUIDS[:4]),
          "the odd gpuUuid strings are in the recording")
    p, tr = replays_all(lines, write(tmp, "fields.jsonl", lines), "extra fields and odd gpuUuid")
    roots = sum(1 for r in lines if r.get("recordType") == "event" and r.get("parentObj") == "null")
    check(roots > 0 and "parent not in the recording" not in p.stderr, "a parentObj \"null\" is no parent",
          p.stderr[-300:], f"{roots} roots, none counted missing")


def t_v6():
    """The v6 event set (CE collectives) in the recorder's shape."""
    tmp, recs, truth = record(["--iters", "1", "--fast", "--scenario", "ce"])
    lines, _ = rewrite(recs, truth)
    ce = [r for r in lines if r.get("type", "").startswith("ncclProfileCe")]
    check(len({r["type"] for r in ce}) == 3, "the recording has CeColl, CeSync and CeBatch events",
          sorted({r["type"] for r in ce}))
    replays_all(lines, write(tmp, "v6.jsonl", lines), "v6 event set")


def t_damaged():
    """A damaged line in the middle: named by file and line, everything else replayed."""
    tmp, recs, truth = record(["--iters", "1", "--fast"])
    lines, _ = rewrite(recs, truth)
    mid = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].get("type") == "ncclProfileProxyStep")
    damaged = list(lines)
    text = json.dumps(lines[mid], separators=(",", ":"))
    damaged[mid] = text[: len(text) // 2] + "\x00garbage" + text[len(text) // 2 + 5:]
    # records of kinds no replay knows, after the damaged line: skipped by name, not by accident
    damaged[mid + 1:mid + 1] = [{"recordType": "mystery", "ts": 1.0}, {"note": "a line without recordType"}]
    path = write(tmp, "damaged.jsonl", damaged)
    p, spy, tr, _ = replay(path)
    where = f"damaged.jsonl:{mid + 1}"
    check(where in p.stderr and "not JSON" in p.stderr, "the replay names the damaged line by file and line",
          p.stderr[-500:], where)
    named = "unknown recordType (mystery: 1, (none): 1)"
    check(named in p.stderr, "the replay names the unknown recordTypes it skipped", p.stderr[-500:], named)
    want = want_starts(lines)
    want[T["ProxyStep"]] -= 1
    eq(dict(spy), dict(want), "every event of the other lines is replayed")


def clock_of(tr):
    return {t["rec_pid"]: t for t in tr if t["kind"] == "gpu_kernel_clock"}


def t_cupti():
    """CUPTI kernel records: GPU truth on the replay's clock within the bound the recording's anchors give,
    checked against the true kernel intervals of the recording run; a MEMCPY record named as skipped."""
    tmp, recs, truth = record(["--iters", "2", "--fast"])
    for offset, label in ((CUPTI_OFFSET_NS, "CUPTI clock"), (0, "converted by the recorder")):
        lines, kernels = rewrite(recs, truth, cupti=True, cupti_offset=offset)
        p, spy, tr, _ = replay(write(tmp, "cupti.jsonl", lines))
        check("CUPTI activity other than a kernel" in p.stderr, f"{label}: the MEMCPY record is named as skipped",
              p.stderr[-400:])
        check("unknown recordType" not in p.stderr, f"{label}: CUPTI lines are not unknown records", p.stderr[-400:])
        g = [t for t in tr if t["kind"] == "gpu_kernel" and t["source"] == "recording"]
        eq(len(g), len(kernels), f"{label}: one gpu_kernel truth line per CUPTI kernel record")
        clocks = clock_of(tr)
        for pid, c in clocks.items():
            check(c["error_ns"] is not None and c["consistent"], f"{label}: pid {pid}: the anchors bound the offset",
                  c)
            check(abs(c["offset_ns"] - offset) <= (c["error_ns"] or 0), f"{label}: pid {pid}: the fitted offset "
                  "holds the true one within its bound", (c["offset_ns"], c["error_ns"]), offset)
        true = {k["ext"]: k for k in kernels}
        errs = []
        for t in g:
            k = true.get(t["ext_corr_id"])
            if not check(k and t["error_ns"] is not None, "truth kernel matched and bounded", t):
                continue
            eq((int(t["comm"], 16), t["rank"]), (k["comm"], k["rank"]), "the kernel's communicator and rank")
            err = max(abs(t["rec_start_ns"] - k["start"]), abs(t["rec_end_ns"] - k["end"]))
            errs.append(err)
            check(err <= t["error_ns"], f"{label}: kernel within its stated bound on the recording's clock",
                  (err, t["error_ns"]))
        if errs:
            print(f"{label}: {len(errs)} kernels, mapping error max {max(errs)} ns, bound "
                  f"{sorted(t['error_ns'] for t in g)[len(g) // 2]} ns (median)")
    # without KernelCh (a mask without them) nothing bounds the offset from above: no bound is claimed
    lines, kernels = rewrite([r for r in recs if r.get("type") != "ncclProfileKernelCh"], truth, cupti=True)
    p, spy, tr, _ = replay(write(tmp, "cupti_nokch.jsonl", lines))
    clocks = clock_of(tr)
    check(clocks and all(c["error_ns"] is None and c["upper_anchors"] == 0 for c in clocks.values()),
          "without KernelCh the offset is published unbounded", list(clocks.values())[:1])
    check(all(t["error_ns"] is None for t in tr if t["kind"] == "gpu_kernel"), "and so is every kernel")


def events(recs, type_):
    return [r for r in recs if r.get("recordType") == "event" and r["type"] == type_]


def t_cupti_grade():
    """A replayed recording with CUPTI records grades the plugin's GPU times: every KernelCh gpuStart/gpuStop of
    ncclscope's replay export lies in its kernel's truth interval, within the plugin's bound + the truth's
    bound + the replay's pacing error (calls at most early_ns early, at most the largest lateness late)."""
    tmp, recs, truth = record(["--iters", "2", "--fast"])
    lines, kernels = rewrite(recs, truth, cupti=True)
    dump = os.path.join(tmp, "again")
    env = {"NCCLSCOPE_DUMP_DIR": dump, "NCCLSCOPE_EVENT_MASK": "all", "NCCLSCOPE_NO_CUDA": "1"}
    p, spy, tr, _ = replay(write(tmp, "cupti.jsonl", lines), plugin=PLUGIN, env=env)
    out = os.path.join(tmp, "again.jsonl")
    x = subprocess.run([NCCLSCOPE, "export", dump, "--format", "jsonl", "-o", out], timeout=100, capture_output=True,
                       text=True)
    if not eq(x.returncode, 0, f"export of the replay's recording (stderr: {x.stderr[-300:]})"):
        return
    again = [json.loads(l) for l in open(out)]
    rp = next(t for t in tr if t["kind"] == "replay")
    late = max(t["max_late_ns"] for t in tr if t["kind"] == "replay_lateness")
    g = collections.defaultdict(list)
    for t in tr:
        if t["kind"] == "gpu_kernel" and t["source"] == "recording":
            g[(int(t["comm"], 16), t["rank"])].append(t)
    for v in g.values():
        v.sort(key=lambda t: t["ts_ns"])
    # replayed launches in order per (comm, rank) <-> truth kernels in order; KernelCh -> Coll/P2p -> API -> GroupApi
    by = {r["eventAddr"]: r for r in again if r.get("recordType") == "event"}
    kernel_of_group = {}
    launches = collections.defaultdict(list)
    for r in events(again, "ncclProfileKernelLaunch"):
        launches[(r["commId"], r["rank"])].append(r)
    for key, ls in launches.items():
        ls.sort(key=lambda r: r["start"]["ts"])
        eq(len(ls), len(g.get(key, [])), f"replayed launches and truth kernels of {key}")
        for l, t in zip(ls, g.get(key, [])):
            kernel_of_group[(l["parentObj"], key)] = t

    def group_of(e):
        for _ in range(4):
            e = by.get(e.get("parentObj"))
            if not e or e["type"] == "ncclProfileGroupApi":
                return e
        return None

    graded, unbounded, errs, slack, firsts = 0, 0, [], [], collections.defaultdict(list)
    for e in events(again, "ncclProfileKernelCh"):
        d = e["details"]
        grp = group_of(e)
        t = kernel_of_group.get((grp["eventAddr"] if grp else None, (e["commId"], e["rank"])))
        if not check(t, "a KernelCh of the replay has its truth kernel", e):
            continue
        if d.get("gpuErrorUs") is None:
            unbounded += 1  # the plugin claims nothing for it
            continue
        tol = d["gpuErrorUs"] * 1e3 + t["error_ns"] + rp["early_ns"] + late + 1
        start, stop = d["gpuStart"] * 1e3, d["gpuStop"] * 1e3
        check(t["ts_ns"] - tol <= start and stop <= t["ts_ns"] + t["dur_ns"] + tol,
              "the plugin's KernelCh interval lies in its kernel's truth interval",
              (start, stop, d["gpuErrorUs"]), (t["ts_ns"], t["dur_ns"], t["error_ns"], tol))
        firsts[id(t)].append((start, t, tol, d["gpuErrorUs"] * 1e3 + t["error_ns"]))
        graded += 1
    for lst in firsts.values():
        start, t, tol, bounds = min(lst, key=lambda x: x[0])
        errs.append(abs(start - t["ts_ns"]))
        slack.append(bounds + rp["early_ns"])
        check(errs[-1] <= tol, "the first channel's start is the kernel's start", errs[-1], tol)
    check(graded > 0, "KernelCh with a published bound are graded", graded, "> 0")
    errs.sort()
    slack.sort()
    if errs:
        # the typical error holds without the worst lateness of the run: the bounds and the early calls only
        check(errs[len(errs) // 2] <= slack[len(slack) // 2], "median kernel start error within the median of "
              "the plugin's + the truth's bound + early_ns", errs[len(errs) // 2], slack[len(slack) // 2])
        print(f"graded {graded} KernelCh ({unbounded} published unbounded) of {len(errs)} of {len(kernels)} kernels; "
              f"kernel start error median {errs[len(errs) // 2]:.0f} ns, max {errs[-1]:.0f} ns; median allowance "
              f"{slack[len(slack) // 2]:.0f} ns; replay lateness max {late} ns")


def t_bad_times():
    """Timestamps no clock gives (1e300 us, an integer past int64 once in ns, a start past the limit) in an event's
    start and stop, a state and a CUPTI kernel record: each record is skipped and counted under its own reason,
    the first named by file, line and field, everything else replayed; a replay with --speed 0 (no pacing) writes
    the CUPTI kernels' truth with no replay-clock time. Under UBSan, these were float-to-integer overflows."""
    tmp, recs, truth = record(["--iters", "1", "--fast"])
    lines, kernels = rewrite(recs, truth, cupti=True)
    first_event = next(i for i, r in enumerate(lines) if r.get("recordType") == "event")
    state = next(r for r in lines if r.get("recordType") == "state")
    kernel = next(r for r in lines if r.get("recordType") == "cuptiActivity" and r["type"] == "KERNEL")
    bad = [dict(lines[first_event], eventAddr="0x7fbad0000001", start=dict(lines[first_event]["start"], ts=1e300)),
           dict(lines[first_event], eventAddr="0x7fbad0000002", stop=dict(lines[first_event]["start"], ts=-1e300)),
           dict(lines[first_event], eventAddr="0x7fbad0000003",
                start=dict(lines[first_event]["start"], ts=9223372036854775)),
           dict(state, ts=1e300),
           dict(kernel, extCorrId=0, start=dict(kernel["start"], ts=1e300))]
    path = write(tmp, "bad_times.jsonl", lines[:first_event] + bad + lines[first_event:])
    p, spy, tr, _ = replay(path)
    named = "skipped 5: a timestamp out of range"
    check(named in p.stderr, "the replay counts the records with a time out of range", p.stderr[-700:], named)
    where = f"bad_times.jsonl:{first_event + 1} (start.ts"
    check(where in p.stderr, "and names the first by file, line and field", p.stderr[-700:], where)
    print(next((l for l in p.stderr.splitlines() if "out of range" in l), ""))
    eq(dict(spy), dict(want_starts(lines)), "every other event is replayed, none of the bad ones")
    eq(sum(t["kind"] == "gpu_kernel" and t["source"] == "recording" for t in tr), len(kernels),
       "the bad CUPTI record gives no GPU truth, the others do")
    p, spy, tr, _ = replay(path, args=["--speed", "0"])
    g = [t for t in tr if t["kind"] == "gpu_kernel" and t["source"] == "recording"]
    check(g and all(t["ts_ns"] is None for t in g), "--speed 0: no kernel is placed on the replay's clock",
          g[:1])


TESTS = {"lifecycle": t_lifecycle, "fields": t_fields, "v6": t_v6, "damaged": t_damaged, "cupti": t_cupti,
         "cupti_grade": t_cupti_grade, "bad_times": t_bad_times}

if __name__ == "__main__":
    TESTS[sys.argv[2]]()
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        sys.exit(1)
    print("ok")
