#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ncclscope bench: the hot path's instruction counts, repeatable on a noisy machine.
#
#   bench/hotpath.sh [BUILD_DIR] [--disasm]
#
# Runs `ncclscope-sim --bench-micro` under valgrind's callgrind, one call
# sequence at a time, collecting only inside the worker threads, and prints
# instructions (Ir) per sequence for the empty plugin and ncclscope; then
# the static size (instructions) of each hot-path function in the .so, and
# with --disasm their disassembly (objdump), as style.md asks.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-bench}
[ "${1:-}" = --disasm ] && B=build-bench
DISASM=0
for a in "$@"; do [ "$a" = --disasm ] && DISASM=1; done
SIM=$PWD/$B/ncclscope-sim
PLUGIN=$PWD/$B/libnccl-profiler-ncclscope.so
command -v valgrind >/dev/null || { echo "hotpath: valgrind missing" >&2; exit 1; }
TMP=$(mktemp -d /tmp/ncclscope-hot.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export NCCLSCOPE_DUMP_DIR=$TMP/dump NCCLSCOPE_NO_CUDA=1

# Sequences per run: reps(2) x batches(16) x batch(64) per configuration.
N=$((2 * 16 * 64))
printf "%-14s %14s %14s %14s\n" sequence empty_Ir/seq nsc_Ir/seq added_Ir/seq
# Instructions inside each plugin's entry points: callgrind collects only while
# one of them runs (--toggle-collect), so the total needs no attribution of
# inlined or tail-called code (which callgrind_annotate's inclusive view
# splits differently from one build to the next).
total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",","",$1); print $1 + 0; exit}'; }
for seq in step_pair step_3states coll_pair; do
  for who in empty ncclscope; do
    if [ $who = empty ]; then toggles="--toggle-collect=emptyStart --toggle-collect=emptyStop --toggle-collect=emptyRecord"
    else toggles="--toggle-collect=start_v6 --toggle-collect=ns_abi_stop --toggle-collect=state_v6"; fi
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.$seq.$who" $toggles \
      "$SIM" --plugin "$PLUGIN" --bench-micro --bench-reps 2 --bench-seq $seq --bench-settle-ms 30 >/dev/null 2>&1
  done
  e=$(total "$TMP/cg.$seq.empty")
  n=$(total "$TMP/cg.$seq.ncclscope")
  awk -v s=$seq -v e="$e" -v n="$n" -v c=$N 'BEGIN {printf "%-14s %14.1f %14.1f %14.1f\n", s, e/c, n/c, (n-e)/c}'
done

echo
echo "static size of the hot-path functions (instructions) in $PLUGIN:"
for f in start_v6 ns_abi_stop state_v6 ns_capture_start ns_capture_stop ns_capture_state; do
  c=$(objdump -d --no-show-raw-insn "$PLUGIN" | awk -v f="<$f>:" '$2 == f {on=1; next} on && /^$/ {on=0} on {n++} END {print n+0}')
  printf "  %-18s %5d\n" "$f" "$c"
done
if [ $DISASM = 1 ]; then
  for f in ns_capture_start ns_capture_stop ns_capture_state; do
    echo; objdump -d --no-show-raw-insn -M intel "$PLUGIN" | awk -v f="<$f>:" '$2 == f {on=1} on && /^$/ {on=0} on'
  done
fi
