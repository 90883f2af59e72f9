/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: recordEventState (hot path, NCCL threads). The STATE entry
 * carries NCCL's state id and the value its args held (the adapter picked
 * it). A state identical to its event's previous one on this thread (state
 * and argument: NCCL 2.27+ records SendPeerWait once per proxy pass while
 * the receiver is not ready) is only counted in the thread's collapse table
 * (ns_collapse, in its ring); the count travels with the event's next entry,
 * and the writer records it as one repeat record. When another event takes
 * the table's place first, the count goes out alone, in a REPEAT entry.
 *
 * Shape: the usual call (the thread's ring claimed in this session, the TSC
 * in use, no other event's repeats to flush) makes no call at all; the rest
 * tail-calls state_cold(), which claims the ring and reads the clock the
 * general way, then records through the same write_state(). */
#include "capture/capture.h"
#include "capture/drops.h"
#include "capture/handle.h"
#include "clock/clock.h"
#include "ring/ring.h"
#include "capture/context.h"

_Static_assert(NS_EV_COUNT <= 16, "ns_collapse's key holds the event type in 4 bits");
#define KEY_TYPE(key) (((key) >> 16) & 0xFu)
#define KEY_PXN(key) (((key) >> 20) & 1u)

/* The repeats counted in c for another event, in their own entry. */
__attribute__((noinline, cold)) static void flush_repeats(ns_ring* ring, const ns_collapse* c, uint64_t ticks) {
  uint64_t* w = ns_ring_reserve(ring, NS_ENT_REPEAT_WORDS);
  if (!w) {
    ns_count_dropped(ring, KEY_TYPE(c->key));
    return;
  }
  w[NS_ENT_W0] = ns_ent_w0(NS_ENT_REPEAT, KEY_TYPE(c->key), KEY_PXN(c->key) ? NS_RF_PXN : 0, NS_CTX_NONE,
                           NS_ENT_REPEAT_WORDS);
  w[NS_ENT_TICK] = ticks;
  w[NS_ENT_ID] = c->id;
  w[NS_ENT_COMM_AUX] = ns_ent_comm_aux(0, c->repeats);
  ns_ring_commit(ring);
}

/* Writes the STATE entry and makes the event's place hold it (the place is
 * free, or holds this event: nothing to flush). No call: a full ring only
 * counts the drop. */
__attribute__((always_inline)) static inline void write_state(ns_ring* ring, ns_collapse* c, uint64_t ticks,
                                                              uint64_t id, uint32_t key, int state, int has_arg,
                                                              uint64_t arg) {
  uint32_t repeats = c->id == id ? c->repeats : 0;
  uint64_t* w = ns_ring_reserve(ring, NS_ENT_STATE_WORDS);
  if (!w) {
    ns_count_dropped(ring, KEY_TYPE(key)); /* the place keeps what it had: the dropped state collapses nothing */
    return;
  }
  c->id = id;
  c->key = key;
  c->arg = arg;
  c->repeats = 0;
  w[NS_ENT_W0] = ns_ent_w0(NS_ENT_STATE, KEY_TYPE(key), (KEY_PXN(key) ? NS_RF_PXN : 0) | (has_arg ? NS_RF_HAS_ARG : 0),
                           NS_CTX_NONE, NS_ENT_STATE_WORDS);
  w[NS_ENT_TICK] = ticks;
  w[NS_ENT_ID] = id;
  if (repeats > NS_ENT_STATE_REPEATS_MAX) repeats = NS_ENT_STATE_REPEATS_MAX;
  w[NS_ENT_COMM_AUX] = ns_ent_state_comm_aux(state, repeats);
  w[NS_ENT_STATE_ARG] = arg;
  ns_ring_commit(ring);
}

/* The general way: the ring claimed if need be, the clock read however it
 * is, another event's counted repeats flushed from the place first. */
__attribute__((noinline, cold)) static void state_cold(ns_ring* ring, uint64_t id, uint32_t key, int state,
                                                        int has_arg, uint64_t arg) {
  if (!ring && !(ring = ns_ring_self())) {
    ns_count_dropped(ring, KEY_TYPE(key));
    return;
  }
  uint64_t ticks = ns_clock_ticks();
  ns_collapse* c = ns_collapse_of(ring->collapse, id);
  if (c->id == id && c->key == key && c->arg == arg) {
    c->repeats++;
    return;
  }
  if (c->id != id && c->repeats) {
    flush_repeats(ring, c, ticks);
    c->id = 0;
    c->repeats = 0;
  }
  write_state(ring, c, ticks, id, key, state, has_arg, arg);
}

void ns_capture_state(void* handle, int state, int has_arg, uint64_t arg) {
  if (!handle) return;
  if (!ns_handle_ok(handle)) {
    atomic_fetch_add_explicit(&ns_cnt.bad_handles, 1, memory_order_relaxed);
    return;
  }
  if ((unsigned)state >= NS_ST_OWN_FIRST) state = NS_ST_OWN_FIRST - 1; /* ids above are ncclscope's own */
  uint64_t id = ns_handle_id(handle);
  uint32_t key = ((uint32_t)state + 1) | (has_arg ? 0x100u : 0) | ns_handle_type(handle) << 16 |
                 (uint32_t)ns_handle_pxn(handle) << 20;
  ns_ring* ring = ns_ring_claimed();
  if (__builtin_expect(ring != 0 && ns_clock_tsc_inline(), 1)) {
    ns_collapse* c = ns_collapse_of(ring->collapse, id);
    if (c->id == id) {
      if (c->key == key && c->arg == arg) {
        c->repeats++;
        return;
      }
    } else if (c->repeats) {
      state_cold(ring, id, key, state, has_arg, arg); /* another event's repeats to flush first */
      return;
    }
    write_state(ring, c, ns_clock_tsc_ticks(), id, key, state, has_arg, arg);
    return;
  }
  state_cold(ring, id, key, state, has_arg, arg);
}
