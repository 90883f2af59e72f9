/* ncclscope CLI: the cross-rank view of `ncclscope report`: for every
 * collective (commId, func, seq) seen on several ranks, which rank called it
 * last, and by how much. Fed with the analysis' op results of every trace
 * file (one file per process), summarised per communicator. Single-threaded.
 *
 * Arrival = the op's GPU kernel start converted into the trace clock
 * (CLOCK_MONOTONIC) when KernelCh pTimers exist, else the Coll start (when
 * the host thread enqueued it). A rank that is late to a collective starts
 * its kernel late; the others' kernels start and wait for it. Files of
 * different hosts are not comparable:
 * each op carries its host, and ranks of another host than the first one
 * seen for a collective are left out of that comparison.
 *
 * Memory: one entry per collective waiting for its other ranks, at most
 * NS_STRAG_MAX_OPEN (files are read one after another, so a collective
 * stays open until the last process's file is read); collectives beyond
 * that are counted as not compared. Per (communicator, rank) counters. */
#ifndef NCCLSCOPE_TOOLS_REPORT_STRAGGLER_H
#define NCCLSCOPE_TOOLS_REPORT_STRAGGLER_H

#include <stdint.h>
#include <stdio.h>

#include "ncclscope/analysis.h"

#define NS_STRAG_MAX_OPEN (1u << 18)

typedef struct ns_strag ns_strag;

ns_strag* ns_strag_new(void); /* NULL on allocation failure */
void ns_strag_free(ns_strag* s);
/* One finalized op of the file with host index `host` (Coll only; others are ignored). */
void ns_strag_op(ns_strag* s, int host, const ns_op_result* op);
/* Closes every open collective (end of the last file). */
void ns_strag_finish(ns_strag* s);
/* Text section and a JSON array value (`[...]`), per communicator. */
void ns_strag_text(const ns_strag* s, FILE* out);
void ns_strag_json(const ns_strag* s, FILE* out);

#endif
