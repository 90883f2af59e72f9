#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope-sim conformance tests: drive the recording plugin and compare with the truth.

Usage: conformance.py BUILD_DIR TEST [ARG]. Each ctest entry runs one TEST in
its own process. Assertions print both sides.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checklib import temp_under_one_dir  # noqa: E402

temp_under_one_dir("nsconf-")

BUILD = sys.argv[1]
SIM = os.path.join(BUILD, "ncclscope-sim")
FAILS = []

T = {"Group": 1, "Coll": 2, "P2p": 4, "ProxyOp": 8, "ProxyStep": 16, "ProxyCtrl": 32, "KernelCh": 64,
     "NetPlugin": 128, "GroupApi": 256, "CollApi": 512, "P2pApi": 1024, "KernelLaunch": 2048, "CeColl": 4096,
     "CeSync": 8192, "CeBatch": 16384}
TN = {v: k for k, v in T.items()}


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append(f"FAIL {what}: got {got!r} want {want!r}")
        print(FAILS[-1])


def eq(got, want, what):
    check(got == want, what, got, want)


def run(plugin, args, env=None, expect_rc=0):
    tmp = tempfile.mkdtemp(prefix="simtest")
    e = dict(os.environ)
    e["NCCLSCOPE_REC_OUT"] = os.path.join(tmp, "rec")
    e.pop("NCCL_PROFILER_PLUGIN", None)
    if env:
        e.update(env)
    truth = os.path.join(tmp, "truth.jsonl")
    # these tests check the adapters and the model as the ideal NCCL drives them;
    # the releases' own behaviours are tests/sim/personalities.py's
    if "--nccl" not in args and "--replay" not in args:
        args = ["--nccl", "ideal"] + args
    cmd = [SIM] + (["--plugin", plugin] if plugin else []) + ["--truth", truth] + args
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=100)
    p.workdir = tmp  # the spy logs (rec.<pid>) and truth.jsonl
    if expect_rc is not None:
        check(p.returncode == expect_rc, f"exit status of {' '.join(cmd)} (stderr: {p.stderr[-400:]})",
              p.returncode, expect_rc)
    recs = {}
    for f in glob.glob(os.path.join(tmp, "rec.*")):
        recs[int(f.rsplit(".", 1)[1])] = [json.loads(l) for l in open(f)]
    tr = [json.loads(l) for l in open(truth)] if os.path.exists(truth) else []
    return recs, tr, p


def lib(v):
    return os.path.join(BUILD, f"libnccl-profiler-recv{v}.so")


