/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: each rank's GPU clock placed by the
 * collectives' ends (report_ranks_gpu.c says how). */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_GPU_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_GPU_H

#include "report/report_ranks_model.h"

/* Every communicator: the ranks' GPU corrections found, and applied to their ops where they hold. */
void ns_xrank_refine_gpu_clocks(ns_xr* x);

#endif
