/* ncclscope: recordEventState (hot path, NCCL threads). The handle is
 * range-checked and must be running; the STATE entry carries NCCL's state
 * id and the value its args held (the adapter picked it). */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/slab.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

void ns_capture_state(void* handle, int state, int has_arg, uint64_t arg) {
  if (!handle) return;
  ns_slot* s = ns_slot_from_handle(handle);
  if (!s || !atomic_load_explicit(&s->running, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&ns_cnt.bad_handles, 1, memory_order_relaxed);
    return;
  }
  uint64_t meta = atomic_load_explicit(&s->meta, memory_order_relaxed);
  uint32_t type = NS_META_TYPE(meta);
  ns_ring* ring = ns_ring_self();
  uint64_t* w = ring ? ns_ring_reserve(ring, NS_ENT_HEAD_WORDS + 1) : 0;
  if (!w) {
    ns_count_dropped(ring, type);
    return;
  }
  unsigned flags = NS_META_FLAGS(meta) | (has_arg ? NS_RF_HAS_ARG : 0);
  w[0] = ns_ent_w0(NS_ENT_STATE, type, flags, NS_META_CTX(meta), NS_ENT_HEAD_WORDS + 1);
  w[1] = ns_clock_ticks();
  w[2] = atomic_load_explicit(&s->id, memory_order_relaxed);
  w[3] = (uint64_t)NS_META_COMM(meta) | (uint64_t)(uint32_t)state << 32;
  w[4] = arg;
  ns_ring_commit(ring);
}
