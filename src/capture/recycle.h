/* ncclscope: recycling event slots, the writer thread's side of the slabs.
 *
 * The hot path takes slots (ns_capture_start) and never frees them; the
 * writer learns of each slot from the START entry it drains and recycles it
 * as soon as the event is over: when it drains its STOP, or when it closes
 * an event NCCL will never stop (a leak: a ProxyStep started again on the
 * same step, an event older than NCCLSCOPE_MAX_AGE_MS, the oldest open ones
 * when the slab runs short, every open one when its communicator ends).
 * Recycling bumps the slot's generation, so NCCL's old handle stops naming
 * it (a late child or stop is told apart by a compare, never attached to
 * the slot's next event), and remembers the handle of a type that can be a
 * parent, with its event id, for a child that starts later and names it
 * (ns_recycle_parent_id): API events seconds before their launch, a Coll
 * before its late KernelCh, a graph's CollApi minutes before a replay.
 * Writer thread only. Orderings: docs/memory-ordering.md (S1, S4, S7).
 */
#ifndef NCCLSCOPE_CAPTURE_RECYCLE_H
#define NCCLSCOPE_CAPTURE_RECYCLE_H

#include <stdint.h>

#include "capture/slab.h"
#include "ncclscope/record.h"

/* Why an event is closed: NS_CLOSE_* (ncclscope/record.h). */

/* An event the writer closed: the writer records it. */
typedef void (*ns_close_fn)(void* user, uint64_t id, unsigned type, uint32_t ctx_index, unsigned reason);

/* A ProxyOp's connection as ns_recycle_started takes it: its channel, its
 * peer and whether it is a net send (NCCL sets isSend only for those).
 * 0 (unknown) when a field does not fit. */
#define NS_CONN_VALID 1u
#define NS_CONN_SEND 2u
static inline uint32_t ns_recycle_conn(uint64_t channel, int64_t peer, int is_send) {
  if (channel > 0xFF || peer < 0 || peer >= (1 << 22)) return 0;
  return NS_CONN_VALID | (is_send ? NS_CONN_SEND : 0) | (uint32_t)channel << 2 | (uint32_t)peer << 10;
}

/* A drained START entry: the slot joins its slab's live list. pinned: a
 * graph-captured API event, whose handle NCCL names again at every replay
 * (remembered until its communicator ends). conn: a ProxyOp's connection
 * (ns_recycle_conn), else 0. */
void ns_recycle_started(uint64_t slot_addr, uint64_t id, unsigned type, uint64_t ts, int pinned, uint32_t conn);
/* A drained STOP entry of event id: its slot is recycled now (a slot that
 * no longer holds id was closed before: nothing to do). */
void ns_recycle_stopped(uint64_t slot_addr, uint64_t id);
/* Closes the open event id in slot_addr (a restarted ProxyStep). 1 if it was open. */
int ns_recycle_close(uint64_t slot_addr, uint64_t id);
/* Whether event id is still open in slot_addr (its STOP not drained, not closed). */
int ns_recycle_is_open(uint64_t slot_addr, uint64_t id);
/* Context ctx_index records ProxyOpInProgress (NCCL 2.27+, every net
 * ProxyOp at its first progress pass): from now on its ProxyOps that record
 * no state for NCCLSCOPE_HOLD_MS belong to a transport that never stops
 * them (NS_CLOSE_NEVER_STOPPED), unless they are net sends, receive on a
 * connection one of whose ProxyOps NCCL stopped, or started after every
 * ProxyOp of the communicator NCCL stopped so far: NCCL starts a ProxyOp
 * when it queues it on its connection (proxy.cc ProxyAppend) and records
 * InProgress only when the ops before it are done (net.cc), which on a busy
 * connection, or behind a late rank, takes longer than any hold time. */
void ns_recycle_note_progress_states(uint32_t ctx_index);
/* The id of the recycled event a parent handle named, or 0. */
uint64_t ns_recycle_parent_id(uint64_t handle);
/* Closes events by age (max age), by kind (ProxyOps never stopped) and by
 * slab pressure, calling on_close for each, and faults in never-used slots
 * ahead of the allocators. */
void ns_recycle_run(uint64_t now_ns, ns_close_fn on_close, void* user);
/* After a communicator's COMM_FINI: its open events are closed (on_close,
 * NS_CLOSE_COMM_END), its slab returned, its remembered handles forgotten. */
void ns_recycle_release_context(uint32_t ctx_index, ns_close_fn on_close, void* user);
/* The process ends without finalize: every open event is closed (NS_CLOSE_EXIT). */
void ns_recycle_close_all(unsigned reason, ns_close_fn on_close, void* user);
/* Session end: the remembered handles' memory. */
void ns_recycle_reset(void);

#endif
