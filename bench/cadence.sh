#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The plugin's cost at the cadence NCCL calls it (ncclscope-sim --bench-cadence),
# one gap per run so that the drops of each gap are the plugin's own count for it.
#   bench/cadence.sh [BUILD_DIR] [THREADS] [REPS]     e.g. bench/cadence.sh build 1 5
# Prints per gap and sequence: ns inside the plugin calls per collective (empty
# plugin, ncclscope, added, added per event), the same added per event for the
# floor plugin (sim/timing/floor_plugin.c: a timestamp and an entry per call, nothing
# else; timed in the same runs, interleaved) and the events the plugin dropped
# in that run (its trace's counters, `ns-trace-stats`), and per gap the writer
# thread's CPU per trace record (its own log line, all four sequences
# together: what the background thread pays for each record at this cadence).
# A row whose run dropped events measured the drop path: it does not count.
set -euo pipefail
B=${1:-build}
T=${2:-1}
R=${3:-5}
SIM=$B/ncclscope-sim
PLUGIN=$B/libnccl-profiler-ncclscope.so
FLOOR=$B/libnccl-profiler-floor.so
work=$(mktemp -d /tmp/ncclscope-cadence.XXXXXX)
trap 'rm -rf "$work"' EXIT
printf '| gap us | sequence | events | empty ns | ncclscope ns | added ns | added ns/event | floor added ns/event | p90 added ns | dropped (run) | writer ns/record (run) |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for gap in 1 10 100 1000; do
  NCCLSCOPE_DUMP_DIR=$work/g$gap NCCLSCOPE_NO_CUDA=1 "$SIM" --plugin "$PLUGIN" --bench-cadence --bench-gaps "$gap" \
    --bench-baseline "$FLOOR" --bench-threads "$T" --bench-reps "$R" -v >"$work/out$gap.txt" 2>"$work/err$gap.txt"
  "$B/ns-trace-stats" "$work/g$gap"/*.nstrace | tail -1 >"$work/stats$gap.json"
  python3 - "$work/out$gap.txt" "$work/err$gap.txt" "$work/stats$gap.json" <<'PY'
import json, re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("BENCH_CADENCE ")][0]
cpu = [float(m.group(1)) for m in re.finditer(r"writer thread CPU ([0-9.]+) ms", open(sys.argv[2]).read())]
b = json.loads(line[len("BENCH_CADENCE "):])
stats = json.load(open(sys.argv[3]))
dropped, events, records = stats.get("dropped", 0), stats.get("events", 0), stats.get("records", 0)
writer = f"{sum(cpu) * 1e6 / records:.0f}" if cpu and records else "-"
for r in b["rows"]:
    print(f"| {r['gap_us']} | {r['seq']} | {r['events']} | {r['empty_ns']:.0f} | {r['plugin_ns']:.0f} | {r['added_ns']:.0f} | "
          f"{r['added_per_event_ns']:.1f} | {(r['baseline_ns'] - r['empty_ns']) / r['events']:.1f} | {r['p90_added_ns']:.0f} | {dropped} of {dropped + events} | {writer} |")
PY
done
