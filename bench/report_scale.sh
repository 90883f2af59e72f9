#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ncclscope bench: `ncclscope report` at scale: synthetic traces of
# RANKS ranks x COLLS collectives (tests/tools/gen_ranks.c: 8 ranks per
# process, 8 processes per host, hosts' clocks seconds apart, one straggler),
# then the report over them, timed with its peak RSS. Not a test: prints the
# numbers (docs/performance.md, "report at scale").
# usage: bench/report_scale.sh [BUILD_DIR [RANKS [COLLS [WORK_DIR]]]]
#   BASE=OTHER_BUILD_DIR  also runs that build's report over the same traces
#                         (after this one) and compares summary.txt and
#                         summary.json byte for byte
#   KEEP=1                keeps the traces (default: removed at the end when
#                         WORK_DIR was not given)
set -euo pipefail
build=${1:-build}
ranks=${2:-1024}
colls=${3:-1000}
work=${4:-}
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/ncclscope-scale.XXXXXX)
  [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/dump"
rm -f "$work"/dump/*
t0=$(date +%s.%N)
"$build/gen_ranks" "$work/dump" "$ranks" "$colls"
t1=$(date +%s.%N)
echo "traces: $(ls "$work/dump" | wc -l) files, $(du -sh "$work/dump" | cut -f1), written in $(echo "$t1 - $t0" | bc) s"

# report NAME BUILD: the report of BUILD over the traces, its outputs kept as WORK/NAME.*
report() {
  /usr/bin/time -f "report ($1, $2): %e s wall, %U s user, %S s sys, max RSS %M KiB" "$2/ncclscope" report \
    "$work/dump" -q --links 10 --text "$work/$1.txt" --json "$work/$1.json" --html "$work/$1.html"
}
report new "$build"
ls -la "$work/new.json" "$work/new.html" | awk '{print $5, $9}'
python3 - "$work/new.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["lateness"]:
    print("lateness: communicator %s, %d ranks, %d collectives, stragglers named: %s" % (c["commId"], c["nranks"], c["collectives"], c["outliers"]))
print("hosts: %d, max |clock offset| %.3f s" % (len(s["hosts"]), max(abs(h["clockOffsetNs"]) for h in s["hosts"]) / 1e9))
print("hangs: %d" % len(s["hangs"]))
PY
if [ -n "${BASE:-}" ]; then
  report base "$BASE"
  for f in txt json; do
    if cmp -s "$work/new.$f" "$work/base.$f"; then echo "summary.$f: identical"; else echo "summary.$f: DIFFERS"; fi
  done
fi
echo "work directory: $work"
