#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
python3 bench/export_timing.py table "$B/ncclscope" "$RAW/dump" "$OUT/export.out" "$REPS" "$RAW/stats.json" \
  "$BASELINE" $FORMATS
