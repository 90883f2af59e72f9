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

#include "capture/slab.h"

/* A drained START entry: the slot it carries joins its slab's live list,
 * seen at trace time ts. pinned: a graph-captured API event, whose handle
 * NCCL names again at every replay (kept until its communicator ends, or
 * its slab runs short). Inline: once per START the writer drains. */
static inline void ns_recycle_started(uint64_t slot_addr, uint64_t ts, int pinned) {
  ns_slot* s = ns_slot_from_handle((void*)(uintptr_t)slot_addr);
  if (!s) return;
  ns_slab* sl = &ns_reg.slabs[ns_slot_slab(s)];
  if (sl->nlive >= sl->n) return;
  sl->live[sl->nlive++] = (uint32_t)(s - sl->slots);
  s->w_start_ns = pinned ? NS_SLOT_PINNED : ts;
  s->w_zero_ns = 0;
}

/* A drained STOP entry of event id: S7, the stopper handed its references
 * over. The slot still holds this event (its running reference is not
 * released yet): release it and the parent's now. */
static inline void ns_recycle_stopped(uint64_t slot_addr, uint64_t id) {
  ns_slot* s = ns_slot_from_handle((void*)(uintptr_t)slot_addr);
  if (s && atomic_load_explicit(&s->id, memory_order_relaxed) == id) ns_slot_release(s);
}
/* Returns to their slabs the slots whose references are gone for their
 * hold time (or that are older than max age, or under slab pressure), and
 * faults in never-used slots ahead of the allocators. Adds to *recycled and
 * *forced (recycled with references left). */
void ns_recycle_run(uint64_t now_ns, uint64_t* recycled, uint64_t* forced);
/* After a communicator's COMM_FINI: its whole slab back, memory returned. */
void ns_recycle_release_context(uint32_t ctx_index);

#endif