EXPECTED_TYPES = {
    1: {"Group", "Coll", "P2p", "ProxyOp", "ProxyStep", "ProxyCtrl"},
    3: {"Group", "Coll", "P2p", "ProxyOp", "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin"},
    5: {"Group", "Coll", "P2p", "ProxyOp", "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin", "GroupApi", "CollApi",
        "P2pApi", "KernelLaunch"},
}
EXPECTED_TYPES[2] = EXPECTED_TYPES[1]
EXPECTED_TYPES[4] = EXPECTED_TYPES[3]
EXPECTED_TYPES[6] = EXPECTED_TYPES[5]
OLD_STATES = {8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
EXPECTED_STATES = {1: OLD_STATES, 2: OLD_STATES, 3: OLD_STATES, 4: OLD_STATES | {19, 20, 21, 22}}
EXPECTED_STATES[5] = EXPECTED_STATES[4] | {23, 24}
EXPECTED_STATES[6] = EXPECTED_STATES[5]


def hierarchy(v, lines, label):
    """Parent relations, orderings and slot reuse inside one process's recording."""
    byh = {}
    stopped_at = {}
    ctxs = {r["ctx"] for r in lines if r["ev"] == "init"}
    for i, r in enumerate(lines):
        if r["ev"] == "start" and r["h"] != "(nil)":
            check(r["h"] not in byh, f"{label}: handle reused while loaded", r["h"], "fresh")
            byh[r["h"]] = (i, r)
        elif r["ev"] == "stop":
            stopped_at[r["h"]] = i
    want_parent = {"Coll": {"CollApi"} if v >= 5 else {"Group"}, "P2p": {"P2pApi"} if v >= 5 else {"Group"},
                   "ProxyOp": {"Coll", "P2p"}, "ProxyStep": {"ProxyOp"}, "NetPlugin": {"ProxyStep"},
                   "KernelCh": {"Coll", "P2p"}, "CollApi": {"GroupApi"}, "P2pApi": {"GroupApi"},
                   "KernelLaunch": {"GroupApi"}, "CeColl": {"CollApi"}, "CeSync": {"CeColl"},
                   "CeBatch": {"CeColl"}}
    bad = 0
    for i, r in enumerate(lines):
        if r["ev"] != "start":
            continue
        t = TN[r["type"]]
        if r["parent"] == "(nil)":
            continue
        if t == "ProxyOp" and r["pid"] != pid_of(label):
            continue  # PXN: foreign parent, checked elsewhere
        if r["parent"] not in byh:
            if t in ("ProxyStep", "NetPlugin"):
                continue  # may hang under a PXN ProxyOp whose own parent was foreign: still local handle
            bad += 1
            if bad < 5:
                check(False, f"{label}: {t} parent is no handle of this process", r["parent"], "a started handle")
            continue
        pi, pr = byh[r["parent"]]
        check(pi < i, f"{label}: parent started before child", pi, f"< {i}")
        pt = TN[pr["type"]]
        if t in want_parent and pt not in want_parent[t]:
            bad += 1
            if bad < 5:
                check(False, f"{label}: parent type of {t}", pt, want_parent[t])
        if t == "Coll" and v >= 5:
            check(stopped_at.get(r["parent"], 1 << 60) < i, f"{label}: CollApi stops before its Coll starts",
                  stopped_at.get(r["parent"]), f"< {i}")
    # KernelChStop immediately followed by stop of that handle on that thread
    by_tid = {}
    for r in lines:
        by_tid.setdefault(r.get("tid"), []).append(r)
    for tid, rs in by_tid.items():
        for j, r in enumerate(rs):
            if r["ev"] == "state" and r["state"] == 22:
                nxt = rs[j + 1] if j + 1 < len(rs) else None
                check(nxt is not None and nxt["ev"] == "stop" and nxt["h"] == r["h"],
                      f"{label}: KernelChStop immediately followed by stop", nxt, {"ev": "stop", "h": r["h"]})
            if r["ev"] == "state" and r["state"] in (23, 24) and v == 6:
                eq(r["args_null"], True, f"{label}: GroupApi state args are NULL")
    # ProxyStep slot reuse: step s starts only after step s-8 of the same ProxyOp stopped
    steps = {}
    for i, r in enumerate(lines):
        if r["ev"] == "start" and r["type"] == T["ProxyStep"]:
            steps.setdefault(r["parent"], {})[r["step"]] = (i, r["h"])
    for op, st in steps.items():
        for s, (i, h) in st.items():
            if s - 8 in st:
                ph = st[s - 8][1]
                check(stopped_at.get(ph, 1 << 60) < i, f"{label}: slot {s % 8} reused before step {s - 8} stopped",
                      stopped_at.get(ph), f"< {i}")
    return byh, ctxs


def pid_of(label):
    return int(label.split(":")[1]) if ":" in label else -1


def zip_truth(recs, tr, label):
    """Per thread, the plugin's start order equals the truth's start log."""
    for pid, lines in recs.items():
        rec_by_tid = {}
        for r in lines:
            if r["ev"] == "start":
                rec_by_tid.setdefault(r["tid"], []).append(TN[r["type"]])
        tr_by_tid = {}
        for r in tr:
            if r["kind"] == "start" and r["pid"] == pid:
                tr_by_tid.setdefault(r["tid"], []).append(r["type"])
        eq(sorted(rec_by_tid), sorted(tr_by_tid), f"{label}: threads that started events (pid {pid})")
        for tid in rec_by_tid:
            a, b = rec_by_tid[tid], tr_by_tid.get(tid, [])
            eq(len(a), len(b), f"{label}: number of starts on tid {tid}")
            if a != b:
                k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), None)
                check(False, f"{label}: start order on tid {tid} differs at {k}", a[k:k + 3] if k is not None else a,
                      b[k:k + 3] if k is not None else b)
        # counts
        cnt = {}
        for r in tr:
            if r["kind"] == "counts" and r["pid"] == pid:
                cnt[r["type"]] = cnt.get(r["type"], 0) + r["starts"]
        got = {}
        for r in lines:
            if r["ev"] == "start":
                got[TN[r["type"]]] = got.get(TN[r["type"]], 0) + 1
        eq(got, {k: v for k, v in cnt.items() if v}, f"{label}: start counts per type vs truth counts")


