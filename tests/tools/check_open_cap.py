#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The exporter's cap on open events (--max-open), python3 stdlib only.

usage: check_open_cap.py NCCLSCOPE GEN_TRACE WORKDIR
1. `gen_trace --case open` (5000 ProxyOps that never stop, then stops of the
   first and last 10) exported with --max-open 1000: one warning line with
   the count, the 4000 oldest written unfinished first and in start order,
   the 10 late stops of evicted events reported as orphans, the last 10
   complete, the rest unfinished at the end of the file.
2. 300000 never-stopped events with --max-open 1000: peak RSS stays far
   below what 300000 events in memory take (about 180 MB).
Exits 1 on any violation."""
import json
import os
import resource
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def main():
    ncclscope, gen, work = sys.argv[1:4]
    errors = []
    small = os.path.join(work, "open-small")
    os.makedirs(small, exist_ok=True)
    rc, _, err = run([gen, "--case", "open", small, "5000"])
    if rc:
        print("gen_trace failed: " + err)
        return 1
    out = os.path.join(work, "open.jsonl")
    rc, _, err = run([ncclscope, "export", small, "--max-open", "1000", "-o", out])
    if rc != 0:
        errors.append("export exited %d: %s" % (rc, err))
    cap_lines = [l for l in err.splitlines() if "--max-open" in l]
    if len(cap_lines) != 1 or "more than 1000 events open at once: 4000 of them" not in cap_lines[0]:
        errors.append("want one warning about 4000 events beyond the cap of 1000, got: %r" % err)
    if "10 stop(s)" not in err:
        errors.append("late stops of evicted events not reported as orphans: %r" % err)
    events = []
    with open(out) as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["recordType"] == "event":
                events.append((int(rec["eventAddr"], 16) & 0xFFFFFFFFFFFFFFFF, rec.get("incomplete", False)))
    ids = [i for i, _ in events]
    if sorted(ids) != list(range(1, 5001)):
        errors.append("events written: %d, want ids 1..5000 once each" % len(ids))
    if ids[:4000] != list(range(1, 4001)) or not all(inc for _, inc in events[:4000]):
        errors.append("the first 4000 event lines are not the oldest events, unfinished, in start order")
    complete = sorted(i for i, inc in events if not inc)
    if complete != list(range(4991, 5001)):
        errors.append("complete events %r, want 4991..5000" % complete[:20])
    rc, _, err = run([ncclscope, "export", small, "--max-open", "1000", "--format", "chrome", "-o",
                      os.path.join(work, "open.json")])
    if rc != 0:
        errors.append("chrome export exited %d: %s" % (rc, err))

    big = os.path.join(work, "open-big")
    os.makedirs(big, exist_ok=True)
    rc, _, err = run([gen, "--case", "open", big, "300000"])
    if rc:
        errors.append("gen_trace (big) failed: " + err)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rc, _, err = run([ncclscope, "export", big, "--max-open", "1000", "-o", os.path.join(work, "big.jsonl")])
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if rc != 0:
        errors.append("big export exited %d" % rc)
    # The largest child so far is the export (gen_trace holds one small file in memory).
    if rss_kb > 60 * 1024:
        errors.append("peak RSS %d kB with --max-open 1000 (before: %d kB)" % (rss_kb, before))
    if "299000 of them" not in err:
        errors.append("big: want 299000 beyond the cap: %r" % err)
    for e in errors:
        print(e)
    print("open cap: peak RSS %d kB for 300000 never-stopped events at --max-open 1000: %s" %
          (rss_kb, "FAIL" if errors else "ok"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
