/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer thread's analysis (one ns_analysis per process) and
 * flight recorder (flightrec_run.h). Writer thread only: it feeds every
 * record it encodes, ticks after each drain, writes CLOCKFIT blocks and, at
 * the last finalize, the summary. NCCLSCOPE_ANALYSIS=0 turns the analysis
 * off, NCCLSCOPE_FR_ENTRIES=0 the flight recorder. */
#ifndef NCCLSCOPE_WRITER_ANALYSIS_FEED_H
#define NCCLSCOPE_WRITER_ANALYSIS_FEED_H

#include <stdint.h>

#include "ncclscope/record.h"
#include "capture/context.h"
#include "trace/codec.h"
#include "writer/strtab.h"

/* Creates the analysis unless disabled; a failure is logged once. Record
 * strings are resolved through `strings` (the writer's intern table). */
void ns_feed_open(const ns_strtab* strings);
int ns_feed_enabled(void);
/* COMM_INIT of context c (after its COMM_INIT block was encoded). */
void ns_feed_comm(const ns_context* c);
/* COMM_FINI of comm serial `comm` (its events closed and fed before). */
void ns_feed_comm_end(uint32_t comm);
/* One encoded record, into the tracker. analysed 0: its event skips the
 * analysis (the writer sheds), which only counts the event. */
void ns_feed_record(const ns_record* r, int analysed);
/* After each drain: now_ns on the trace clock. */
void ns_feed_tick(uint64_t now_ns);
/* NCCL's mask changed (writer/detail.h): full detail from now on, or not. */
void ns_feed_detail(int full, uint64_t now_ns);
/* Encodes a CLOCKFIT block for comm into out when its fit is bounded and,
 * unless force, its sample count moved since *last_samples. 1 if written. */
int ns_feed_clockfit(ns_buf* out, uint64_t* seq, uint32_t comm, int force, uint64_t* last_samples);
/* Last finalize: flush, summary to the log and the dump dir, destroy (the flight recorder too). */
void ns_feed_finish(void);
/* Frees the analysis without a summary (failed start). */
void ns_feed_close(void);

#endif