def t_version(v):
    v = int(v)
    recs, tr, _ = run(lib(v), ["--fast", "--iters", "1"])
    eq(len(recs), 1, "one recording file")
    for pid, lines in recs.items():
        label = f"v{v}:{pid}"
        types = {TN[r["type"]] for r in lines if r["ev"] == "start"}
        eq(types, EXPECTED_TYPES[v], f"{label}: event types received")
        states = {r["state"] for r in lines if r["ev"] == "state"}
        eq(states, EXPECTED_STATES[v], f"{label}: states received")
        inits = [r for r in lines if r["ev"] == "init"]
        tinits = [r for r in tr if r["kind"] == "init"]
        eq(len(inits), 4, f"{label}: init calls (2 ranks x world + split)")
        for r in inits:
            if v >= 5:
                check(r["commId"] in {t["comm"] for t in tinits}, f"{label}: init commId is a truth comm",
                      r["commId"], [t["comm"] for t in tinits])
                # a communicator spans at most as many nodes as it has ranks
                check(r["nranks"] in (1, 2) and r["nNodes"] == min(2, r["nranks"]) and r["logfn"], f"{label}: init args",
                      r, "nranks, nNodes = min(2, nranks), logfn")
            elif v == 4:
                check(r["commHash"] in {t["comm"] for t in tinits}, f"{label}: v4 init receives commId as commHash",
                      r["commHash"], [t["comm"] for t in tinits])
            else:
                check("commId" not in r and "commHash" not in r, f"{label}: v1-v3 init(ctx, mask) only", r, "no ids")
        check(any(r.get("commName") == "(null)" for r in inits) or v < 4, f"{label}: a NULL commName arrives",
              [r.get("commName") for r in inits], "(null) present")
        hierarchy(v, lines, label)
        if v == 1:
            funcs = {r["func"] for r in lines if r["ev"] == "start" and r["type"] == T["Coll"]}
            eq(funcs, {0, 1, 2, 3, 4}, f"{label}: v1 numeric Coll funcs (Broadcast..AllReduce)")
            p2p = {r["func"] for r in lines if r["ev"] == "start" and r["type"] == T["P2p"]}
            eq(p2p, {6, 7}, f"{label}: v1 numeric P2p funcs (Send, Recv)")
            algos = {r["algo"] for r in lines if r["ev"] == "start" and r["type"] == T["Coll"]}
            eq(algos, {0, 1}, f"{label}: v1 algo codes (TREE, RING)")
            dts = {r["dtype"] for r in lines if r["ev"] == "start" and r["type"] == T["Coll"]}
            eq(dts, {7}, f"{label}: v1 datatype code (Float32)")
        if v >= 4:
            kst = [r for r in lines if r["ev"] == "state" and r["state"] == 22]
            check(all(r["ptimer"] % 2048 == 0 and r["ptimer"] > 10 ** 18 for r in kst),
                  f"{label}: KernelChStop pTimer epoch-like, 2048 ns quantized", kst[:1], "multiple of 2048, > 1e18")
            ts = [r for r in lines if r["ev"] == "state" and r["state"] in (9, 11, 12)]
            check(all(r["transSize"] > 0 for r in ts), f"{label}: transSize on SendWait/RecvFlushWait/RecvGPUWait",
                  ts[:1], "> 0")
        else:
            ts = [r for r in lines if r["ev"] == "state" and r["state"] in range(8, 13)]
            check(all(r["transSize"] == 0 for r in ts), f"{label}: v1-v3 ProxyStep state args are zeroed", ts[:1], 0)
    zip_truth(recs, tr, f"v{v}")


def t_mask_static():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "1"], {"REC_MASK": "2"})
    for pid, lines in recs.items():
        types = {TN[r["type"]] for r in lines if r["ev"] == "start"}
        # NCCL's gates: GroupApi/CollApi/Group start whenever a descendant (Coll) is enabled
        eq(types, {"GroupApi", "CollApi", "Group", "Coll"}, "mask=Coll: types NCCL still starts")


def t_mask_runtime():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "1", "--ranks-per-proc", "1", "--nodes", "1"],
                      {"REC_MASK_AFTER": "100", "REC_MASK2": "0"})
    for pid, lines in recs.items():
        k = next(i for i, r in enumerate(lines) if r["ev"] == "mask_change")
        after = [r for r in lines[k + 1:] if r["ev"] == "start"]
        ga = [r for r in after if r["type"] in (T["GroupApi"], T["ProxyCtrl"])]
        check(len(ga) <= 2, "after a run-time mask change to 0 no new group or ProxyCtrl starts", len(ga), "<= 2")
        check(len(after) < 40, "only in-flight work still reports after the mask change", len(after), "< 40")
        check(all(r["mask"] == 0 for r in after), "the plugin's pointer is the mask NCCL reads", after[:1], 0)


