/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope writer unit test: the handles NCCL gets (they carry the event's
 * id, type and PXN bit; nothing else passes for one) and the writer's open
 * events, its part of the tracker's entries (found by id however many are
 * open, how each ended, the closing rules: max age, pinned events,
 * pressure, a communicator's end; a STOP before its START, an event the
 * tracker gives up). Records go into the tracker as the drain puts them. */
#include <stdlib.h>

#include "capture/context.h"
#include "capture/handle.h"
#include "check.h"
#include "session/session.h"
#include "writer/open_events.h"
#include "writer/tracker.h"

static void tracker_open(void) {
  CHECK_U64(ns_tracker_open(0, 64, ns_open_event_bytes()), 0);
  ns_asm_sink sink;
  ns_open_attach(ns_tracker(), ns_tracker_area_open(), &sink);
  ns_tracker_follow_open(&sink);
}

static void feed(uint8_t kind, unsigned type, uint64_t id, uint64_t ts, uint32_t comm) {
  ns_record r = ns_record_make(kind, (uint8_t)(type & 0xFF), comm, ts, id, 0);
  ns_tracker_record(&r, 1);
}

/* A drained START: the tracker takes it, then the writer holds it. */
static void start(uint64_t id, unsigned type, uint32_t ctx, uint64_t ts, int pinned, uint32_t comm) {
  feed(NS_REC_START, type, id, ts, comm);
  ns_open_started(id, type, ctx, ts, pinned, 0, comm, 0);
}

/* A drained STOP of a held event: it ends, then the tracker takes the record. */
static void stop(uint64_t id) {
  ns_open_event* o = ns_open_find(id);
  unsigned type = o ? o->type & 0xFF : NS_EV_PROXY_STEP;
  if (o) ns_open_stopped(o);
  feed(NS_REC_STOP, type, id, 0, 0);
}

typedef struct {
  uint64_t id[64];
  unsigned reason[64], type[64];
  int n, unanalysed;
} closes;

/* The writer's closing: counted, and its CLOSED record into the tracker. */
static void on_close(void* user, uint64_t id, unsigned type, int analysed, uint32_t ctx, unsigned reason) {
  (void)ctx;
  closes* c = user;
  if (c->n < 64) c->id[c->n] = id, c->reason[c->n] = reason, c->type[c->n] = type;
  c->n++;
  c->unanalysed += !analysed;
  ns_record r = ns_record_make(NS_REC_STATE, (uint8_t)type, 0, 0, id, 0);
  r.state = NS_ST_CLOSED;
  r.arg = reason;
  ns_tracker_record(&r, analysed);
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
  tracker_open();
  for (uint64_t i = 1; i <= 20000; i++) start(i, NS_EV_PROXY_STEP, 1, 1000 + i, 0, 42);
  int found = 0;
  for (uint64_t i = 1; i <= 20000; i++) {
    ns_open_event* e = ns_open_find(i);
    found += e && e->id == i && e->comm == 42 && e->start_ns == 1000 + i;
  }
  CHECK_U64(found, 20000);
  CHECK_TRUE(ns_open_find(20001) == NULL);
  /* stop the odd ones: they end as stopped, the even ones stay open */
  for (uint64_t i = 1; i <= 20000; i += 2) stop(i);
  int open = 0, stopped = 0;
  for (uint64_t i = 1; i <= 20000; i++) {
    open += ns_open_is_open(i);
    stopped += ns_open_ended(i) == NS_OPEN_STOPPED;
  }
  CHECK_U64(open, 10000);
  CHECK_U64(stopped, 10000);
  /* a restarted step closes, giving its type word (the shedding mark
   * included): ended as closed, a second close is a no-op */
  start(20002, NS_EV_PROXY_STEP | NS_OPEN_UNANALYSED, 1, 1, 0, 42);
  uint32_t type = 0;
  CHECK_U64(ns_open_close(20002, &type), 1);
  CHECK_U64(type & (0xFFu | NS_OPEN_UNANALYSED), NS_EV_PROXY_STEP | NS_OPEN_UNANALYSED);
  CHECK_U64(ns_open_close(2, &type), 1);
  CHECK_U64(type & (0xFFu | NS_OPEN_UNANALYSED), NS_EV_PROXY_STEP);
  CHECK_U64(ns_open_close(2, NULL), 0);
  closes none = {0}; /* the drain records the two closes */
  on_close(&none, 20002, NS_EV_PROXY_STEP, 0, 1, NS_CLOSE_RESTARTED);
  on_close(&none, 2, NS_EV_PROXY_STEP, 1, 1, NS_CLOSE_RESTARTED);
  CHECK_U64(ns_open_ended(2), NS_OPEN_CLOSED);
  CHECK_U64(ns_open_ended(999999), NS_OPEN_UNKNOWN);
  /* the communicator ends: its open events are closed, once each */
  closes c = {0};
  ns_open_release_context(1, on_close, &c);
  CHECK_U64(c.n, 9999);
  CHECK_U64(c.reason[0], NS_CLOSE_COMM_END);
  CHECK_U64(ns_open_is_open(4), 0);
  CHECK_U64(ns_open_ended(4), NS_OPEN_CLOSED);
  /* the tracker released every closed one: none of them runs there any more */
  CHECK_TRUE(ns_asm_running_first(ns_tracker()) == NULL);
  /* a STOP drained before its START (another thread's ring first): recorded, the event never held */
  feed(NS_REC_STOP, NS_EV_PROXY_OP, 30000, 5, 42);
  start(30000, NS_EV_PROXY_OP, 1, 4, 0, 42);
  CHECK_U64(ns_open_is_open(30000), 0);
  /* the tracker gives up an event the writer holds (here: its flush): forgotten, not ended */
  start(30001, NS_EV_PROXY_OP, 1, 6, 0, 42);
  CHECK_U64(ns_open_is_open(30001), 1);
  ns_asm_flush(ns_tracker());
  CHECK_U64(ns_open_is_open(30001), 0);
  CHECK_U64(ns_open_ended(30001), NS_OPEN_UNKNOWN);
  ns_tracker_close();
  ns_open_reset();
}

static void check_closing_rules(void) {
  ns_sess.cfg.slab_events = 16; /* open events held per communicator */
  ns_sess.cfg.hold_ms = 1;
  ns_sess.cfg.max_age_ms = 1000;
  const uint64_t ms = 1000000;
  tracker_open();
  /* max age: an old Coll is closed, a pinned (graph-captured) CollApi of the same age is not */
  start(100, NS_EV_COLL, 2, 1 * ms, 0, 5);
  start(101, NS_EV_COLL_API, 2, 1 * ms, 1, 5);
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
    start(200 + i, NS_EV_PROXY_STEP | (i == 1 ? NS_OPEN_UNANALYSED : 0), 3, 2000 * ms, 0, 6);
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
  ns_tracker_close();
  ns_open_reset();
}

int main(void) {
  check_handles();
  check_many_open();
  check_closing_rules();
  CHECK_DONE();
}
