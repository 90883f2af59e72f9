/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: stopEvent (hot path, NCCL threads).
 *
 *  A  the handle's id and type (capture/handle.h); a handle that is not
 *     ours is counted (badHandles), never followed
 *  B  the repeats of the event's last state still counted on this thread
 *     (ns_collapse) travel with the STOP
 *  C  write the STOP entry and publish it (R1); a full ring drops and counts
 * Whether the event still runs (a double stop, a stop after the writer
 * closed the event) is the writer's to tell, from the ids it saw end.
 *
 * Shape: the usual call (the thread's ring claimed in this session, the TSC
 * in use) makes no call; the thread's first entry and a clock without the
 * TSC tail-call stop_cold(), which claims the ring and reads the clock the
 * general way. */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/handle.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

/* B, C (both callers). */
__attribute__((always_inline)) static inline void record_stop(ns_ring* ring, uint64_t ticks, const void* handle) {
  uint64_t id = ns_handle_id(handle);
  unsigned type = ns_handle_type(handle);
  uint32_t repeats = 0;
  ns_collapse* c = ns_collapse_of(ring->collapse, id);
  if (c->id == id) {
    repeats = c->repeats;
    c->id = 0;
    c->repeats = 0;
  }
  uint64_t* w = ns_ring_reserve(ring, NS_ENT_STOP_WORDS);
  if (!w) {
    ns_count_dropped(ring, type);
    return;
  }
  w[NS_ENT_W0] = ns_ent_w0(NS_ENT_STOP, type, ns_handle_pxn(handle) ? NS_RF_PXN : 0, NS_CTX_NONE, NS_ENT_STOP_WORDS);
  w[NS_ENT_TICK] = ticks;
  w[NS_ENT_ID] = id;
  w[NS_ENT_COMM_AUX] = ns_ent_comm_aux(0, repeats);
  ns_ring_commit(ring);
}

__attribute__((noinline, cold)) static void stop_cold(const void* handle) {
  ns_ring* ring = ns_ring_self();
  if (!ring) {
    ns_count_dropped(ring, ns_handle_type(handle));
    return;
  }
  record_stop(ring, ns_clock_ticks(), handle);
}

void ns_capture_stop(void* handle) {
  /* A */
  if (!handle) return;
  if (!ns_handle_ok(handle)) {
    atomic_fetch_add_explicit(&ns_cnt.bad_handles, 1, memory_order_relaxed);
    return;
  }
  ns_ring* ring = ns_ring_claimed();
  if (__builtin_expect(ring != 0 && ns_clock_tsc_inline(), 1)) {
    record_stop(ring, ns_clock_tsc_ticks(), handle);
    return;
  }
  stop_cold(handle);
}
