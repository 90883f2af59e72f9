/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope: the records of the events the writer ends itself
 * (closed_events.h). */
#include "writer/closed_events.h"

#include <string.h>

#include "capture/context.h"
#include "clock/clock.h"
#include "session/session.h"
#include "writer/analysis_feed.h"
#include "writer/restarts.h"
#include "writer/writer_state.h"

/* The writer's own block (events it closed by age, pressure, communicator
 * end or exit), outside any ring's block: begun on the first close. */
static struct {
  ns_event_encoder enc;
  ns_buf buf;
  int open;
} O;

ns_record ns_closed_record(uint64_t id, unsigned type, uint32_t ctx_index, unsigned reason, uint64_t ts, uint32_t tid) {
  ns_record r = ns_record_make(NS_REC_STATE, (uint8_t)type,
                               ctx_index < NS_MAX_CONTEXTS ? ns_ws.ctx_serial[ctx_index] : 0, ts, id, 0);
  r.tid = tid;
  r.state = NS_ST_CLOSED;
  r.flags = NS_RF_HAS_ARG;
  r.arg = reason;
  if (reason < NS_CLOSE_REASONS) ns_ws.closed[reason]++;
  return r;
}

void ns_closed_flush(void) {
  if (!O.open) return;
  ns_events_end(&O.enc, ns_ws.seq++);
  ns_buf_put(&ns_ws.out, O.buf.data, O.buf.len);
  ns_buf_reset(&O.buf);
  O.open = 0;
}

void ns_closed_on_close(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx_index, unsigned reason) {
  (void)user;
  uint32_t tid = atomic_load_explicit(&ns_ws.tid, memory_order_relaxed);
  ns_record r = ns_closed_record(id, type, ctx_index, reason, ns_clock_to_ns(&ns_sess.clock, ns_clock_ticks()), tid);
  if (type == NS_EV_PROXY_OP) ns_restarts_parent_stopped(id);
  if (!O.open) {
    (ns_sess.abi_version >= 7 ? ns_events13_begin : ns_events_begin)(&O.enc, &O.buf, tid, 0, r.ts, r.id);
    O.open = 1;
  }
  ns_events_put(&O.enc, &r);
  ns_feed_record(&r, analysed);
}

void ns_closed_reset(void) {
  ns_buf_free(&O.buf);
  memset(&O, 0, sizeof O);
}
