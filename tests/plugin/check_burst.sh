#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# plugin.burst: a burst of 10,000 ProxySteps (start, 3 states, stop: 216 bytes
# of ring each, the most per event of NCCL's frequent events), emitted as fast
# as one thread can, never drops with the default ring: 4 MiB hold
# about 19,000 such steps even if the writer does not run during the burst.
# (A 1 MiB ring, NCCLSCOPE_RING_KB=1024, dropped 5,146 of them in one run.) Five bursts, each read
# back from its trace: every record there, no drop counted.
#   check_burst.sh NS-BENCH-RATE NS-TRACE-STATS PLUGIN.so WORKDIR
set -eu
bench=$1 stats=$2 plugin=$3 work=$4
unset NCCLSCOPE_RING_KB NCCLSCOPE_SLAB_EVENTS NCCLSCOPE_EVENT_MASK
i=1
while [ $i -le 5 ]; do
  dump=$work/burst-$i
  rm -rf "$dump"
  mkdir -p "$dump"
  NCCLSCOPE_DUMP_DIR=$dump "$bench" --plugin "$plugin" --records 50000 --rate 0 > "$dump/rate.out"
  s=$("$stats" "$dump"/*.nstrace)
  echo "burst $i: $(grep -o '"null_handles":[0-9]*' "$dump/rate.out"); $(echo "$s" | grep -o '"records":[0-9]*'), $(echo "$s" | grep -o '"dropped":[0-9]*')"
  grep -q '"null_handles":0,' "$dump/rate.out" || { echo "FAIL: NULL handles in burst $i"; exit 1; }
  # 10,000 steps x 5 records, the ProxyOp's start and its close at the end
  echo "$s" | grep -q '"records":50002,' || { echo "FAIL: burst $i: records missing from the trace"; exit 1; }
  echo "$s" | grep -q '"dropped":0,' || { echo "FAIL: burst $i: drops counted"; exit 1; }
  i=$((i + 1))
done
echo PASS
