/* ncclscope: stopEvent (hot path, NCCL threads).
 *
 *  A  range-check the handle; end its event with one compare-and-swap of
 *     the slot's running tag (S6), which holds the generation of the
 *     running event: it fails if the writer recycled the slot since (a
 *     stale handle: counted, never recorded against the slot's new event)
 *     or if the event was stopped before (a double stop: counted)
 *  B  write the STOP entry (id, slot, and the repeats of a collapsed state)
 *     and publish it (R1); the writer recycles the slot when it drains it
 *  C  only if the entry was dropped (ring full, or no ring): count the drop;
 *     the writer recycles the slot by age
 */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/slab.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

void ns_capture_stop(void* handle) {
  /* A */
  ns_slot* s = ns_handle_slot(handle);
  if (!s) return;
  /* Read before the CAS: if the CAS succeeds, the slot held this handle's
   * event from these loads to the CAS (a recycled slot's tag differs), so
   * they are this event's. Acquire: had we read a later occupant's id, we
   * would see its tag (S3, S4), and the CAS would fail. */
  uint64_t id = atomic_load_explicit(&s->id, memory_order_acquire);
  uint64_t meta = atomic_load_explicit(&s->meta, memory_order_relaxed);
  uint32_t repeats = atomic_load_explicit(&s->repeats, memory_order_relaxed);
  uint32_t tag = ns_running_tag(ns_handle_gen(handle));
  /* S6: exactly one stop of an event wins. Release keeps the loads above
   * before it; nothing is published through the tag (the STOP entry is, R1). */
  if (!atomic_compare_exchange_strong_explicit(&s->running, &tag, 0, memory_order_release, memory_order_relaxed)) {
    atomic_fetch_add_explicit(ns_slot_current(s, handle) ? &ns_cnt.double_stops : &ns_cnt.stale_handles, 1,
                              memory_order_relaxed);
    return;
  }
  /* B */
  ns_ring* ring = ns_ring_self();
  uint64_t* w = ring ? ns_ring_reserve(ring, NS_ENT_STOP_WORDS) : 0;
  if (w) {
    w[0] = ns_slot_entry_w0(meta, NS_ENT_STOP, 0, NS_ENT_STOP_WORDS);
    w[1] = ns_clock_ticks();
    w[2] = id;
    w[3] = NS_META_COMM(meta) | (uint64_t)repeats << 32;
    w[4] = (uint64_t)(uintptr_t)s;
    ns_ring_commit(ring); /* S7: the writer recycles the slot once it drained this */
    return;
  }
  /* C */
  ns_count_dropped(ring, NS_META_TYPE(meta));
}
