/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread's state that its files share (writer_state.c
 * holds it). Each field says which files write it and which read it; every
 * other piece of the writer's state is private to one file. Writer thread
 * only, unless a field says otherwise. Reset when tracing starts and ends
 * (writer.c). */
#ifndef NCCLSCOPE_WRITER_STATE_H
#define NCCLSCOPE_WRITER_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "ncclscope/record.h"
#include "capture/context.h" /* NS_MAX_CONTEXTS */
#include "trace/codec.h"

typedef struct {
  /* The blocks of this pass, in file order. W: every file that writes a
   * block (writer.c, trace_out.c, lifecycle_queue.c, drain.c,
   * closed_events.c; analysis_feed.c and detail_out.c through the pointer
   * they are given). R: trace_out.c, which writes it out and empties it;
   * counters.c (its length counts as written). */
  ns_buf out;
  /* The next block's sequence number. W: whoever ends a block in out. */
  uint64_t seq;
  /* Lifecycle blocks are in out: flush at the end of this pass. W:
   * trace_out.c (PROCESS; cleared by a flush), lifecycle_queue.c. R:
   * trace_out.c (ns_trace_out_due). */
  int lifecycle_pending;
  /* The writer's kernel tid. W: writer.c at the thread's start (relaxed).
   * R: closed_events.c (its records' tid), writer.c after the join. */
  _Atomic uint32_t tid;
  /* The communicator announced in each context entry (COMM_INIT written), 0:
   * none. W: lifecycle_queue.c. R: drain.c, closed_events.c, counters.c,
   * lifecycle_queue.c. */
  uint32_t ctx_serial[NS_MAX_CONTEXTS];
  /* Starts recorded per context entry since its COMM_INIT. W: drain.c
   * (counts), lifecycle_queue.c (zeroes at COMM_INIT). R: lifecycle_queue.c
   * (COMM_FINI). */
  uint64_t ctx_events[NS_MAX_CONTEXTS][NS_EV_COUNT];
  /* What was recorded, for the COUNTERS block, the metrics and the summary.
   * R: counters.c. */
  uint64_t events[NS_EV_COUNT]; /* starts recorded, by type. W: drain.c */
  uint64_t pxn_events;          /* W: drain.c */
  uint64_t parent_lost;         /* W: drain.c */
  uint64_t state_repeats;       /* NS_ST_REPEATED counts. W: drain.c */
  uint64_t steps_unanalysed;    /* ProxySteps recorded, not fed to the analysis. W: drain.c */
  uint64_t closed[NS_CLOSE_REASONS]; /* events the writer closed, by reason. W: closed_events.c */
  /* (The trace file's bytes: ns_trace_out_counts, sinks/trace_file.h.) */
} ns_writer_state;

extern ns_writer_state ns_ws;

#endif
