#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope bench: `ncclscope report` naming a hang from the flight records
of a large job alone (docs/performance.md, "report at scale").

usage: bench/report_hang_scale.py NCCLSCOPE RANKS [WORK_DIR [OPS]]

Writes one flight record per process (8 ranks each, 8 processes per host,
each host's CLOCK_MONOTONIC seconds off the first's, its realtime offset
saying by how much), as the plugin's watchdog writes them: every rank of one
world communicator has its last OPS [16] AllReduces done and is stuck in the
next one (an episode each, waiting for the network), except rank RANKS/3,
which never posted it. Then times `ncclscope report WORK_DIR` over the
flight records alone (no trace) with its peak RSS, and checks that it names
that hang: the collective, the rank that never posted it, every other rank
stuck in it. Not a test: prints the numbers. Stdlib only.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

RANKS_PER_PROC, PROCS_PER_HOST = 8, 8
COMM_ID = "0x5ca1e00000000002"
T0 = 1000000000000  # ns, the first host's CLOCK_MONOTONIC at the first op
PERIOD = 2000000
REALTIME = 1700000000000000000


def write(work, nranks, nops):
    rng = random.Random(1)
    nprocs = nranks // RANKS_PER_PROC
    hung = nranks // 3
    stuck_seq = nops
    host_off = {}
    for p in range(nprocs):
        host = p // PROCS_PER_HOST
        off = host_off.setdefault(host, rng.randrange(0, 5000000000) if host else 0)
        now = T0 + (nops + 1) * PERIOD + 3000000000 + off
        comms, episodes = [], []
        for r in range(RANKS_PER_PROC):
            rank = p * RANKS_PER_PROC + r
            ops = []
            for k in range(nops + 1):
                if k == stuck_seq and rank == hung:
                    break
                start = T0 + k * PERIOD + rng.randrange(0, 20000) + off
                done = k < stuck_seq
                ops.append({"id": (r << 40) | (k + 1), "type": "Coll", "func": "AllReduce", "seq": k,
                            "state": "done" if done else "onGpu", "startNs": start, "gpuNs": start + 5000,
                            "doneNs": T0 + k * PERIOD + 700000 + off if done else 0})
            comms.append({"comm": r + 1, "commId": COMM_ID, "name": "world", "rank": rank, "nranks": nranks,
                          "opsRecorded": len(ops), "opsKept": len(ops), "inFlight": 0 if rank == hung else 1,
                          "ops": ops})
            if rank != hung:
                start = ops[-1]["startNs"]
                episodes.append({"comm": r + 1, "commId": COMM_ID, "name": "world", "rank": rank, "nranks": nranks,
                                 "func": "AllReduce", "type": "Coll", "seq": stuck_seq, "state": "onGpu",
                                 "startNs": start, "detectNs": start + 1500000000, "waitedSec": 1.5,
                                 "cleared": False,
                                 "waitsFor": "network: recv from rank %d ch 0: no step posted" % ((rank - 1) % nranks)})
        fr = {"format": "ncclscope-flightrec", "version": 1, "host": "host%04d" % (p // PROCS_PER_HOST),
              "pid": 10000 + p, "reason": "hang", "nowNs": now, "realtimeOffsetNs": REALTIME - off,
              "hangTimeoutSec": 1.5, "episodes": episodes, "communicators": comms}
        with open(os.path.join(work, "flightrec-host%04d-%d.json" % (p // PROCS_PER_HOST, 10000 + p)), "w") as f:
            json.dump(fr, f, separators=(",", ":"))
    return hung, stuck_seq


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    exe, nranks = sys.argv[1], int(sys.argv[2])
    work = sys.argv[3] if len(sys.argv) > 3 else "/tmp/ncclscope-hang-scale"
    nops = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    if nranks % RANKS_PER_PROC:
        print("RANKS must be a multiple of %d" % RANKS_PER_PROC)
        return 2
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t = time.monotonic()
    hung, seq = write(work, nranks, nops)
    size = sum(os.path.getsize(os.path.join(work, n)) for n in os.listdir(work))
    print("flight records: %d files, %.0f MB, written in %.1f s" % (len(os.listdir(work)), size / 1e6,
                                                                     time.monotonic() - t))
    r = subprocess.run(["/usr/bin/time", "-f", "report: %e s wall, %U s user, %S s sys, max RSS %M KiB", exe,
                        "report", work, "-q"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode(errors="replace")
    print("\n".join(l for l in out.splitlines() if l.startswith("report:")))
    if r.returncode != 0:
        print("report exited %d:\n%s" % (r.returncode, out[-2000:]))
        return 1
    with open(os.path.join(work, "summary.json")) as f:
        s = json.load(f)
    got = [(h["commId"], h["func"], h["seq"], h["neverPosted"], len(h["stuck"])) for h in s["hangs"]]
    ok = got == [(COMM_ID, "AllReduce", seq, [hung], nranks - 1)]
    print("hangs: %s -> %s (want AllReduce seq %d, rank %d never posted it, %d ranks stuck)"
          % (re.sub(r"\s+", " ", str(got))[:200], "as generated" if ok else "WRONG", seq, hung, nranks - 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
