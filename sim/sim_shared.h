/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: layout of the area shared by all simulator processes.
 * Written by app and proxy threads of every process; all fields are atomics
 * or written before a release store that readers acquire.
 */
#ifndef NCCLSCOPE_SIM_SHARED_H
#define NCCLSCOPE_SIM_SHARED_H
#include "sim.h"

#define SIM_PXN_TASKS 16

typedef struct {
  _Atomic uint64_t op; /* release-stored op index + 1 after the fields below are written */
  uint64_t ctx;
  uint64_t task[SIM_PXN_TASKS];
  int mask;
  int pid;
} simPxnPub;

struct simShared {
  /* barrier: per communicator slot and rank, the index + 1 of the last op whose kernel started */
  _Atomic uint64_t arrivedOp[SIM_MAX_COMMS][SIM_MAX_RANKS / 4];
  _Atomic int abortedOp[SIM_MAX_COMMS]; /* op index + 1 of a collective given up as hung */
  /* end barrier: per communicator slot and rank, the index + 1 of the last op whose data is done on all its
   * channels (release-stored after endAt: when that rank's kernel would end alone, modelled time) */
  _Atomic uint64_t endOp[SIM_MAX_COMMS][SIM_MAX_RANKS / 4];
  _Atomic uint64_t endAt[SIM_MAX_COMMS][SIM_MAX_RANKS / 4];
  simPxnPub pxn[SIM_MAX_COMMS][SIM_MAX_RANKS / 4];
  /* nccl_cost.c: every process's modelled NCCL-side ns per bit, per thread kind (app, proxy, gpu), and ops */
  _Atomic uint64_t costBitNs[SIM_COST_BITS];
  _Atomic uint64_t costWhereNs[3];
  _Atomic uint64_t costOps, costCtrlEvents;
};

#endif
