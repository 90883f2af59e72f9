#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncclscope bench: timed `ncclscope export` runs on one trace, shared by
bench/run.sh and bench/export.sh.

usage: export_timing.py json  EXE DUMP OUT REPS FORMAT...
       export_timing.py table EXE DUMP OUT REPS STATS_JSON BASELINE_EXE FORMAT...

Each of REPS rounds exports DUMP once per format (and per binary, with a
baseline EXE that is not ""; the binaries' order alternates between rounds)
to the file OUT, removed after each run, outside the timing. Per run: wall
time, CPU time (user + sys of the export process), the output's size and
the exit status. `json` prints one line per format with the medians
(bench/report.py reads them); `table` prints every run and then a table of
the medians, in records/s over the trace's records (from ns-trace-stats).
A benchmark, not a test: nothing is asserted."""
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def time_runs(exes, dump, out, reps, formats, on_run=None):
    """{(label, format): [(wall s, cpu s, output bytes, exit status)]} over
    exes, a list of (label, binary)."""
    runs = {(label, f): [] for f in formats for label, _ in exes}
    for rep in range(reps):
        for fmt in formats:
            for label, binary in (exes if rep % 2 == 0 else exes[::-1]):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.monotonic()
                rc = subprocess.call([binary, "export", dump, "-f", fmt, "-o", out], stderr=subprocess.DEVNULL)
                wall = time.monotonic() - t0
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                size = os.path.getsize(out) if os.path.exists(out) else 0
                runs[(label, fmt)].append((wall, cpu, size, rc))
                if on_run:
                    on_run(label, fmt, wall, cpu, size, rc)
                if os.path.exists(out):
                    os.remove(out)
    return runs


def print_json(exe, dump, out, reps, formats):
    runs = time_runs([("this", exe)], dump, out, reps, formats)
    for (_, fmt), r in runs.items():
        print(json.dumps({"format": fmt, "us": int(statistics.median(x[0] for x in r) * 1e6),
                          "cpu_us": int(statistics.median(x[1] for x in r) * 1e6),
                          "out_bytes": r[0][2] if r[0][3] == 0 else 0, "reps": len(r),
                          "us_runs": [int(x[0] * 1e6) for x in r], "failed": sum(1 for x in r if x[3])}))


def print_table(exe, dump, out, reps, stats_json, baseline, formats):
    exes = [("this", exe)] + ([("baseline", baseline)] if baseline else [])
    stats = json.load(open(stats_json))
    records = stats["records"]
    trace_bytes = sum(os.path.getsize(os.path.join(dump, f)) for f in os.listdir(dump) if f.endswith(".nstrace"))
    print("trace: %d records (%d dropped while recording), %.1f MB; %d runs per format, alternated" % (
        records, stats["dropped"], trace_bytes / 1e6, reps))

    def on_run(label, fmt, wall, cpu, size, rc):
        print("  %-8s %-8s %6.2f s wall %6.2f s cpu %6.2f M rec/s  %8.1f MB%s" % (
            label, fmt, wall, cpu, records / wall / 1e6, size / 1e6, "" if rc == 0 else "  (exit %d)" % rc))

    runs = time_runs(exes, dump, out, reps, formats, on_run)
    print("%-8s %-8s %10s %10s %12s %12s %10s" % ("binary", "format", "wall", "cpu", "M rec/s", "M rec/s cpu", "output"))
    for (label, fmt), r in runs.items():
        wall = statistics.median(x[0] for x in r)
        cpu = statistics.median(x[1] for x in r)
        print("%-8s %-8s %9.2fs %9.2fs %12.2f %12.2f %8.1fMB" % (label, fmt, wall, cpu, records / wall / 1e6,
                                                                 records / cpu / 1e6, r[0][2] / 1e6))


def main():
    mode, exe, dump, out, reps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    if mode == "json":
        print_json(exe, dump, out, reps, sys.argv[6:])
    elif mode == "table":
        print_table(exe, dump, out, reps, sys.argv[6], sys.argv[7], sys.argv[8:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
