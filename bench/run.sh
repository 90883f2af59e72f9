#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ncclscope benchmark: one command, prints tables, writes bench/results-<host>.json.
#
#   bench/run.sh [--quick] [--build DIR] [--reps N]
#
# Builds (Release) into DIR (default build-bench), then measures, with the
# configurations of each table interleaved inside one process and medians
# of the repetitions reported:
#   micro   ns per call sequence in a tight loop (empty plugin vs ncclscope),
#           1/4/16 threads, own communicator each and one shared
#   macro   ns per start/stop/record per thread kind and per collective in
#           the simulator's --fast workload: none, empty, ncclscope default
#           mask, ncclscope all events (NCCLSCOPE_EVENT_MASK=0x7FFF)
#   rate    the writer thread's CPU at 1 M records/s, bytes on disk per record
#   rss     VmRSS at 10^6, 10^7, 10^8 records (10^7 with --quick)
#   trace   bytes per record/event on the simulator's default scenario
#   export  `ncclscope export` throughput (records/s) on the rate trace, formats alternated, medians
# Nothing here is a test: numbers are printed, not asserted (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=build-bench
REPS=15
QUICK=0
. bench/options.sh
bench_options 20 "--build=BUILD --reps=REPS" "--quick=QUICK" "$@"
[ "$QUICK" = 1 ] && REPS=5

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
for target in ncclscope-sim nccl-profiler-empty nccl-profiler-ncclscope ns-bench-rate ns-trace-stats ncclscope; do
  cmake --build "$BUILD" -j2 --target $target >/dev/null 2>&1 ||
    echo "bench: warning: building $target failed; using the binary already in $BUILD, if any" >&2
done
B=$ROOT/$BUILD
SIM=$B/ncclscope-sim
PLUGIN=$B/libnccl-profiler-ncclscope.so
HOST=$(hostname -s 2>/dev/null || hostname)
RAW=$(mktemp -d /tmp/ncclscope-bench.XXXXXX)
trap 'rm -rf "$RAW"' EXIT
export NCCLSCOPE_DUMP_DIR=$RAW/dump NCCLSCOPE_NO_CUDA=1
log() { echo "bench: $*" >&2; }

# ---- micro: tight loops; the writer holds more open events so that 16 threads
# sharing one communicator do not make it close them early (not on the hot path).
for shared in "" "--bench-shared-comm"; do
  for t in 1 4 16; do
    log "micro threads=$t ${shared:-own-comm}"
    NCCLSCOPE_SLAB_EVENTS=262144 "$SIM" --plugin "$PLUGIN" --bench-micro --bench-threads "$t" $shared \
      --bench-reps "$REPS" | grep '^BENCH_MICRO ' | sed 's/^BENCH_MICRO //' >>"$RAW/micro.jsonl"
    rm -rf "$NCCLSCOPE_DUMP_DIR"
  done
done

# ---- macro: the simulator workload; default mask and all events alternate.
MREPS=$(( REPS / 3 > 1 ? REPS / 3 : 2 ))
for t in 2 4 16; do
  for r in $(seq 1 "$MREPS"); do
    for mask in default all; do
      log "macro ranks=$t mask=$mask rep=$r"
      if [ $mask = all ]; then m=0x7FFF; else m=; fi
      NCCLSCOPE_EVENT_MASK=$m "$SIM" --plugin "$PLUGIN" --bench --bench-threads "$t" --bench-reps 3 --iters 2 |
        grep '^BENCH ' | sed "s/^BENCH /{\"mask\":\"$mask\",\"rep\":$r,\"bench\":/; s/\$/}/" >>"$RAW/macro.jsonl"
      rm -rf "$NCCLSCOPE_DUMP_DIR"
    done
  done
done

# ---- rate: writer CPU at 1 M records/s (10 s), bytes per record.
log "rate 1M records/s"
"$B/ns-bench-rate" --plugin "$PLUGIN" --records 10000000 --rate 1000000 | sed 's/^RATE //' >"$RAW/rate.json"
"$B/ns-trace-stats" "$NCCLSCOPE_DUMP_DIR" >"$RAW/rate_trace.json"

# ---- export throughput on that trace (10^7 records): the two formats
# alternate, XREPS runs each; per format the median wall time (and CPU time,
# user + sys of the export process) goes to export.jsonl. Output goes to the
# same disk as the trace and is removed between runs (outside the timing).
XREPS=$(( REPS / 3 > 3 ? REPS / 3 : 3 ))
if [ -x "$B/ncclscope" ]; then
  log "export jsonl/chrome, $XREPS runs each"
  python3 "$ROOT/bench/export_timing.py" json "$B/ncclscope" "$NCCLSCOPE_DUMP_DIR" "$RAW/export.out" "$XREPS" \
    jsonl chrome >"$RAW/export.jsonl" ||
    log "export failed"
else
  log "no $B/ncclscope: export skipped"
fi
rm -rf "$NCCLSCOPE_DUMP_DIR"

# ---- rss over run length, paced at 2 M records/s (the writer keeps up without drops here).
if [ "$QUICK" = 1 ]; then N=10000000; MS=1000000,10000000; else N=100000000; MS=1000000,10000000,100000000; fi
log "rss up to $N records"
"$B/ns-bench-rate" --plugin "$PLUGIN" --records $N --rate 2000000 --milestones $MS | sed 's/^RATE //' >"$RAW/rss.json"
"$B/ns-trace-stats" "$NCCLSCOPE_DUMP_DIR" >"$RAW/rss_trace.json"
rm -rf "$NCCLSCOPE_DUMP_DIR"

# ---- bytes per record on the simulator's default scenario (real event mix).
for mask in default all; do
  log "trace size, default scenario, mask=$mask"
  if [ $mask = all ]; then m=0x7FFF; else m=; fi
  NCCLSCOPE_EVENT_MASK=$m "$SIM" --plugin "$PLUGIN" --fast --iters 20 >/dev/null
  "$B/ns-trace-stats" "$NCCLSCOPE_DUMP_DIR" | sed "s/^/{\"mask\":\"$mask\",\"stats\":/; s/\$/}/" >>"$RAW/scenario.jsonl"
  rm -rf "$NCCLSCOPE_DUMP_DIR"
done

python3 "$ROOT/bench/report.py" "$RAW" "$ROOT/bench/results-$HOST.json"
