/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: adapter helpers: the shared stop/finalize, v1 code names, and
 * NetPlugin descriptor decoding (hot path for NetPlugin starts: no
 * allocation, reads only what the id's type and version bits promise). */
#include "abi/adapter.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

ncclResult_t ns_abi_stop(void* eHandle) {
  ns_capture_stop(eHandle);
  return ncclSuccess;
}

/* Both always succeed: NCCL must never see a failed init (runtime.h). */
ncclResult_t ns_abi_init(void** context, const ns_init_args* a) {
  ns_runtime_init(context, a);
  return ncclSuccess;
}

ncclResult_t ns_abi_finalize(void* context) {
  ns_runtime_finalize(context);
  return ncclSuccess;
}

/* NCCL's logger, set by init (under the runtime's lifecycle mutex, before
 * the sink that reads it is installed); relaxed: it names NCCL's function,
 * which lives as long as NCCL. */
static _Atomic(ncclDebugLogger_t) g_nccl_logger;
/* NCCL prints nothing, not even a WARN, unless NCCL_DEBUG asks for WARN or
 * more (NCCL has read its nccl.conf files into the environment by the time
 * it calls init). Then our warnings also go to stderr, so a bad setting is
 * never silent. Set with the logger; relaxed for the same reason. */
static _Atomic int g_nccl_hides_warn;

static int nccl_shows_warn(void) {
  static const char* const levels[] = {"WARN", "INFO", "ABORT", "TRACE"};
  const char* dbg = getenv("NCCL_DEBUG");
  for (size_t i = 0; dbg && i < sizeof levels / sizeof levels[0]; i++)
    if (!strcasecmp(dbg, levels[i])) return 1;
  return 0;
}

static void nccl_log_line(int warn, const char* line) {
  ncclDebugLogger_t fn = atomic_load_explicit(&g_nccl_logger, memory_order_relaxed);
  if (fn) fn(warn ? NCCL_LOG_WARN : NCCL_LOG_INFO, NCCL_PROFILE | NCCL_INIT, __FILE__, __LINE__, "NCCLSCOPE %s", line);
  if (warn && atomic_load_explicit(&g_nccl_hides_warn, memory_order_relaxed))
    fprintf(stderr, "NCCLSCOPE WARN %s\n", line);
}

ns_log_sink_fn ns_abi_log_sink(ncclDebugLogger_t logfn) {
  if (!logfn) return NULL;
  atomic_store_explicit(&g_nccl_hides_warn, !nccl_shows_warn(), memory_order_relaxed);
  atomic_store_explicit(&g_nccl_logger, logfn, memory_order_relaxed);
  return nccl_log_line;
}

static const char* pick(const char* const* names, unsigned n, unsigned code) {
  return code < n ? names[code] : "unknown";
}

const char* ns_v1_func_name(unsigned code) {
  static const char* const n[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                  "AllReduce", "SendRecv", "Send", "Recv"};
  return pick(n, 8, code);
}
const char* ns_v1_algo_name(unsigned code) {
  static const char* const n[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  return pick(n, 7, code);
}
const char* ns_v1_proto_name(unsigned code) {
  static const char* const n[] = {"LL", "LL128", "SIMPLE"};
  return pick(n, 3, code);
}
const char* ns_v1_dtype_name(unsigned code) {
  static const char* const n[] = {"ncclInt8",  "ncclUint8",  "ncclInt32",   "ncclUint32",  "ncclInt64",
                                  "ncclUint64", "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16"};
  return pick(n, 10, code);
}

void ns_fill_net_plugin(ns_start_args* a, int64_t id, void* data) {
  uint64_t* n = a->num;
  const char** s = a->str;
  memset(n, 0, sizeof a->num); /* KIND 0: nothing decoded */
  ns_set_NET_PLUGIN_ID(n, s, id);
  ns_set_NET_PLUGIN_DATA(n, s, data);
  uint64_t uid = (uint64_t)id;
  uint64_t kind = uid & NCCL_PROFILER_NET_TYPE_MASK, ver = uid & NCCL_PROFILER_NET_VER_MASK;
  if (!data) return;
  if (kind == NCCL_PROFILER_NET_TYPE_IB && ver == NCCL_PROFILER_NET_IB_VER) {
    const ncclProfilerNetIbDescr_v1_t* d = data;
    if (d->type != ncclProfileQp) return;
    ns_set_NET_PLUGIN_KIND(n, s, 1);
    ns_set_NET_PLUGIN_IB_DEVICE(n, s, d->qp.device);
    ns_set_NET_PLUGIN_IB_WR_ID(n, s, d->qp.wr_id);
    ns_set_NET_PLUGIN_IB_OPCODE(n, s, d->qp.opcode);
    ns_set_NET_PLUGIN_IB_QP_NUM(n, s, d->qp.qpNum);
    ns_set_NET_PLUGIN_IB_LENGTH(n, s, d->qp.length);
  } else if (kind == NCCL_PROFILER_NET_TYPE_SOCK && ver == NCCL_PROFILER_NET_SOCKET_VER) {
    const ncclProfilerNetSockDescr_v1_t* d = data;
    if (d->type != ncclProfileSocket) return;
    ns_set_NET_PLUGIN_KIND(n, s, 2);
    ns_set_NET_PLUGIN_SOCK_FD(n, s, d->sock.fd);
    ns_set_NET_PLUGIN_SOCK_OP(n, s, d->sock.op);
    ns_set_NET_PLUGIN_SOCK_LENGTH(n, s, d->sock.length);
  }
}