def t_v5_ce():
    recs, tr, _ = run(lib(5), ["--fast", "--iters", "1", "--scenario", "ce"])
    for pid, lines in recs.items():
        types = {TN[r["type"]] for r in lines if r["ev"] == "start"}
        check(not types & {"CeColl", "CeSync", "CeBatch"}, "v5 sees no CE events", types, "no Ce*")
        masks = {r["mask"] for r in lines if r["ev"] == "start"}
        eq(masks, {0x7FFF & ~0x7000}, "v5: CE bits cleared from the mask after init")
    inits = [r for r in tr if r["kind"] == "init"]
    check(all(r["mask_after"] & 0x7000 == 0 for r in inits), "truth: mask after v5 init", inits[:1], "no CE bits")


def t_v6_ce():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "1", "--scenario", "ce"])
    for pid, lines in recs.items():
        types = {TN[r["type"]] for r in lines if r["ev"] == "start"}
        check({"CeColl", "CeSync", "CeBatch"} <= types, "v6 receives CE events", types, "CeColl, CeSync, CeBatch")
        check(not any(r["ev"] == "state" and r["state"] >= 25 for r in lines), "no CE states sent", "", "none")
        hierarchy(6, lines, f"v6ce:{pid}")
    zip_truth(recs, tr, "v6ce")


def t_pxn_procs():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "1", "--scenario", "pxn", "--procs", "2", "--ranks-per-proc", "1"])
    eq(len(recs), 2, "two processes each load the plugin")
    allh = {pid: {r["h"] for r in ls if r["ev"] == "start"} for pid, ls in recs.items()}
    for pid, lines in recs.items():
        ctxs = {r["ctx"] for r in lines if r["ev"] == "init"}
        ops = [r for r in lines if r["ev"] == "start" and r["type"] == T["ProxyOp"]]
        foreign = [r for r in ops if r["pid"] != pid]
        check(foreign, f"pid {pid}: ProxyOps run on behalf of another process", len(foreign), "> 0")
        other = [p for p in recs if p != pid][0]
        octxs = {r["ctx"] for r in recs[other] if r["ev"] == "init"}
        for r in foreign[:50]:
            # forked processes share heap layouts: the foreign values may equal local addresses by
            # coincidence, which is exactly why a plugin must go by pid, never by address
            eq(r["pid"], other, f"pid {pid}: foreign ProxyOp carries the originating pid")
            check(r["ctx"] in octxs, f"pid {pid}: foreign ProxyOp context is the other process's", r["ctx"], octxs)
            check(r["parent"] in allh[other] or r["parent"] == "(nil)",
                  f"pid {pid}: foreign ProxyOp parent is a handle of the other process", r["parent"], "other's handle")
        fh = {r["h"] for r in foreign}
        steps = [r for r in lines if r["ev"] == "start" and r["type"] == T["ProxyStep"] and r["parent"] in fh]
        check(steps, f"pid {pid}: ProxySteps of foreign ProxyOps use the local ProxyOp handle", len(steps), "> 0")
        hierarchy(6, lines, f"pxn:{pid}")
    zip_truth(recs, tr, "pxn")


def t_pxn_single():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "1", "--scenario", "pxn"])
    for pid, lines in recs.items():
        foreign = [r for r in lines if r["ev"] == "start" and r["type"] == T["ProxyOp"] and r["pid"] != pid]
        check(foreign, "single process PXN: foreign ProxyOps exist", len(foreign), "> 0")
        check(all(r["pid"] == os.getpid() for r in foreign), "foreign pid is another live process (the parent)",
              foreign[0]["pid"] if foreign else None, os.getpid())


def t_dlclose():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "20", "--scenario", "churn", "--ranks-per-proc", "1"])
    for pid, lines in recs.items():
        seq = [r["ev"] for r in lines if r["ev"] in ("load", "unload", "init", "finalize")]
        eq(seq, ["load", "init", "finalize", "unload"] * 20, "each cycle: dlopen, init, finalize, dlclose")


def t_leak():
    recs, tr, p = run(lib(6), ["--fast", "--iters", "2", "--scenario", "churn", "--ranks-per-proc", "1"],
                      {"REC_LEAK_THREAD": "1"}, expect_rc=None)
    check(p.returncode != 0, "a plugin leaving a thread behind fails the run", p.returncode, "!= 0")
    check("thread" in p.stderr, "the error names the leaked thread", p.stderr[-300:], "mentions thread")


