#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Starts NPROC ranks of workload.py on the machine's one GPU, each with its own
# NCCL_HOSTID, so that NCCL takes them for separate hosts and uses its network
# transport between them: that is what makes ProxyOp and ProxyStep events on a
# single GPU. Run with NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 (sockets on the
# loopback) and NCCL_PROFILER_PLUGIN naming the plugin; the rest of the
# environment passes through to every rank.
#
# usage: bench/gpu/launch.sh NPROC TAG [workload.py options]
#   Writes TAG.rN.out and TAG.rN.err per rank; exits non-zero if any rank failed.
#   LAUNCH_TIMEOUT (seconds, default 180) and LAUNCH_SIG (default TERM) bound each rank.
here=$(cd "$(dirname "$0")" && pwd)
nproc=$1
tag=$2
shift 2
port=$((20000 + RANDOM % 20000))
pids=()
for r in $(seq 0 $((nproc - 1))); do
  RANK=$r WORLD_SIZE=$nproc LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port NCCL_HOSTID=node$r \
    timeout -s "${LAUNCH_SIG:-TERM}" "${LAUNCH_TIMEOUT:-180}" python3 "$here/workload.py" "$@" \
    >"$tag.r$r.out" 2>"$tag.r$r.err" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
