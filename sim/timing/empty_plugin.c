/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: libnccl-profiler-empty.so, the do-nothing baseline plugin.
 *
 * Exports ncclProfiler_v6 only. init enables every event (0x7FFF) so that the
 * simulator takes every path, or SIM_BASELINE_MASK's; every start returns a NULL handle. Used by
 * --bench as the cost floor of a plugin call. Any NCCL thread may call it.
 */
#include "timing/baseline_plugin.h"

static ncclResult_t emptyStart(void* context, void** eHandle, ncclProfilerEventDescr_v6_t* eDescr) {
  (void)context, (void)eDescr;
  *eHandle = NULL;
  return ncclSuccess;
}

static ncclResult_t emptyStop(void* eHandle) {
  (void)eHandle;
  return ncclSuccess;
}

static ncclResult_t emptyRecord(void* eHandle, ncclProfilerEventState_t eState,
                                ncclProfilerEventStateArgs_v6_t* eStateArgs) {
  (void)eHandle, (void)eState, (void)eStateArgs;
  return ncclSuccess;
}

NS_BASELINE_PLUGIN("ncclscope-empty", emptyStart, emptyStop, emptyRecord);
