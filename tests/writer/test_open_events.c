/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope writer unit test: the handles NCCL gets (they carry the event's
 * id, type and PXN bit; nothing else passes for one) and the writer's table
 * of open events (found by id however many are open, how each ended, the
 * closing rules: max age, pinned events, pressure, a communicator's end). */
#include <stdlib.h>

#include "capture/context.h"
#include "capture/handle.h"
#include "check.h"
#include "session/session.h"
#include "writer/open_events.h"

typedef struct {
  uint64_t id[64];
  unsigned reason[64], type[64];
  int n, unanalysed;
} closes;

static void on_close(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx, unsigned reason) {
  (void)ctx;
  closes* c = user;
  if (c->n < 64) c->id[c->n] = id, c->reason[c->n] = reason, c->type[c->n] = type;
  c->n++;
  c->unanalysed += !analysed;
}

static void check_handles(void) {
  uint64_t id = (UINT64_C(0xBEEF) << 40) | 12345; /* ring serial 0xBEEF, its 12,345th event */
  void* h = ns_handle_make(id, NS_EV_PROXY_STEP, 0);
  CHECK_TRUE(ns_handle_ok(h));
  CHECK_U64(ns_handle_id(h), id);
  CHECK_U64(ns_handle_type(h), NS_EV_PROXY_STEP);
  CHECK_U64(ns_handle_pxn(h), 0);
  void* p = ns_handle_make(7, NS_EV_PROXY_OP, 1);
  CHECK_U64(ns_handle_id(p), 7);
  CHECK_U64(ns_handle_type(p), NS_EV_PROXY_OP);
  CHECK_U64(ns_handle_pxn(p), 1);
  /* the largest id a handle holds: 56 bits */
  uint64_t top = (UINT64_C(1) << NS_HANDLE_ID_BITS) - 1;
  CHECK_U64(ns_handle_id(ns_handle_make(top, NS_EV_CE_BATCH, 1)), top);
  /* nothing else passes: NULL, id 0, aligned addresses (a stack, a heap, a static object) */
  int local;
  static long global;
  void* heap = malloc(24);
  CHECK_TRUE(!ns_handle_ok(NULL));
  CHECK_TRUE(!ns_handle_ok(ns_handle_make(0, NS_EV_COLL, 0)));
  CHECK_TRUE(!ns_handle_ok(&local));
  CHECK_TRUE(!ns_handle_ok(&global));
  CHECK_TRUE(!ns_handle_ok(heap));
  free(heap);
}

static void check_many_open(void) {
  /* 20,000 open at once, found by id (most pushed out of the recent table into the map) */
  for (uint64_t i = 1; i <= 20000; i++) ns_open_started(i, NS_EV_PROXY_STEP, 1, 1000 + i, 0, 0, 42, 0);
  int found = 0;
  for (uint64_t i = 1; i <= 20000; i++) {
    ns_open_event* e = ns_open_find(i);
    found += e && e->id == i && e->comm == 42 && e->start_ns == 1000 + i;
  }
  CHECK_U64(found, 20000);
  CHECK_TRUE(ns_open_find(20001) == NULL);
  /* stop the odd ones: they end as stopped, the even ones stay open */
  for (uint64_t i = 1; i <= 20000; i += 2) ns_open_stopped(ns_open_find(i));
  int open = 0, stopped = 0;
  for (uint64_t i = 1; i <= 20000; i++) {
    open += ns_open_is_open(i);
    stopped += ns_open_ended(i) == NS_OPEN_STOPPED;
  }
  CHECK_U64(open, 10000);
  CHECK_U64(stopped, 10000);
  /* a restarted step closes, giving its type word (the shedding mark
   * included): ended as closed, a second close is a no-op */
  ns_open_started(20002, NS_EV_PROXY_STEP | NS_OPEN_UNANALYSED, 1, 1, 0, 0, 42, 0);
  uint32_t type = 0;
  CHECK_U64(ns_open_close(20002, &type), 1);
  CHECK_U64(type & (0xFFu | NS_OPEN_UNANALYSED), NS_EV_PROXY_STEP | NS_OPEN_UNANALYSED);
  CHECK_U64(ns_open_close(2, &type), 1);
  CHECK_U64(type & (0xFFu | NS_OPEN_UNANALYSED), NS_EV_PROXY_STEP);
  CHECK_U64(ns_open_close(2, NULL), 0);
  CHECK_U64(ns_open_ended(2), NS_OPEN_CLOSED);
  CHECK_U64(ns_open_ended(999999), NS_OPEN_UNKNOWN);
  /* the communicator ends: its open events are closed, once each */
  closes c = {0};
  ns_open_release_context(1, on_close, &c);
  CHECK_U64(c.n, 9999);
  CHECK_U64(c.reason[0], NS_CLOSE_COMM_END);
  CHECK_U64(ns_open_is_open(4), 0);
  CHECK_U64(ns_open_ended(4), NS_OPEN_CLOSED);
  ns_open_reset();
}

static void check_closing_rules(void) {
  ns_sess.cfg.slab_events = 16; /* open events held per communicator */
  ns_sess.cfg.hold_ms = 1;
  ns_sess.cfg.max_age_ms = 1000;
  const uint64_t ms = 1000000;
  /* max age: an old Coll is closed, a pinned (graph-captured) CollApi of the same age is not */
  ns_open_started(100, NS_EV_COLL, 2, 1 * ms, 0, 0, 5, 0);
  ns_open_started(101, NS_EV_COLL_API, 2, 1 * ms, 1, 0, 5, 0);
  closes c = {0};
  ns_open_run(500 * ms, on_close, &c);
  CHECK_U64(c.n, 0);
  ns_open_run(1002 * ms, on_close, &c);
  CHECK_U64(c.n, 1);
  CHECK_U64(c.id[0], 100);
  CHECK_U64(c.reason[0], NS_CLOSE_MAX_AGE);
  CHECK_U64(ns_open_is_open(101), 1);
  /* pressure: 16 held in communicator 3, the 17th is not; above 14 open, the
   * leak-prone ones older than the hold time go (the first one started
   * marked as skipping the analysis: its close says so, its type is bare) */
  for (uint64_t i = 1; i <= 17; i++)
    ns_open_started(200 + i, NS_EV_PROXY_STEP | (i == 1 ? NS_OPEN_UNANALYSED : 0), 3, 2000 * ms, 0, 0, 6, 0);
  CHECK_U64(ns_open_is_open(216), 1);
  CHECK_U64(ns_open_is_open(217), 0);
  c.n = 0;
  ns_open_run(2000 * ms, on_close, &c); /* younger than the hold time: kept */
  CHECK_U64(c.n, 0);
  ns_open_run(2002 * ms, on_close, &c);
  CHECK_U64(c.n, 16);
  CHECK_U64(c.reason[0], NS_CLOSE_PRESSURE);
  CHECK_U64(c.unanalysed, 1);
  CHECK_U64(c.type[0], NS_EV_PROXY_STEP);
  /* the other communicator's events were not touched */
  CHECK_U64(ns_open_is_open(101), 1);
  /* the process ends: what is left is closed */
  c.n = c.unanalysed = 0;
  ns_open_close_all(NS_CLOSE_EXIT, on_close, &c);
  CHECK_U64(c.n, 1);
  CHECK_U64(c.unanalysed, 0);
  CHECK_U64(c.id[0], 101);
  CHECK_U64(c.reason[0], NS_CLOSE_EXIT);
  ns_open_reset();
}

int main(void) {
  check_handles();
  check_many_open();
  check_closing_rules();
  CHECK_DONE();
}
