/* ncclscope-sim: libnccl-profiler-empty.so, the do-nothing baseline plugin.
 *
 * Exports ncclProfiler_v6 only. init enables every event (0x7FFF) so that the
 * simulator takes every path; every start returns a NULL handle. Used by
 * --bench as the cost floor of a plugin call. Any NCCL thread may call it.
 */
#include "abi/nccl_profiler.h"

#define EXPORT __attribute__((visibility("default")))

static ncclResult_t emptyInit(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                              int nNodes, int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)commId, (void)commName, (void)nNodes, (void)nranks, (void)rank, (void)logfn;
  __atomic_store_n(eActivationMask, NCCL_PROFILE_ALL_MASK, __ATOMIC_RELAXED); /* NCCL reads it relaxed */
  *context = NULL;
  return ncclSuccess;
}

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

static ncclResult_t emptyFinalize(void* context) {
  (void)context;
  return ncclSuccess;
}

EXPORT ncclProfiler_v6_t ncclProfiler_v6 = {"ncclscope-empty", emptyInit, emptyStart, emptyStop, emptyRecord,
                                            emptyFinalize};
