/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the cross-rank view of `ncclscope report`: every rank's
 * collectives matched by (communicator, function, seq) over all trace files
 * and flight records of a dump directory, on clocks aligned across hosts.
 *
 *  - Hosts: each file's host clock (CLOCK_MONOTONIC) is put on one timeline
 *    through its CLOCK_REALTIME anchors (report_clocks.c), then refined from
 *    the collectives themselves; the residual skew is stated per host.
 *  - Hangs: a collective that some ranks were stuck in (a flight record's
 *    episode), or that some ranks posted and another never did although its
 *    record is complete (its trace ended cleanly, or its flight record lists
 *    the communicator) and it posted nothing of that function later. For
 *    each: every rank's state (never posted, stuck, finished) and the last
 *    collective it completed.
 *  - Lateness: per collective, each rank's arrival (kernel start, else Coll
 *    start) minus the median arrival; per rank the median and p99 of that
 *    over the run; outliers named (report_ranks_judge.c says how).
 *  - crossRank: who arrived last at each collective.
 *  - Mismatches: each rank's collectives of a communicator in the order it
 *    posted them, place by place against the other ranks': a rank that
 *    posted another function or other arguments (count, datatype, root),
 *    one that skipped a collective (it runs one behind from there) or
 *    posted one more (report_ranks_match.c).
 *
 * Memory: 48 bytes per (rank, collective) and 12 more for the lateness, plus
 * per communicator and rank about 800 bytes, per collective of a
 * communicator 32 while its GPU clocks are placed, per flight-record
 * episode 700 and per distinct set of call arguments 48: 1,024 ranks x
 * 1,000 collectives is ~63 MB, 100,000 x 1,000 ~6.1 GB. The walks over the collectives merge the ranks' lists: each
 * collective costs a look at every rank of its communicator that has ops
 * left. Single-threaded. */
#ifndef NCCLSCOPE_TOOLS_REPORT_RANKS_H
#define NCCLSCOPE_TOOLS_REPORT_RANKS_H

#include <stdint.h>
#include <stddef.h>

#include "ncclscope/analysis.h"
#include "ncclscope/trace_reader.h"

typedef struct ns_xr ns_xr;

ns_xr* ns_xr_new(void); /* NULL when out of memory */
void ns_xr_free(ns_xr* x);
/* A trace file starts (its PROCESS block); returns its index, -1 when out of memory. */
int ns_xr_file(ns_xr* x, const ns_process_info* p);
/* Its end: whether its record is complete (the writer closed it with an END
 * block, and nothing of it was lost: no damaged or missing block, no event
 * a full ring dropped). Only a complete record says a rank never posted a
 * collective, or posted another one. */
void ns_xr_file_end(ns_xr* x, int file, int complete);
void ns_xr_comm(ns_xr* x, int file, const ns_comm_info* ci);
/* A CLOCK_REALTIME anchor of the file: trace time ts was Unix-epoch ns `real`. */
void ns_xr_anchor(ns_xr* x, int file, uint64_t ts, int64_t real);
/* One finalized op of the file (Coll only; others are ignored). */
void ns_xr_op(ns_xr* x, int file, const ns_op_result* op);
/* The file's analysis saw all of it: its ops' GPU times are converted again
 * with the final clock fits (a NULL analysis: they keep the times they had). */
void ns_xr_file_clock(ns_xr* x, ns_analysis* a);
/* A flight record (flightrec-*.json). 0, or -1 with a message (the file is skipped). */
int ns_xr_flightrec(ns_xr* x, const char* path, char* err, size_t errlen);
/* Everything is in: align, match, judge. */
void ns_xr_finish(ns_xr* x);

/* Its text and JSON sections: report_ranks_out.h. */

/* Hangs found, and communicators where ranks posted different calls at
 * the same place (the exit status). */
size_t ns_xr_hangs(const ns_xr* x);
size_t ns_xr_mismatches(const ns_xr* x);

#endif
