/* ncclscope: stopEvent (hot path, NCCL threads).
 *
 *  A  the handle's id and type (capture/handle.h); a handle that is not
 *     ours is counted (badHandles), never followed
 *  B  the repeats of the event's last state still counted on this thread
 *     (ns_collapse) travel with the STOP
 *  C  write the STOP entry and publish it (R1); a full ring drops and counts
 * Whether the event still runs (a double stop, a stop after the writer
 * closed the event) is the writer's to tell, from the ids it saw end.
 */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/handle.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

void ns_capture_stop(void* handle) {
  /* A */
  if (!handle) return;
  if (!ns_handle_ok(handle)) {
    atomic_fetch_add_explicit(&ns_cnt.bad_handles, 1, memory_order_relaxed);
    return;
  }
  uint64_t id = ns_handle_id(handle);
  unsigned type = ns_handle_type(handle);
  ns_ring* ring = ns_ring_self();
  if (!ring) {
    ns_count_dropped(ring, type);
    return;
  }
  /* B */
  uint64_t repeats = 0;
  ns_collapse* c = ns_collapse_of(ring->collapse, id);
  if (c->id == id) {
    repeats = c->repeats;
    c->id = 0;
    c->repeats = 0;
  }
  /* C */
  uint64_t* w = ns_ring_reserve(ring, NS_ENT_STOP_WORDS);
  if (!w) {
    ns_count_dropped(ring, type);
    return;
  }
  w[0] = ns_ent_w0(NS_ENT_STOP, type, ns_handle_pxn(handle) ? NS_RF_PXN : 0, NS_CTX_NONE, NS_ENT_STOP_WORDS);
  w[1] = ns_clock_ticks();
  w[2] = id;
  w[3] = repeats << 32;
  ns_ring_commit(ring);
}
