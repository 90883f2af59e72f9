#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ncclscope bench: `ncclscope report` at scale (issue 15): synthetic traces of
# RANKS ranks x COLLS collectives (tests/tools/gen_ranks.c: 8 ranks per
# process, 8 processes per host, hosts' clocks seconds apart, one straggler),
# then the report over them, timed with its peak RSS. Not a test: prints the
# numbers (docs/performance.md, "report at scale").
# usage: bench/report_scale.sh [BUILD_DIR [RANKS [COLLS [WORK_DIR]]]]
set -euo pipefail
build=${1:-build}
ranks=${2:-1024}
colls=${3:-1000}
work=${4:-$(mktemp -d /tmp/ncclscope-scale.XXXXXX)}
mkdir -p "$work/dump"
rm -f "$work"/dump/*
t0=$(date +%s.%N)
"$build/gen_ranks" "$work/dump" "$ranks" "$colls"
t1=$(date +%s.%N)
echo "traces: $(ls "$work/dump" | wc -l) files, $(du -sh "$work/dump" | cut -f1), written in $(echo "$t1 - $t0" | bc) s"
/usr/bin/time -f "report: %e s wall, %U s user, %S s sys, max RSS %M KiB" "$build/ncclscope" report "$work/dump" -q --links 10
ls -la "$work/dump/summary.json" "$work/dump/report.html" | awk '{print $5, $9}'
python3 - "$work/dump/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["lateness"]:
    print("lateness: communicator %s, %d ranks, %d collectives, stragglers named: %s" % (c["commId"], c["nranks"], c["collectives"], c["outliers"]))
print("hosts: %d, max |clock offset| %.3f s" % (len(s["hosts"]), max(abs(h["clockOffsetNs"]) for h in s["hosts"]) / 1e9))
PY
echo "work directory: $work"
