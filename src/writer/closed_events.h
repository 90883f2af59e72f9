/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the records of the events the writer ends itself (NS_ST_CLOSED:
 * restarted ProxySteps, events past their age, pressure, a communicator's
 * end, exit), counted by reason (ns_ws.closed). Writer thread only. */
#ifndef NCCLSCOPE_WRITER_CLOSED_EVENTS_H
#define NCCLSCOPE_WRITER_CLOSED_EVENTS_H

#include <stdint.h>

#include "ncclscope/record.h"

/* The NS_ST_CLOSED record of event id (ctx_index: its context entry, whose
 * announced communicator it names), counted. */
ns_record ns_closed_record(uint64_t id, unsigned type, uint32_t ctx_index, unsigned reason, uint64_t ts, uint32_t tid);
/* An ns_close_fn (open_events.h): the event's record, now, on the writer's
 * thread, into the writer's own EVENTS block, and to the analysis. */
void ns_closed_on_close(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx_index, unsigned reason);
/* Ends the writer's own block, if begun, into ns_ws.out: before anything
 * that must follow those records. */
void ns_closed_flush(void);
/* Frees the block's memory (tracing ends). */
void ns_closed_reset(void);

#endif
