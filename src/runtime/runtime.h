/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: init and finalize, version-independent (cold paths). Called by
 * the ABI adapters (src/abi), which turn NCCL's types into these and the
 * status back into ncclResult_t. */
#ifndef NCCLSCOPE_RUNTIME_H
#define NCCLSCOPE_RUNTIME_H

#include <stdint.h>

#include "log/log.h"

typedef struct {
  int version;            /* the ncclProfiler_vN whose init NCCL called */
  int* mask;              /* NCCL's eActivationMask */
  uint64_t comm_id;       /* commId (v5+) / commHash (v4); 0 unknown */
  const char* comm_name;  /* may be NULL */
  int nnodes, nranks, rank; /* -1 when the version does not pass them */
  ns_log_sink_fn log;     /* NCCL's logger behind the ABI layer's sink; NULL before v4 */
} ns_init_args;

/* Never fails (NCCL must never see a failed init: a failed init crashes
 * NCCL 2.23-2.27 at teardown, and 2.30 unloads the library under live
 * contexts). On any trouble (dump directory, trace file, memory, a full
 * context table) *context is a context that records nothing, and one
 * warning per loaded instance names the cause. */
void ns_runtime_init(void** context, const ns_init_args* a);
/* Accepts every context init handed out, the recording-nothing one too. */
void ns_runtime_finalize(void* context);

/* The process exits (or unloads us) with communicators alive: the writer
 * ends the trace (NS_END_EXIT) and is joined; memory stays mapped. Later
 * finalizes only drop their reference. */
void ns_runtime_process_exit(void);

#endif
