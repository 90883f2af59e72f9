/* ncclscope: init and finalize, version-independent (cold paths). */
#ifndef NCCLSCOPE_RUNTIME_H
#define NCCLSCOPE_RUNTIME_H

#include <stdint.h>

#include "abi/nccl_common.h"

typedef struct {
  int version;            /* the ncclProfiler_vN whose init NCCL called */
  int* mask;              /* NCCL's eActivationMask */
  uint64_t comm_id;       /* commId (v5+) / commHash (v4); 0 unknown */
  const char* comm_name;  /* may be NULL */
  int nnodes, nranks, rank; /* -1 when the version does not pass them */
  ncclDebugLogger_t logfn;  /* NULL before v4 */
} ns_init_args;

ncclResult_t ns_runtime_init(void** context, const ns_init_args* a);
ncclResult_t ns_runtime_finalize(void* context);

#endif
