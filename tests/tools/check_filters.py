#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""export filters (--types, --ranks, --comm, --from/--to) on every format:
the output holds exactly the records of the unfiltered export that match.
usage: check_filters.py NCCLSCOPE DUMP WORK"""
import json
import os
import subprocess
import sys

CLI, DUMP, WORK = sys.argv[1:4]
FAILS = []


def check(cond, what, got=None, want=None):
    if not cond:
        FAILS.append("FAIL %s: got %r want %r" % (what, got, want))
        print(FAILS[-1])


def export(*args, fmt="jsonl"):
    out = os.path.join(WORK, "f%d.%s" % (len(os.listdir(WORK)), fmt))
    p = subprocess.run([CLI, "export", DUMP, "--format", fmt, "-o", out] + list(args), capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, "export %s: exit 0" % " ".join(args), (p.returncode, p.stderr[-200:]), 0)
    if fmt == "chrome":
        return json.load(open(out))["traceEvents"]
    return [json.loads(l) for l in open(out)]


os.makedirs(WORK, exist_ok=True)
full = export()
events = [r for r in full if r["recordType"] == "event"]
states = [r for r in full if r["recordType"] == "state"]
check(len(events) > 20, "the trace has events", len(events), "> 20")

sel = export("--types", "Coll,ProxyOp")
got = sorted(r["eventAddr"] for r in sel if r["recordType"] == "event")
want = sorted(r["eventAddr"] for r in events if r["type"] in ("ncclProfileColl", "ncclProfileProxyOp"))
check(got == want and got, "--types Coll,ProxyOp", len(got), len(want))
kept = set(want)
check(all(r["eventAddr"] in kept for r in sel if r["recordType"] == "state"), "states only of kept events")
check(len([r for r in sel if r["recordType"] == "lifecycle"]) == len([r for r in full if r["recordType"] == "lifecycle"]),
      "lifecycle records kept")

sel = export("--ranks", "1")
got = sorted(r["eventAddr"] for r in sel if r["recordType"] == "event")
want = sorted(r["eventAddr"] for r in events if r["rank"] == 1)
check(got == want and got, "--ranks 1", len(got), len(want))
check(all(r["rank"] == 1 for r in sel if r["recordType"] == "lifecycle"), "lifecycle of rank 1 only")

comm = events[0]["commId"]
sel = export("--comm", hex(comm))
check(len([r for r in sel if r["recordType"] == "event"]) == len([r for r in events if r["commId"] == comm]),
      "--comm %s" % hex(comm))
# a Chrome export above NCCLSCOPE_CHROME_WARN_MB (256 MB unless set) warns and suggests perfetto
for mb, warned in (("0", True), ("1000", False)):
    out = os.path.join(WORK, "big%s.json" % mb)
    p = subprocess.run([CLI, "export", DUMP, "--format", "chrome", "-o", out], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ, NCCLSCOPE_CHROME_WARN_MB=mb))
    check(p.returncode == 0, "chrome export, warning at %s MB: exit 0" % mb, p.returncode, 0)
    check(("--format perfetto" in p.stderr) == warned, "chrome export warns above %s MB" % mb, p.stderr[-300:],
          warned)
# perfetto (binary) to a terminal: refused with a hint, exit 2; to a pipe: written
import pty  # noqa: E402
master, slave = pty.openpty()
p = subprocess.run([CLI, "export", DUMP, "--format", "perfetto"], stdout=slave, stderr=subprocess.PIPE, text=True,
                   timeout=60)
os.close(slave)
os.close(master)
check(p.returncode == 2 and "-o" in p.stderr, "perfetto to a terminal: refused, exit 2", (p.returncode, p.stderr), 2)
p = subprocess.run([CLI, "export", DUMP, "--format", "perfetto"], capture_output=True, timeout=60)
check(p.returncode == 0 and len(p.stdout) > 0, "perfetto to a pipe: written", (p.returncode, len(p.stdout)), 0)
# a filter no event matches says so, writes nothing and exits 2
for none in (["--comm", "0x1"], ["--comm", "0xdeadbeef"], ["--ranks", "99"], ["--from", "10", "--to", "5"]):
    out = os.path.join(WORK, "none.jsonl")
    p = subprocess.run([CLI, "export", DUMP, "-o", out] + none, capture_output=True, text=True, timeout=60)
    check(p.returncode == 2, "%s: exit 2" % " ".join(none), (p.returncode, p.stderr[-200:]), 2)
    check("no event" in p.stderr, "%s: says no event can match" % " ".join(none), p.stderr[-200:], "no event")
    check(not os.path.exists(out), "%s: no output file" % " ".join(none), os.path.exists(out), False)

ts = sorted(r["start"]["ts"] for r in events)
lo, hi = ts[len(ts) // 4], ts[3 * len(ts) // 4]
sel = export("--from", "%.3f" % lo, "--to", "%.3f" % hi)
got = sorted(r["eventAddr"] for r in sel if r["recordType"] == "event")
want = sorted(r["eventAddr"] for r in events if lo <= r["start"]["ts"] <= hi)
check(got == want and got, "--from/--to", len(got), len(want))

chrome = export("--types", "Coll", fmt="chrome")
cats = {e.get("cat") for e in chrome if e.get("ph") == "X"}
check(cats == {"Coll"}, "chrome: only Coll slices", cats, {"Coll"})

for bad in (["--types", "Bogus"], ["--ranks", "x"], ["--comm", "-1"], ["--from", "abc"]):
    p = subprocess.run([CLI, "export", DUMP] + bad, capture_output=True, text=True, timeout=60)
    check(p.returncode == 2, "%s: exit 2" % " ".join(bad), p.returncode, 2)

if FAILS:
    print("%d check(s) failed" % len(FAILS))
    sys.exit(1)
print("ok")
