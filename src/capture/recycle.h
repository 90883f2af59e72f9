/* ncclscope: recycling event slots, the writer thread's side of the slabs.
 *
 * The hot path takes slots (ns_capture_start) and never frees them; the
 * writer thread learns of each slot from the START entry it drains, drops
 * the references a STOP entry hands over (S7), and returns a slot to its
 * slab once nothing refers to it any more and its hold time passed (S4).
 * capture exposes this so that the writer never touches slab internals.
 * Writer thread only. Orderings: docs/memory-ordering.md (S1..S7); hold
 * times and graph pinning: docs/design.md ("Handles and the exact hierarchy").
 */
#ifndef NCCLSCOPE_CAPTURE_RECYCLE_H
#define NCCLSCOPE_CAPTURE_RECYCLE_H

#include <stdint.h>

/* A drained START entry: the slot it carries joins its slab's live list,
 * seen at trace time ts. pinned: a graph-captured API event, whose handle
 * NCCL names again at every replay (kept until its communicator ends, or
 * its slab runs short). */
void ns_recycle_started(uint64_t slot_addr, uint64_t ts, int pinned);
/* A drained STOP entry of event id: the stopper's references are released
 * if the slot still holds that event. */
void ns_recycle_stopped(uint64_t slot_addr, uint64_t id);
/* Returns to their slabs the slots whose references are gone for their
 * hold time (or that are older than max age, or under slab pressure), and
 * faults in never-used slots ahead of the allocators. Adds to *recycled and
 * *forced (recycled with references left). */
void ns_recycle_run(uint64_t now_ns, uint64_t* recycled, uint64_t* forced);
/* After a communicator's COMM_FINI: its whole slab back, memory returned. */
void ns_recycle_release_context(uint32_t ctx_index);

#endif