def t_graph():
    recs, tr, _ = run(lib(6), ["--fast", "--iters", "2", "--scenario", "graph"])
    for pid, lines in recs.items():
        capi = [r for r in lines if r["ev"] == "start" and r["type"] == T["CollApi"]]
        coll = [r for r in lines if r["ev"] == "start" and r["type"] == T["Coll"]]
        eq(len(capi), 2 * 2 * 2, "CollApi once per captured collective (2 ranks x 2 iters x 2)")
        check(all(r["graph"] for r in capi), "CollApi graphCaptured", capi[:1], "graph true")
        eq(len(coll), 2 * 2 * 2 * 4, "Coll re-emitted at each of 4 replays")
        hierarchy(6, lines, f"graph:{pid}")
    zip_truth(recs, tr, "graph")


def t_hang():
    recs, tr, _ = run(lib(6), ["--fast", "--scenario", "hang", "--hang-timeout-ms", "300"])
    hang = [r for r in tr if r["kind"] == "hang"]
    eq(len(hang), 1, "truth names the hung rank")
    obs = [r for r in tr if r["kind"] == "hang_observed"]
    check(obs and all(r["op"] == hang[0]["op"] for r in obs), "others waited on that collective", obs, hang)
    for pid, lines in recs.items():
        starts = sum(r["ev"] == "start" for r in lines)
        stops = sum(r["ev"] == "stop" for r in lines)
        nulls = sum(r["ev"] == "start" and r["h"] == "(nil)" for r in lines)
        eq(starts - nulls, stops, "every started event is stopped even after the hang")


def t_none():
    recs, tr, p = run(None, ["--fast", "--iters", "1"], {"NCCL_PROFILER_PLUGIN": "NoNe"})
    eq(len(recs), 0, "NCCL_PROFILER_PLUGIN=none loads nothing")
    check("error" not in p.stderr, "none on purpose: no error", p.stderr[-300:], "")
    # no --plugin, no NCCL_PROFILER_PLUGIN, no libnccl-profiler.so to be found: an error that says so, exit 1
    recs, tr, p = run(None, ["--fast", "--iters", "1"], {"LD_LIBRARY_PATH": ""}, expect_rc=1)
    eq(len(recs), 0, "nothing to load, nothing loaded")
    check("no profiler plugin loaded" in p.stderr and "--plugin" in p.stderr, "the run says no plugin was loaded",
          p.stderr[-400:], "no profiler plugin loaded ... --plugin")
    recs, tr, p = run(None, ["--fast", "--iters", "1"],
                      {"NCCL_PROFILER_PLUGIN": "recv3", "LD_LIBRARY_PATH": BUILD})
    eq(len(recs), 1, "NCCL_PROFILER_PLUGIN=recv3 loads libnccl-profiler-recv3.so")
    for pid, lines in recs.items():
        eq(lines[0].get("version"), 3, "the v3 recording plugin was loaded")
    # NCCL's names, in a directory of the library path: the default name, and one that
    # only the 2.26-2.27 rule (libnccl-profiler-<value>.so for any value) builds
    libs = tempfile.mkdtemp(prefix="simnames")
    os.symlink(lib(3), os.path.join(libs, "libnccl-profiler.so"))
    os.symlink(lib(3), os.path.join(libs, "libnccl-profiler-libfoo.so.so"))
    recs, tr, p = run(None, ["--fast", "--iters", "1"], {"NCCL_PROFILER_PLUGIN": "", "LD_LIBRARY_PATH": libs})
    eq(len(recs), 1, "NCCL_PROFILER_PLUGIN= (empty) loads libnccl-profiler.so, as unset")
    recs, tr, p = run(None, ["--fast", "--iters", "1", "--nccl", "2.26"],
                      {"NCCL_PROFILER_PLUGIN": "libfoo.so", "LD_LIBRARY_PATH": libs})
    eq(len(recs), 1, "2.26: NCCL_PROFILER_PLUGIN=libfoo.so loads libnccl-profiler-libfoo.so.so")
    recs, tr, p = run(None, ["--fast", "--iters", "1", "--nccl", "2.28"],
                      {"NCCL_PROFILER_PLUGIN": "libfoo.so", "LD_LIBRARY_PATH": libs}, expect_rc=1)
    eq(len(recs), 0, "2.28: a lib*.so value is not prefixed again")
    check("cannot load profiler plugin 'libfoo.so'" in p.stderr, "2.28 says why", p.stderr[-400:], "")


def t_scenario(name):
    extra = ["--hang-timeout-ms", "300"] if name == "hang" else []
    for plugin in (os.path.join(BUILD, "libnccl-profiler-empty.so"), lib(1), lib(6)):
        recs, tr, p = run(plugin, ["--scenario", name, "--iters", "2"] + extra)


