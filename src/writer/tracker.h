/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the writer's one event assembler, the tracker of every event.
 *
 * Each record the writer encodes goes into one event assembler
 * (include/ncclscope/events.h), which decides the hierarchy and keeps one
 * entry per event until it is over. Three consumers follow its events,
 * each in its own part of every entry:
 *   - the analysis (ns_analysis_create_on), at offset 0 of the consumer
 *     area, except for the events that skip it: a ProxyStep that started
 *     while its ring shed (drain.c shedding_now) is not passed on to it;
 *   - the flight recorder (ns_fr_attach);
 *   - the writer's open events (open_events.h): what the writer knows of an
 *     event it has seen start and not end, and the closing of those NCCL
 *     never stops.
 * The assembler gives up no running event by age (its max_age_ns is 0):
 * the writer closes those itself (NCCLSCOPE_MAX_AGE_MS), with a record in
 * the trace, which the consumers then see like any other.
 * Writer thread only.
 */
#ifndef NCCLSCOPE_WRITER_TRACKER_H
#define NCCLSCOPE_WRITER_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/events.h"
#include "ncclscope/record.h"

/* The assembler, with room for the three consumers: analysis_bytes (at
 * ns_event_user; 0 when the analysis does not run), then flightrec_bytes,
 * then open_bytes. Its bounds are the analysis' (ns_analysis_assembler_config),
 * whether or not it runs. 0, or -1 when out of memory (nothing is then
 * tracked: no analysis, no flight recorder, no open events). */
int ns_tracker_open(size_t analysis_bytes, size_t flightrec_bytes, size_t open_bytes);
/* Frees it without calling the consumers. */
void ns_tracker_close(void);
/* The assembler; NULL when none. */
ns_asm* ns_tracker(void);

/* Where each consumer's part of an event starts (ns_event_area). */
size_t ns_tracker_area_flightrec(void);
size_t ns_tracker_area_open(void);

/* The consumers' callbacks: the analysis', the flight recorder's, the open
 * events', each NULL when it does not run (or no longer runs). */
void ns_tracker_follow_analysis(const ns_asm_sink* sink);
void ns_tracker_follow_flightrec(const ns_asm_sink* sink);
void ns_tracker_follow_open(const ns_asm_sink* sink);

/* A communicator's mask and ABI version, and its rank (COMM_INIT): which
 * children its operations wait for. */
void ns_tracker_comm(uint32_t comm, uint64_t event_mask, uint32_t abi_version, int64_t rank);
/* One record; analysed 0: its event skips the analysis (at its START) or
 * already does. */
void ns_tracker_record(const ns_record* r, int analysed);
/* Trace time moved on without a record: releases what is due. */
void ns_tracker_advance(uint64_t now_ns);

#endif
