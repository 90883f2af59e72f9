/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the events the writer has seen start and not end, by id.
 *
 * The hot path keeps nothing per event (its handles carry the id,
 * capture/handle.h); the writer learns of each event from the START entry
 * it drains and forgets it when the event is over: when it drains its STOP,
 * or when it closes an event NCCL will never stop (a leak: a ProxyStep
 * started again on the same step, an event older than NCCLSCOPE_MAX_AGE_MS,
 * the oldest open ones when a communicator holds too many, every open one
 * when its communicator ends). An event that ended is remembered by id for
 * a while, so that a late call is told apart from one whose START has not
 * been drained yet (NCCL may stop an event on another thread, whose ring
 * the writer reads first): a second stop, a state after the stop, a call
 * after the writer closed the event are counted and not recorded.
 * What the writer knows of an open event (ns_open_event) is its part of the
 * tracker's entry for it (writer/tracker.h, ns_open_attach): there is no
 * table of its own, and the open events are the tracker's running ones, in
 * the order they started.
 * Writer thread only.
 */
#ifndef NCCLSCOPE_WRITER_OPEN_EVENTS_H
#define NCCLSCOPE_WRITER_OPEN_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "ncclscope/events.h"
#include "ncclscope/record.h"

/* Context indexes: a communicator's (ns_ctx_table), or NS_OPEN_PXN for the
 * events other processes' ranks run here. */
#define NS_OPEN_PXN 256u
#define NS_OPEN_CONTEXTS (NS_OPEN_PXN + 1)

/* An event the writer closed: the writer records it. analysed: it was not
 * started with NS_OPEN_UNANALYSED. */
typedef void (*ns_close_fn)(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx_index,
                            unsigned reason);

/* A ProxyOp's connection as ns_open_started takes it: its channel, its
 * peer and whether it is a net send (NCCL sets isSend only for those).
 * 0 (unknown) when a field does not fit. */
#define NS_CONN_VALID 1u
#define NS_CONN_SEND 2u
static inline uint32_t ns_open_conn(uint64_t channel, int64_t peer, int is_send) {
  if (channel > 0xFF || peer < 0 || peer >= (1 << 22)) return 0;
  return NS_CONN_VALID | (is_send ? NS_CONN_SEND : 0) | (uint32_t)channel << 2 | (uint32_t)peer << 10;
}

/* In ns_open_started's type, kept in ns_open_event.type: the event's
 * records skip the analysis (the writer sheds, drain.c shedding_now). */
#define NS_OPEN_UNANALYSED 0x200u

/* What the writer knows of an open event. */
typedef struct {
  uint64_t id;         /* 0: the writer does not hold it (never did, or it ended) */
  uint64_t start_ns;   /* its START's time */
  uint32_t type;       /* its type (low 8 bits), NS_OPEN_UNANALYSED, open_events.c's flags */
  uint32_t conn;       /* a ProxyOp's connection (ns_open_conn), 0: none or unknown */
  uint32_t comm;       /* its communicator's serial (0: PXN) */
  uint32_t origin_pid; /* PXN: the process it runs for */
  uint32_t ctx;        /* context index, NS_OPEN_PXN */
  uint32_t has_state;  /* a STATE of it was drained */
} ns_open_event;

/* How an event the writer does not hold open ended, as far as it remembers. */
enum { NS_OPEN_UNKNOWN = 0, NS_OPEN_STOPPED = 1, NS_OPEN_CLOSED = 2 };

/* The size of the writer's part of a tracker entry. Attach: the writer's
 * part of each entry of `as` is at ns_event_area(e, area_offset); the
 * tracker's callbacks are to be passed on to *sink, which this fills
 * (tracker.h: ns_tracker_follow_open). Until ns_open_reset. */
size_t ns_open_event_bytes(void);
void ns_open_attach(ns_asm* as, size_t area_offset, ns_asm_sink* sink);
/* A drained START, after the tracker took it. pinned: a graph-captured API event, whose handle NCCL
 * names again at every replay (never closed for its age). conn: a ProxyOp's
 * connection (ns_open_conn), else 0. When the communicator already holds
 * NCCLSCOPE_SLAB_EVENTS open events (closed first by pressure, run after
 * run), the event is not held: its STOP is then recorded like one whose
 * START was not drained yet. */
void ns_open_started(uint64_t id, unsigned type, uint32_t ctx, uint64_t ts, int pinned, uint32_t conn, uint32_t comm,
                     uint32_t origin_pid);
/* The open event id, or NULL. Valid until the next call that starts or ends an event. */
ns_open_event* ns_open_find(uint64_t id);
/* A drained STOP of an open event: it ends (remembered as stopped). */
void ns_open_stopped(ns_open_event* e);
/* How event id ended, if it is not open: NS_OPEN_STOPPED or NS_OPEN_CLOSED
 * when remembered, NS_OPEN_UNKNOWN when never seen or forgotten. */
int ns_open_ended(uint64_t id);
/* The origin pid of a PXN event, open or remembered as ended; 0 if unknown. */
uint32_t ns_open_origin_pid(uint64_t id);
/* Closes the open event id (a restarted ProxyStep). 1 if it was open, its
 * type word (type, NS_OPEN_UNANALYSED) then in *type unless type is NULL. */
int ns_open_close(uint64_t id, uint32_t* type);
/* Whether event id is open. */
int ns_open_is_open(uint64_t id);
/* Context ctx_index records ProxyOpInProgress (NCCL 2.27+, every net
 * ProxyOp at its first progress pass): from now on its ProxyOps that record
 * no state for NCCLSCOPE_HOLD_MS belong to a transport that never stops
 * them (NS_CLOSE_NEVER_STOPPED), unless they are net sends, receive on a
 * connection one of whose ProxyOps NCCL stopped, or started after every
 * ProxyOp of the communicator NCCL stopped so far: NCCL starts a ProxyOp
 * when it queues it on its connection (proxy.cc ProxyAppend) and records
 * InProgress only when the ops before it are done (net.cc), which on a busy
 * connection, or behind a late rank, takes longer than any hold time. */
void ns_open_note_progress_states(uint32_t ctx_index);
/* Closes events by age (max age), by kind (ProxyOps never stopped) and by
 * pressure (a communicator holding more than 7/8 of NCCLSCOPE_SLAB_EVENTS),
 * calling on_close for each. */
void ns_open_run(uint64_t now_ns, ns_close_fn on_close, void* user);
/* After a communicator's COMM_FINI: its open events are closed (on_close,
 * NS_CLOSE_COMM_END). */
void ns_open_release_context(uint32_t ctx_index, ns_close_fn on_close, void* user);
/* The process ends without finalize: every open event is closed (reason). */
void ns_open_close_all(unsigned reason, ns_close_fn on_close, void* user);
/* Session end: what it remembers of ended events. */
void ns_open_reset(void);

#endif
