/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: what the writer recorded and lost (counters.h). */
#include "writer/counters.h"

#include <string.h>

#include "capture/context.h"
#include "ncclscope/analysis.h" /* ns_summary_recording */
#include "ring/ring.h"
#include "writer/trace_out.h"
#include "writer/writer_state.h"

void ns_counters_props(ns_buf* out) {
  uint64_t ev = 0, dr_ring = 0;
  for (int t = 0; t < NS_EV_COUNT; t++) {
    uint64_t ring_t = 0;
    for (uint32_t i = 0; i < ns_ring_pool_count(); i++)
      ring_t += atomic_load_explicit(&ns_ring_pool_get(i)->dropped[t], memory_order_relaxed);
    uint64_t u = atomic_load_explicit(&ns_cnt.dropped_unringed[t], memory_order_relaxed);
    ev += ns_ws.events[t];
    dr_ring += ring_t + u; /* events of a thread that got no ring count as ring drops */
    if (ns_ws.events[t]) ns_props_u64(out, NS_P_TYPE_EVENTS_BASE + t, ns_ws.events[t]);
    if (ring_t + u) ns_props_u64(out, NS_P_TYPE_DROPPED_BASE + t, ring_t + u);
  }
  ns_props_u64(out, NS_P_EVENTS, ev);
  ns_props_u64(out, NS_P_DROPPED, dr_ring);
  ns_props_u64(out, NS_P_DROPPED_RING, dr_ring);
  /* Handles carry their id: no start is lost for want of one (the field stays for readers). */
  ns_props_u64(out, NS_P_DROPPED_HANDLES, 0);
  ns_props_u64(out, NS_P_BAD_HANDLES, atomic_load_explicit(&ns_cnt.bad_handles, memory_order_relaxed));
  ns_props_u64(out, NS_P_PXN_EVENTS, ns_ws.pxn_events);
  ns_props_u64(out, NS_P_PARENT_LOST, ns_ws.parent_lost);
  ns_props_u64(out, NS_P_PARENTS_LATE, 0); /* a handle carries its parent's id: none is found late */
  ns_props_u64(out, NS_P_STALE_HANDLES, atomic_load_explicit(&ns_cnt.stale_handles, memory_order_relaxed));
  ns_props_u64(out, NS_P_DOUBLE_STOPS, atomic_load_explicit(&ns_cnt.double_stops, memory_order_relaxed));
  ns_props_u64(out, NS_P_LATE_STATES, atomic_load_explicit(&ns_cnt.late_states, memory_order_relaxed));
  ns_props_u64(out, NS_P_STATE_REPEATS, ns_ws.state_repeats);
  ns_props_u64(out, NS_P_STEPS_UNANALYSED, ns_ws.steps_unanalysed);
  for (unsigned r = 1; r < NS_CLOSE_REASONS; r++)
    if (ns_ws.closed[r]) ns_props_u64(out, NS_P_CLOSED_BASE + r, ns_ws.closed[r]);
  const ns_trace_file_counts* file = ns_trace_out_counts();
  ns_props_u64(out, NS_P_WRITE_ERRORS, file->write_errors);
  ns_props_u64(out, NS_P_BYTES_WRITTEN, file->written + ns_trace_out_held() + ns_ws.out.len);
  ns_props_u64(out, NS_P_BYTES_LOST, file->lost);
}

void ns_writer_drops(uint64_t* ring, uint64_t* closed) {
  uint64_t r = 0;
  for (int t = 0; t < NS_EV_COUNT; t++) {
    for (uint32_t i = 0; i < ns_ring_pool_count(); i++)
      r += atomic_load_explicit(&ns_ring_pool_get(i)->dropped[t], memory_order_relaxed);
    r += atomic_load_explicit(&ns_cnt.dropped_unringed[t], memory_order_relaxed);
  }
  *ring = r;
  memcpy(closed, ns_ws.closed, sizeof ns_ws.closed); /* NS_CLOSE_REASONS entries */
}

void ns_writer_recording(ns_summary_recording* out) {
  uint64_t closed[NS_CLOSE_REASONS];
  memset(out, 0, sizeof *out);
  for (int t = 0; t < NS_EV_COUNT; t++) out->events += ns_ws.events[t];
  ns_writer_drops(&out->records_dropped, closed);
  const ns_trace_file_counts* file = ns_trace_out_counts();
  out->bytes_lost = file->lost + ns_trace_out_held(); /* what the file still refuses at the end is lost too */
  out->blocks_lost = file->blocks_dropped;
  out->write_errors = file->write_errors;
  out->steps_unanalysed = ns_ws.steps_unanalysed;
}

size_t ns_writer_comm_drops(uint32_t* serial, uint64_t* dropped) {
  size_t n = 0;
  for (uint32_t i = 0; i < NS_MAX_CONTEXTS; i++) {
    if (!ns_ws.ctx_serial[i]) continue;
    uint64_t d = 0;
    for (int t = 0; t < NS_EV_COUNT; t++)
      d += atomic_load_explicit(&ns_ctx_table[i].dropped[t], memory_order_relaxed);
    serial[n] = ns_ws.ctx_serial[i];
    dropped[n++] = d;
  }
  return n;
}