def t_nasty_null():
    recs, tr, _ = run(lib(6), ["--fast", "--scenario", "nasty", "--iters", "1"], {"REC_NULL_TYPES": "0x7FFF"})
    for pid, lines in recs.items():
        eq(sum(r["ev"] == "stop" and r["h"] == "(nil)" for r in lines), 2,
           "only the NetPlugin-callback NULL stops arrive (one per rank)")


def t_bench():
    p = subprocess.run([SIM, "--bench", "--iters", "1", "--plugin", lib(6)], capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, "bench exit status")
    line = [l for l in p.stdout.splitlines() if l.startswith("BENCH ")]
    eq(len(line), 1, "one BENCH line")
    j = json.loads(line[0][6:])
    eq([c["name"] for c in j["configs"]], ["none", "empty", "plugin"], "bench configurations")


def t_bench_floor():
    """The floor plugin as --bench-cadence's baseline: every sequence runs
    through it (its handles carry the ids its children and stops decode)."""
    floor = os.path.join(BUILD, "libnccl-profiler-floor.so")
    p = subprocess.run([SIM, "--bench-cadence", "--bench-gaps", "100", "--bench-reps", "1", "--plugin",
                        os.path.join(BUILD, "libnccl-profiler-empty.so"), "--bench-baseline", floor],
                       capture_output=True, text=True, timeout=120)
    eq(p.returncode, 0, "cadence bench with the floor plugin: exit status")
    line = [l for l in p.stdout.splitlines() if l.startswith("BENCH_CADENCE ")]
    eq(len(line), 1, "one BENCH_CADENCE line")
    rows = json.loads(line[0][len("BENCH_CADENCE "):])["rows"]
    eq(sorted(r["seq"] for r in rows), ["net_coll", "node_coll32", "node_coll8", "p2p_pair"], "every sequence")
    eq([r["seq"] for r in rows if not r["baseline_ns"] > 0], [], "the floor timed in every sequence")


def t_help():
    p = subprocess.run([SIM, "--help"], capture_output=True, text=True, timeout=10)
    for word in ("NCCL_PROFILER_PLUGIN", "--procs", "--truth", "--bench", "pxn", "churn", "nasty", "--fast"):
        check(word in p.stdout, "--help documents " + word, "", word)


NCCLSCOPE = os.path.join(BUILD, "ncclscope")
PLUGIN = os.path.join(BUILD, "libnccl-profiler-ncclscope.so")
REPLAY_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "replay_check.py")


def record(args):
    """A simulator run recorded by ncclscope (every event type), exported as JSON Lines."""
    tmp = tempfile.mkdtemp(prefix="simrec")
    env = dict(os.environ, NCCLSCOPE_DUMP_DIR=os.path.join(tmp, "dump"), NCCLSCOPE_EVENT_MASK="all",
               NCCLSCOPE_NO_CUDA="1")
    env.pop("NCCL_PROFILER_PLUGIN", None)
    p = subprocess.run([SIM, "--plugin", PLUGIN] + args, env=env, capture_output=True, text=True, timeout=100)
    eq(p.returncode, 0, f"recording run {args} (stderr: {p.stderr[-300:]})")
    out = os.path.join(tmp, "rec.jsonl")
    p = subprocess.run([NCCLSCOPE, "export", os.path.join(tmp, "dump"), "--format", "jsonl", "-o", out],
                       capture_output=True, text=True, timeout=100)
    eq(p.returncode, 0, f"export of the recording (stderr: {p.stderr[-300:]})")
    return tmp, out


def run_replay_check(*args):
    p = subprocess.run([sys.executable, REPLAY_CHECK] + list(args), capture_output=True, text=True, timeout=200)
    print(p.stdout[-3000:])
    return p


def replay_check(*args):
    eq(run_replay_check(*args).returncode, 0, f"replay_check {args[0]}")


