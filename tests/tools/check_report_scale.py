#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ncclscope report` over the synthetic traces of bench/report_scale.sh
(tests/tools/gen_ranks.c), checked against what the generator put in them.

usage: check_report_scale.py WORKDIR   (env: NCCLSCOPE, GEN_RANKS)

gen_ranks DIR 256 170: 256 ranks, 8 per process (32 trace files), 8
processes per host (4 hosts), one world communicator, 170 AllReduces per
rank (10 of each of the 17 sizes 1 KiB .. 64 MiB). Arrivals at base + U[0,
20 us), rank 85 (256 / 3) at base + 300 us + U[0, 20 us); every rank ends
at base + 700 us. Host h >= 1's CLOCK_MONOTONIC is off host 0's by the h-th
xorshift64 draw (seed 0x9E3779B97F4A7C15) mod 5 s, and its anchors say so.

What the report must say, worked out by hand from that:
  - 17 rows, one per size: 256 ranks, 10 calls each, min(5, 10 / 4) = 2
    warm-up calls per rank (512), 2,048 timed calls; each call lasts 700 us
    minus its arrival (680..700 us; the late rank 380..400 us), so the mean
    is in (678.8, 698.8] us (255 ranks at 680..700, one at 380..400), and
    the median in [680, 700] us; basis enqueue (no GPU times).
  - lateness: 170 collectives, rank 85 the only straggler, its median
    lateness 300 us minus the median's jitter: in [280, 320] us; every other
    rank's within [-20, 20] us.
  - crossRank: 170 collectives compared, none partial, rank 85 last at every
    one of them (its 300 us against the others' 20 us of jitter).
  - hosts: 4; each host's clock offset within 1 us of the generator's.
  - no hang; 43,520 Coll events.
Exit 0 pass, 1 fail. Stdlib only.
"""
import json
import os
import statistics
import subprocess
import sys

RANKS, COLLS, RANKS_PER_PROC, PROCS_PER_HOST = 256, 170, 8, 8
STRAGGLER = RANKS // 3
SIZES = 17
MASK = (1 << 64) - 1


def host_offsets():
    """gen_ranks.c's host clock offsets (ns): host 0 none, then one xorshift64 draw each."""
    state = 0x9E3779B97F4A7C15
    nhosts = RANKS // RANKS_PER_PROC // PROCS_PER_HOST
    off = [0]
    for _ in range(1, nhosts):
        x = state
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        state = x
        off.append(x % 5000000000)
    return off


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    work = sys.argv[1]
    dump = os.path.join(work, "dump")
    os.makedirs(dump, exist_ok=True)
    for n in os.listdir(dump):
        os.unlink(os.path.join(dump, n))
    subprocess.run([os.environ["GEN_RANKS"], dump, str(RANKS), str(COLLS)], check=True, stdout=subprocess.DEVNULL)
    r = subprocess.run([os.environ["NCCLSCOPE"], "report", dump, "-q"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check(r.returncode == 0, "report exited %d: %s" % (r.returncode, r.stdout.decode(errors="replace")[-2000:]))
    with open(os.path.join(dump, "summary.json")) as f:
        s = json.load(f)

    rows = s["collectives"]
    check(sorted(c["bytes"] for c in rows) == [1024 << k for k in range(SIZES)],
          "rows' sizes: %s" % [c["bytes"] for c in rows])
    per_rank = COLLS // SIZES
    warm = min(5, per_rank // 4)
    for c in rows:
        what = "row of %d B" % c["bytes"]
        check(c["func"] == "AllReduce" and c["nranks"] == RANKS and c["ranks"] == RANKS, what + ": %s" % c)
        check(c["count"] == c["bytes"] // 4 and c["dtype"] == "ncclFloat32", what + ": %s" % c)
        check(c["callsPerRankMin"] == per_rank and c["callsPerRankMax"] == per_rank, what + ": %s" % c)
        check(c["warmupCalls"] == warm * RANKS and c["timedCalls"] == (per_rank - warm) * RANKS, what + ": %s" % c)
        lo, hi = (255 * 680 + 380) / 256, (255 * 700 + 400) / 256
        check(lo < c["timeUs"] <= hi, what + ": mean %.3f us, want (%.1f, %.1f]" % (c["timeUs"], lo, hi))
        check(680 * 0.99 <= c["p50Us"] <= 700 * 1.01, what + ": p50 %.3f us" % c["p50Us"])
        check(c["maxUs"] <= 700 and c["basis"] == "enqueue", what + ": %s" % c)

    late = s["lateness"]
    check(len(late) == 1, "lateness of %d communicators" % len(late))
    L = late[0]
    check(L["nranks"] == RANKS and L["collectives"] == COLLS, "lateness: %d ranks %d collectives"
          % (L["nranks"], L["collectives"]))
    check(L["outliers"] == [STRAGGLER], "stragglers %s, want [%d]" % (L["outliers"], STRAGGLER))
    by_rank = {x["rank"]: x for x in L["ranks"]}
    check(sorted(by_rank) == list(range(RANKS)), "lateness of %d ranks" % len(by_rank))
    check(280 <= by_rank[STRAGGLER]["medianUs"] <= 320, "the straggler's median %.3f us"
          % by_rank[STRAGGLER]["medianUs"])
    others = [x["medianUs"] for k, x in by_rank.items() if k != STRAGGLER]
    check(max(abs(v) for v in others) <= 20, "another rank's median lateness %.3f us" % max(others, key=abs))
    check(all(x["collectives"] == COLLS for x in by_rank.values()), "a rank with fewer collectives")

    cr = s["crossRank"]
    check(len(cr) == 1 and cr[0]["compared"] == COLLS and cr[0]["partial"] == 0, "crossRank %s" %
          {k: v for k, v in cr[0].items() if k != "lastCounts"})
    check(cr[0]["lastRank"] == STRAGGLER and cr[0]["lastShare"] == 1.0, "last rank %d share %.3f"
          % (cr[0]["lastRank"], cr[0]["lastShare"]))
    check(cr[0]["lastCounts"][STRAGGLER] == COLLS and sum(cr[0]["lastCounts"]) == COLLS, "lastCounts")

    want_off = host_offsets()
    hosts = {h["host"]: h for h in s["hosts"]}
    check(sorted(hosts) == ["host%04d" % i for i in range(len(want_off))], "hosts %s" % sorted(hosts))
    ref = want_off[int([h for h in s["hosts"] if h["reference"]][0]["host"][4:])]
    for i, off in enumerate(want_off):
        got = hosts["host%04d" % i]["clockOffsetNs"]
        check(abs(got - (off - ref)) <= 1000, "host%04d: clock offset %d ns, generated %d" % (i, got, off - ref))

    check(s["hangs"] == [], "hangs: %s" % s["hangs"])
    colls = [e for e in s["events"] if e["type"] == "ncclProfileColl"]
    check(colls and colls[0]["events"] == RANKS * COLLS, "Coll events: %s" % colls)
    print("PASS: 17 rows, straggler rank %d (median %.1f us), %d host offsets as generated"
          % (STRAGGLER, by_rank[STRAGGLER]["medianUs"], len(want_off)))


if __name__ == "__main__":
    main()
