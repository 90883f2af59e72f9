/* ncclscope: stopEvent (hot path, NCCL threads).
 *
 *  A  range-check the handle; claim the stop (running 1 -> 0, S6): a second
 *     stop of the same handle is counted, not recorded
 *  B  write the STOP entry (ring full: drop and count)
 *  C  release our reference on the parent, if its slot still holds the
 *     event we attached to (S4 may have force-recycled it)
 *  D  release the running reference (S2, release: pairs with the writer's
 *     acquire before recycling)
 */
#include "capture/capture.h"
#include "capture/slab.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "runtime/context.h"

void ns_capture_stop(void* handle) {
  if (!handle) return;
  /* A */
  ns_slot* s = ns_slot_from_handle(handle);
  uint32_t one = 1;
  /* S6: relaxed CAS: it only arbitrates between two stops of one handle. */
  if (!s || !atomic_compare_exchange_strong_explicit(&s->running, &one, 0, memory_order_relaxed,
                                                     memory_order_relaxed)) {
    atomic_fetch_add_explicit(&ns_cnt.bad_handles, 1, memory_order_relaxed);
    return;
  }
  uint64_t meta = atomic_load_explicit(&s->meta, memory_order_relaxed);
  uint32_t type = NS_META_TYPE(meta);
  /* B */
  ns_ring* ring = ns_ring_self();
  uint64_t* w = ring ? ns_ring_reserve(ring, NS_ENT_HEAD_WORDS) : 0;
  if (w) {
    w[0] = ns_ent_w0(NS_ENT_STOP, type, NS_META_FLAGS(meta), NS_META_CTX(meta), NS_ENT_HEAD_WORDS);
    w[1] = ns_clock_ticks();
    w[2] = atomic_load_explicit(&s->id, memory_order_relaxed);
    w[3] = NS_META_COMM(meta);
    ns_ring_commit(ring);
  } else if (ring) {
    atomic_store_explicit(&ring->dropped[type],
                          atomic_load_explicit(&ring->dropped[type], memory_order_relaxed) + 1,
                          memory_order_relaxed);
  } else {
    atomic_fetch_add_explicit(&ns_cnt.dropped_unringed[type], 1, memory_order_relaxed);
  }
  /* C */
  ns_slot* p = (ns_slot*)(uintptr_t)atomic_load_explicit(&s->parent, memory_order_relaxed);
  if (p && atomic_load_explicit(&p->id, memory_order_relaxed) ==
               atomic_load_explicit(&s->parent_id, memory_order_relaxed))
    atomic_fetch_sub_explicit(&p->refs, 1, memory_order_release); /* S2 */
  /* D */
  atomic_fetch_sub_explicit(&s->refs, 1, memory_order_release); /* S2 */
}