def replay_fixed(sim_args):
    """record -> export -> replay through ncclscope -> export: a fixed point. Both runs are real time: when
    the only failed check is the p99 of the duration deviations (a stall of this shared machine during one of
    the runs: the recorded durations themselves jump by milliseconds), it records again, once."""
    for attempt in (1, 2):
        tmp, rec = record(sim_args)
        again = os.path.join(tmp, "again")
        env = dict(os.environ, NCCLSCOPE_DUMP_DIR=again, NCCLSCOPE_EVENT_MASK="all", NCCLSCOPE_NO_CUDA="1")
        p = subprocess.run([SIM, "--plugin", PLUGIN, "--replay", rec], env=env, capture_output=True, text=True,
                           timeout=100)
        eq(p.returncode, 0, f"replay through ncclscope (stderr: {p.stderr[-300:]})")
        out2 = os.path.join(tmp, "again.jsonl")
        subprocess.run([NCCLSCOPE, "export", again, "--format", "jsonl", "-o", out2], check=True, timeout=100,
                       capture_output=True)
        p = run_replay_check("fixed", rec, out2)
        timing_only = ("FAIL p99 of the duration deviations" in p.stdout and
                       re.search(r"(?m)^1 check\(s\) failed", p.stdout) is not None)
        if p.returncode == 0 or not timing_only or attempt == 2:
            eq(p.returncode, 0, "replay_check fixed")
            return
        print("only the p99 of the duration deviations failed: recording again, once")


def t_replay(kind):
    """--replay: what the replay makes equals the recording (replay_check.py)."""
    sim_args = {"stream": ["--iters", "1"], "fixed": ["--iters", "1"],
                "pxn": ["--iters", "1", "--scenario", "pxn", "--procs", "2", "--ranks-per-proc", "2"],
                "graph": ["--iters", "1", "--scenario", "graph"], "ce": ["--iters", "1", "--scenario", "ce"]}[kind]
    if kind == "fixed":
        replay_fixed(sim_args)
        return
    tmp, rec = record(sim_args)
    recs, tr, p = run(lib(6), ["--replay", rec])
    check("0 skipped" in p.stderr, "nothing of a clean recording is skipped", p.stderr[-300:], "0 skipped")
    d = p.workdir
    replay_check("stream", rec, d, os.path.join(d, "truth.jsonl"), "--max-dev-ms", "1000")
    if kind == "pxn":
        eq(len(recs), 2, "one replay process per recorded process")
        for pid, lines in recs.items():
            foreign = [r for r in lines if r["ev"] == "start" and r["type"] == T["ProxyOp"] and r["pid"] != pid]
            check(foreign, f"replay pid {pid}: PXN ProxyOps carry the other replay process's pid", len(foreign), "> 0")
            others = set(recs) - {pid}
            check(all(r["pid"] in others for r in foreign), "PXN pid is the originating replay process",
                  foreign[:1], others)


