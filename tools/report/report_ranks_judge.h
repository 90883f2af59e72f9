/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI, cross-rank view: each collective judged across its ranks:
 * lateness per rank and the outliers among them, who arrived last, and the
 * hang of each communicator (report_ranks_judge.c says how). */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_JUDGE_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_JUDGE_H

#include "report/report_ranks_model.h"

#define NS_XR_LATE_FLOOR_NS 200000.0
#define NS_XR_LATE_MADS 5.0
#define NS_XR_LATE_MIN_OPS 10
#define NS_XR_LAST_Z 8.0 /* ... or last at a collective far more often than chance (binomial z) */
#define NS_XR_LAST_Z_MIN 3.0 /* the deviation rule also wants a rank last more often than chance */

/* The collectives sorted and on aligned clocks: walk them, fill every
 * communicator's lateness, crossRank and hang, and count the hangs. */
void ns_xrank_judge(ns_xr* x);

#endif
