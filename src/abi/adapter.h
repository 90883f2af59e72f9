/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: helpers shared by the per-version ABI adapters (adapter_v*.c).
 * Each adapter exports one ncclProfiler_vN and turns that version's
 * descriptor into an ns_start_args with the shared per-shape fills
 * (adapter_fill.h); NCCL's types stop here. */
#ifndef NCCLSCOPE_ABI_ADAPTER_H
#define NCCLSCOPE_ABI_ADAPTER_H

#include <stdint.h>
#include <string.h>

#include "abi/adapter_fill.h"
#include "abi/nccl_profiler.h"
#include "capture/capture.h"
#include "runtime/runtime.h"

#define NS_EXPORT __attribute__((visibility("default")))
#define NS_PLUGIN_NAME "ncclscope"

/* stopEvent and finalize have one signature in every version. */
NS_HOT ncclResult_t ns_abi_stop(void* eHandle);
ncclResult_t ns_abi_finalize(void* context);
/* init of every version: the runtime's status as NCCL's result. */
ncclResult_t ns_abi_init(void** context, const ns_init_args* a);
/* The log sink for NCCL's logger (kept here, where NCCL's types are); NULL for none. */
ns_log_sink_fn ns_abi_log_sink(ncclDebugLogger_t logfn);

static inline uint64_t ns_u(const void* p) { return (uint64_t)(uintptr_t)p; }
static inline uint64_t ns_i(int64_t v) { return (uint64_t)v; } /* sign-extended */

/* State args: which value a state carries, read through the version's union
 * (v1..v3: {transSize, steps} / {appendedProxyOps}; v4+: {transSize} /
 * {appendedProxyOps} / {data} / {pTimer}; every member sits at offset 0). */
static inline int ns_state_arg_v4(int state, const void* args, uint64_t* out) {
  if (!args) return 0;
  switch (state) {
    case ncclProfilerProxyStepSendGPUWait: case ncclProfilerProxyStepSendPeerWait_v4:
    case ncclProfilerProxyStepSendWait: case ncclProfilerProxyStepRecvWait:
    case ncclProfilerProxyStepRecvFlushWait: case ncclProfilerProxyStepRecvGPUWait:
      *out = ((const ncclProfilerEventStateArgs_v4_t*)args)->proxyStep.transSize;
      return 1;
    case ncclProfilerProxyCtrlIdle: case ncclProfilerProxyCtrlActive: case ncclProfilerProxyCtrlSleep:
    case ncclProfilerProxyCtrlWakeup: case ncclProfilerProxyCtrlAppend: case ncclProfilerProxyCtrlAppendEnd:
      *out = ns_i(((const ncclProfilerEventStateArgs_v4_t*)args)->proxyCtrl.appendedProxyOps);
      return 1;
    case ncclProfilerNetPluginUpdate:
      *out = ns_u(((const ncclProfilerEventStateArgs_v4_t*)args)->netPlugin.data);
      return 1;
    case ncclProfilerKernelChStop:
    case ncclProfilerKernelPhaseStop: /* v7: the same member (no earlier version sends 31) */
      *out = ((const ncclProfilerEventStateArgs_v4_t*)args)->kernelCh.pTimer;
      return 1;
    default:
      return 0; /* GroupApi states (args are NULL), ProxyOpInProgress, unknown */
  }
}

static inline int ns_state_arg_v1(int state, const void* args, uint64_t* out) {
  if (!args) return 0;
  const ncclProfilerEventStateArgs_v1_t* s = args; /* v2 and v3 share the layout */
  if (state >= ncclProfilerProxyOpSendPosted && state <= ncclProfilerProxyOpRecvDone) {
    *out = s->proxyOp.transSize;
    return 1;
  }
  if (state >= ncclProfilerProxyCtrlIdle && state <= ncclProfilerProxyCtrlAppendEnd) {
    *out = ns_i(s->proxyCtrl.appendedProxyOps);
    return 1;
  }
  return 0;
}

/* v1 numeric codes -> the strings later versions pass. */
const char* ns_v1_func_name(unsigned code);
const char* ns_v1_algo_name(unsigned code);
const char* ns_v1_proto_name(unsigned code);
const char* ns_v1_dtype_name(unsigned code);

#endif