def t_replay_bad():
    """A damaged recording: what is valid is replayed, the rest counted and named."""
    tmp, rec = record(["--iters", "1", "--fast"])
    lines = open(rec).read().splitlines()
    events = [i for i, l in enumerate(lines) if '"recordType":"event"' in l and "ncclProfileColl\"" in l]
    bad = list(lines)
    bad.insert(5, '{"recordType":"event","type":"ncclProfileWarpDrive","eventAddr":"0x9"}')
    bad.insert(6, '{"recordType":"state","eventAddr":"0xdeadbeef","ts":1.000,"id":9,"pid":1,"tid":1}')
    bad.insert(7, '{"recordType":"mystery"}')
    bad.insert(8, 'not json at all')
    # a parent that is not in the recording: drop one Coll (its ProxyOps and KernelCh lose their parent)
    dropped = lines[events[0]]
    bad.remove(dropped)
    bad.reverse()  # out of order in the file: times decide
    bad.append(lines[-1][: len(lines[-1]) // 2])  # a torn last line
    path = os.path.join(tmp, "bad.jsonl")
    open(path, "w").write("\n".join(bad))
    recs, tr, p = run(lib(6), ["--replay", path])
    for what in ("not JSON", "unknown recordType", "unknown event type", "state of an event not in the recording",
                 "parent not in the recording"):
        check(what in p.stderr, f"the replay names what it skipped: {what}", p.stderr[-600:], what)
    starts = sum(r["ev"] == "start" for ls in recs.values() for r in ls)
    want = sum('"recordType":"event"' in l for l in lines) - 1
    eq(starts, want, "every valid event of the damaged recording is replayed")
    for content, why in (("", "empty"), ("garbage\n{]\n", "garbage")):
        path = os.path.join(tmp, why + ".jsonl")
        open(path, "w").write(content)
        recs, tr, p = run(lib(6), ["--replay", path], expect_rc=None)
        check(p.returncode != 0, f"a recording with nothing to replay ({why}) fails", p.returncode, "!= 0")
        check("nothing to replay" in p.stderr, f"and says so ({why})", p.stderr[-300:], "nothing to replay")


def t_replay_gpu_truth():
    """A CUPTI trace (PyTorch profiler, Chrome JSON) beside the recording: its NCCL kernels go to the truth."""
    tmp, rec = record(["--iters", "1", "--fast"])
    d = os.path.join(tmp, "recording")
    os.makedirs(d)
    os.rename(rec, os.path.join(d, "rec.jsonl"))
    kernels = [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7,
                "ts": 1795452499384635.5, "dur": 12.25, "args": {"device": 0, "stream": 7}},
               {"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "ts": 1.0, "dur": 2.0},
               {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "ts": 3.0, "dur": 4.0}]
    with open(os.path.join(d, "profile.json"), "w") as f:
        json.dump({"traceEvents": kernels}, f)
    recs, tr, p = run(lib(6), ["--replay", d])
    g = [t for t in tr if t["kind"] == "gpu_kernel"]
    eq([(t["name"], t["ts_ns"], t["dur_ns"], t["device"]) for t in g],
       [("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1795452499384635500, 12250, 0)],
       "the NCCL kernel of the CUPTI trace, exact to the ns, and nothing else")
    check(sum(r["ev"] == "start" for ls in recs.values() for r in ls) > 0, "the recording is replayed too", 0, "> 0")


def t_cli_errors():
    """Bad options and unloadable plugins stop the run with a reason, never a silent pass."""
    cases = [(["--iters", "abc"], 2, "--iters"), (["--seed", "12x"], 2, "--seed"), (["--channels", "65"], 2, "--channels"),
             (["--speed", "-1"], 2, "--speed"), (["--speed", "nan"], 2, "--speed"), (["--speed", "inf"], 2, "--speed"),
             # a speed near 0 stretches a microsecond past any clock: refused, not an overflow
             (["--speed", "1e-300", "--fast", "--iters", "1"], 2, "0 (no pacing) or a number from 0.001"),
             (["--plugin", "/nonexistent/lib.so", "--fast", "--iters", "1"], 1, "cannot load"),
             (["--plugin", "libm.so.6", "--fast", "--iters", "1"], 1, "exports no ncclProfiler"),
             (["--plugin", REPLAY_CHECK, "--fast", "--iters", "1"], 1, "cannot load")]
    for args, rc, word in cases:
        p = subprocess.run([SIM] + args, capture_output=True, text=True, timeout=60)
        eq(p.returncode, rc, f"exit status of ncclscope-sim {' '.join(args)}")
        check(word in p.stderr, f"ncclscope-sim {' '.join(args)} says why", p.stderr[-300:], word)


RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nccl_rules.py")
NATIVE = {"2.23": 1, "2.24": 2, "2.25": 2, "2.26": 3, "2.27": 4, "2.28": 5, "2.29": 6, "2.30": 6, "ideal": 6}


def rules(kind, path, label):
    p = subprocess.run([sys.executable, RULES, kind, path], capture_output=True, text=True, timeout=100)
    print(f"{label}:\n{p.stdout.strip()}")
    eq(p.returncode, 0, f"{label}: NCCL's rules hold")
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


def t_rules(nccl):
    """The rules NCCL guarantees hold for the release's call stream, for ncclscope's recording of it
    exported, and for that export replayed: with the same counts."""
    args = ["--nccl", nccl, "--iters", "1", "--scenario", "nocoll"]
    recs, tr, p = run(lib(NATIVE[nccl]), args)
    rules("spy", p.workdir, f"{nccl} call log")
    tmp, rec = record(args)
    exported = rules("export", rec, f"{nccl} recorded by ncclscope, exported")
    recs, tr, p = run(lib(NATIVE[nccl]), ["--nccl", nccl, "--replay", rec])
    replayed = rules("spy", p.workdir, f"{nccl} export replayed")
    for rule in ("order", "types", "states", "kch_stop", "step_slots", "groupapi"):
        eq(replayed.get(rule), exported.get(rule), f"{nccl}: rule {rule} [checked, failed] export vs its replay")


TESTS = {"version": t_version, "mask_static": t_mask_static, "mask_runtime": t_mask_runtime, "v5_ce": t_v5_ce,
         "v6_ce": t_v6_ce, "pxn_procs": t_pxn_procs, "pxn_single": t_pxn_single, "dlclose": t_dlclose,
         "leak": t_leak, "graph": t_graph, "hang": t_hang, "none": t_none, "scenario": t_scenario,
         "nasty_null": t_nasty_null, "bench": t_bench, "bench_floor": t_bench_floor, "help": t_help, "replay": t_replay,
         "replay_bad": t_replay_bad, "cli_errors": t_cli_errors, "rules": t_rules, "replay_gpu_truth": t_replay_gpu_truth}

if __name__ == "__main__":
    TESTS[sys.argv[2]](*sys.argv[3:])
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        sys.exit(1)
    print("ok")
