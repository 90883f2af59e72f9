#!/usr/bin/env bash
# ncclscope benchmark: `ncclscope export` throughput, records per second.
#
#   bench/export.sh [--build DIR] [--reps N] [--records N] [--formats "jsonl chrome perfetto"] [--out DIR]
#                   [--baseline EXE]
#
# Builds (Release) into DIR (default build-bench), records the flood trace
# (ns-bench-rate: --records N records [10^7], 1 M/s, a ring large enough
# that nothing is dropped: ProxyOp/ProxyStep events with 3 states each),
# then exports it REPS times per format [5], formats alternated, to a file
# in --out (default: next to the trace, under /tmp), removed between runs
# and outside the timing. Prints per run and per format the median wall
# time, CPU time (user + sys) and records/s (the trace's records, counted by
# ns-trace-stats, / wall time; and / CPU time, which a loaded machine or a
# slow disk disturbs less).
# --baseline EXE: another ncclscope binary (an older build) run on the same
# trace, alternated with this one, for before/after tables.
# A benchmark, not a test: nothing is asserted (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-bench
REPS=5
RECORDS=10000000
FORMATS="jsonl chrome perfetto"
OUT=
BASELINE=
. bench/options.sh
bench_options 14 "--build=BUILD --reps=REPS --records=RECORDS --formats=FORMATS --out=OUT --baseline=BASELINE" "" "$@"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" -j2 --target ncclscope ns-bench-rate ns-trace-stats nccl-profiler-ncclscope >/dev/null
B=$PWD/$BUILD
RAW=$(mktemp -d /tmp/ncclscope-export-bench.XXXXXX)
trap 'rm -rf "$RAW"' EXIT
[ -n "$OUT" ] || OUT=$RAW
echo "export bench: recording $RECORDS records" >&2
NCCLSCOPE_DUMP_DIR=$RAW/dump NCCLSCOPE_NO_CUDA=1 NCCLSCOPE_RING_KB=16384 NCCLSCOPE_SLAB_EVENTS=262144 \
  "$B/ns-bench-rate" --plugin "$B/libnccl-profiler-ncclscope.so" --records "$RECORDS" --rate 1000000 >/dev/null
"$B/ns-trace-stats" "$RAW/dump" >"$RAW/stats.json"
python3 - "$B/ncclscope" "$RAW/dump" "$OUT/export.out" "$REPS" "$RAW/stats.json" "$BASELINE" $FORMATS <<'PY'
import json, os, resource, statistics, subprocess, sys, time
exe, dump, out, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
baseline = sys.argv[6]
exes = [("this", exe)] + ([("baseline", baseline)] if baseline else [])
stats = json.load(open(sys.argv[5]))
records = stats["records"]
formats = sys.argv[7:]
trace_bytes = sum(os.path.getsize(os.path.join(dump, f)) for f in os.listdir(dump) if f.endswith(".nstrace"))
print("trace: %d records (%d dropped while recording), %.1f MB; %d runs per format, alternated" % (
    records, stats["dropped"], trace_bytes / 1e6, reps))
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
        print("  %-8s %-8s %6.2f s wall %6.2f s cpu %6.2f M rec/s  %8.1f MB%s" % (
            label, fmt, wall, cpu, records / wall / 1e6, size / 1e6, "" if rc == 0 else "  (exit %d)" % rc))
        if os.path.exists(out):
            os.remove(out)
print("%-8s %-8s %10s %10s %12s %12s %10s" % ("binary", "format", "wall", "cpu", "M rec/s", "M rec/s cpu", "output"))
for (label, fmt), r in runs.items():
    wall = statistics.median(x[0] for x in r)
    cpu = statistics.median(x[1] for x in r)
    print("%-8s %-8s %9.2fs %9.2fs %12.2f %12.2f %8.1fMB" % (label, fmt, wall, cpu, records / wall / 1e6,
                                                             records / cpu / 1e6, r[0][2] / 1e6))
PY
