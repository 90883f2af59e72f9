/* ncclscope: stopEvent (hot path, NCCL threads). No atomic read-modify-write:
 *
 *  A  range-check the handle; end it (running 1 -> 0, S6): a stop of a
 *     handle that is not running is counted, not recorded
 *  B  write the STOP entry with the slot address and publish it (R1); the
 *     writer releases the references when it drains the entry (S7)
 *  C  only if the entry was dropped (ring full, or no ring): count the drop
 *     and release the references here (ns_slot_release)
 */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/slab.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

void ns_capture_stop(void* handle) {
  if (!handle) return;
  /* A */
  ns_slot* s = ns_slot_from_handle(handle);
  if (!s || !atomic_load_explicit(&s->running, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&ns_cnt.bad_handles, 1, memory_order_relaxed);
    return;
  }
  /* S6: NCCL stops an event once, on one thread; a later second stop sees 0. */
  atomic_store_explicit(&s->running, 0, memory_order_relaxed);
  uint64_t meta = atomic_load_explicit(&s->meta, memory_order_relaxed);
  uint32_t type = NS_META_TYPE(meta);
  /* B */
  ns_ring* ring = ns_ring_self();
  uint64_t* w = ring ? ns_ring_reserve(ring, NS_ENT_STOP_WORDS) : 0;
  if (w) {
    w[0] = ns_ent_w0(NS_ENT_STOP, type, NS_META_FLAGS(meta), NS_META_CTX(meta), NS_ENT_STOP_WORDS);
    w[1] = ns_clock_ticks();
    w[2] = atomic_load_explicit(&s->id, memory_order_relaxed);
    w[3] = NS_META_COMM(meta);
    w[4] = (uint64_t)(uintptr_t)s;
    ns_ring_commit(ring); /* S7: the writer now owns the release */
    return;
  }
  /* C */
  ns_count_dropped(ring, type);
  ns_slot_release(s);
}
