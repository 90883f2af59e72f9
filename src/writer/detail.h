/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the detail level in force (NCCLSCOPE_DETAIL), decided on the
 * writer thread.
 *
 * NCCL reads the activation mask init received afresh for every task (2.26+;
 * once per group before), so what NCCL pays for (detail.h's bits, config.h)
 * can be switched while the job runs. This module only decides: full detail
 * or not, now, and why (ns_detail_full, capture/context.h). The hot path puts
 * the decision into NCCL's mask at the next group boundary (ns_detail_apply),
 * the writer records it (a DETAIL block, detail_out.c); the analysis feed
 * reports the triggers.
 *
 *  full     always full detail
 *  sampled  full detail for sample_ms at the start of every second
 *  ops      never, but for an escalation
 * An escalation (an operation in flight too long, a straggling rank, busbw
 * well below the job's own recent level, the dump signal) gives full detail
 * for escalate_sec from its latest trigger: a trigger that persists keeps it,
 * and the level comes back only escalate_sec after the last one, so that the
 * mask never flips faster than that (the dwell time). Writer thread only,
 * except ns_detail_full_now. */
#ifndef NCCLSCOPE_WRITER_DETAIL_H
#define NCCLSCOPE_WRITER_DETAIL_H

#include <stdint.h>

#include "ncclscope/analysis.h"
#include "ncclscope/trace_format.h" /* ns_detail_why */


const char* ns_detail_why_name(int why);

typedef struct {
  uint64_t escalations;   /* escalations begun (each logged once) */
  uint64_t triggers;      /* triggers seen, those that extended an escalation included */
  uint64_t switches;      /* changes of NCCL's mask (sampling periods included) */
  uint64_t full_ns;       /* time with full detail so far */
} ns_detail_counts;

/* Starts deciding (writer start): level, sample_ms, escalate_sec and the
 * watchdog's timeout (0: none) come from the session's configuration. */
void ns_detail_open(int level, uint32_t sample_ms, double escalate_sec, double hang_timeout_sec, uint64_t now_ns);
/* 1 while NCCL's mask is to have full detail (any thread: init reads it for
 * a new communicator's first mask). */
int ns_detail_full_now(void);
/* Triggers. */
void ns_detail_escalate(int why, uint64_t now_ns, const char* what);
/* The oldest operation in flight, its age and communicator (the flight recorder's view). */
void ns_detail_inflight(uint64_t age_ns, uint32_t comm, uint64_t now_ns);
/* A closed metrics window: stragglers and busbw drops. */
void ns_detail_window(const ns_window* w, uint64_t now_ns);
/* Each writer pass: 1 when the decision changed, or an escalation began
 * (then *full, *why and the time it holds from, *at_ns: its DETAIL block is
 * due). The first pass reports the decision of ns_detail_open, at its time. */
int ns_detail_tick(uint64_t now_ns, int* full, int* why, uint64_t* at_ns);
void ns_detail_counts_get(ns_detail_counts* out, uint64_t now_ns);
/* The level configured, and whether an escalation holds now. */
int ns_detail_configured(void);
int ns_detail_escalated(void);

#endif
