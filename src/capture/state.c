/* ncclscope: recordEventState (hot path, NCCL threads). The handle is
 * range-checked and must be its slot's current, running event; the STATE
 * entry carries NCCL's state id and the value its args held (the adapter
 * picked it). A state identical to the previous one of the same event
 * (state and argument: NCCL 2.27+ records SendPeerWait once per proxy pass
 * while the receiver is not ready) is only counted; the count travels with
 * the event's next entry, and the writer records it as one repeat record.
 * An event's states come from one thread (its proxy or application thread):
 * the collapse fields are relaxed loads and stores.
 *
 * Shape: the usual call (the thread's ring claimed in this session, the TSC
 * in use) makes no call at all, so the compiler saves no registers for it;
 * a thread's first entry and a clock without the TSC take record_cold(),
 * which claims the ring and reads the clock the general way, then records
 * through the same record_state(). */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/slab.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

/* Writes the STATE entry (both callers: the fast path and record_cold). */
__attribute__((always_inline)) static inline void record_state(ns_slot* s, ns_ring* ring, uint64_t ticks,
                                                               uint64_t id, uint32_t key, int state, int has_arg,
                                                               uint64_t arg) {
  uint64_t meta = atomic_load_explicit(&s->meta, memory_order_relaxed);
  uint64_t* w = ring ? ns_ring_reserve(ring, NS_ENT_HEAD_WORDS + 1) : 0;
  if (!w) {
    ns_count_dropped(ring, NS_META_TYPE(meta));
    return;
  }
  uint32_t repeats = atomic_load_explicit(&s->repeats, memory_order_relaxed);
  w[0] = ns_slot_entry_w0(meta, NS_ENT_STATE, has_arg ? NS_RF_HAS_ARG : 0, NS_ENT_HEAD_WORDS + 1);
  w[1] = ticks;
  w[2] = id;
  /* comm | state << 32 | repeats of the previous state << 40 (24 bits, saturated) */
  if (repeats > 0xFFFFFFu) repeats = 0xFFFFFFu;
  w[3] = (uint64_t)NS_META_COMM(meta) | (uint64_t)(uint8_t)state << 32 | (uint64_t)repeats << 40;
  w[4] = arg;
  ns_ring_commit(ring);
  atomic_store_explicit(&s->last_state, key, memory_order_relaxed);
  atomic_store_explicit(&s->last_arg, arg, memory_order_relaxed);
  atomic_store_explicit(&s->repeats, 0, memory_order_relaxed);
}

__attribute__((noinline, cold)) static void record_cold(ns_slot* s, uint64_t id, uint32_t key, int state,
                                                         int has_arg, uint64_t arg) {
  ns_ring* ring = ns_ring_self();
  record_state(s, ring, ns_clock_ticks(), id, key, state, has_arg, arg);
}

void ns_capture_state(void* handle, int state, int has_arg, uint64_t arg) {
  ns_slot* s = ns_handle_slot(handle);
  if (!s) return;
  uint64_t id = atomic_load_explicit(&s->id, memory_order_acquire);
  /* The slot holds this handle's event and it runs (S6). The id was read
   * first: if the writer recycles the slot between the two loads, the tag
   * no longer matches; if it closes the event after the check, the entry
   * names the closed event by its id and the writer drops it. */
  if (atomic_load_explicit(&s->running, memory_order_relaxed) != ns_running_tag(ns_handle_gen(handle))) {
    atomic_fetch_add_explicit(ns_slot_current(s, handle) ? &ns_cnt.late_states : &ns_cnt.stale_handles, 1,
                              memory_order_relaxed);
    return;
  }
  if ((unsigned)state >= NS_ST_OWN_FIRST) state = NS_ST_OWN_FIRST - 1; /* ids above are ncclscope's own */
  uint32_t key = (uint32_t)state + 1 + (has_arg ? 0x100u : 0);
  if (atomic_load_explicit(&s->last_state, memory_order_relaxed) == key &&
      atomic_load_explicit(&s->last_arg, memory_order_relaxed) == arg) {
    atomic_store_explicit(&s->repeats, atomic_load_explicit(&s->repeats, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return;
  }
  ns_ring* ring = ns_ring_claimed();
  if (__builtin_expect(ring != 0 && ns_clock_tsc_inline(), 1)) {
    record_state(s, ring, ns_clock_tsc_ticks(), id, key, state, has_arg, arg);
    return;
  }
  record_cold(s, id, key, state, has_arg, arg);
}
