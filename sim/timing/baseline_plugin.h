/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: what the baseline plugins (empty_plugin.c, floor_plugin.c)
 * share: an init that enables every event (so that the simulator takes
 * every path; SIM_BASELINE_MASK=M sets M instead, e.g. the masks of a
 * plugin's detail levels in bench/detail_cost.py) and gives no context, a
 * finalize with nothing to do, and the one exported ncclProfiler_v6 table. */
#ifndef NCCLSCOPE_SIM_BASELINE_PLUGIN_H
#define NCCLSCOPE_SIM_BASELINE_PLUGIN_H

#include <stdlib.h>

#include "abi/nccl_profiler.h"

static ncclResult_t baselineInit(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                                 int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)commId, (void)commName, (void)nNodes, (void)nranks, (void)rank, (void)logfn;
  const char* m = getenv("SIM_BASELINE_MASK");
  int mask = m && *m ? (int)strtol(m, NULL, 0) : NCCL_PROFILE_ALL_MASK;
  __atomic_store_n(eActivationMask, mask, __ATOMIC_RELAXED); /* NCCL reads it relaxed */
  *context = NULL;
  return ncclSuccess;
}

static ncclResult_t baselineFinalize(void* context) {
  (void)context;
  return ncclSuccess;
}

/* The plugin's table, named `name`, with its start, stop and record. */
#define NS_BASELINE_PLUGIN(name, start, stop, record)                                                   \
  __attribute__((visibility("default"))) ncclProfiler_v6_t ncclProfiler_v6 = {name, baselineInit, start, \
                                                                                stop, record, baselineFinalize}

#endif
