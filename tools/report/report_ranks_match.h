/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: the ranks' calls compared place by place
 * (report_ranks_match.c says how). */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_MATCH_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_MATCH_H

#include "report/report_ranks_model.h"

/* Places compared after a rank's first mismatch to tell a skipped or an
 * extra collective (the rank's calls from there match the others' shifted
 * by one) from a different call. */
#define NS_XR_SHIFT_PLACES 4

/* The collectives sorted: fill every communicator's mismatches, count the
 * communicators with one. */
void ns_xrank_match_calls(ns_xr* x);

#endif
