/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: special synthetic runs, one exporter property each (see
 * tb_write_special in trace_builder.h). Times are ns on the trace clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"

#define T 2000000000ull
#define PID_SPECIAL 5001u
enum { TID_APP = 100, TID_PROXY = 200, TID_OTHER = 300 };

/* Buffers records and writes them as EVENTS blocks of one thread. */
typedef struct {
  tb_file* f;
  uint32_t tid, ring;
  ns_record recs[512];
  size_t n;
} rec_stream;

static void rs_flush(rec_stream* s) {
  if (s->n) tb_events(s->f, s->tid, s->ring, s->recs, s->n);
  s->n = 0;
}

static void rs_put(rec_stream* s, ns_record r) {
  if (s->n == sizeof s->recs / sizeof s->recs[0]) rs_flush(s);
  s->recs[s->n++] = r;
}

static void header(tb_file* f, const char* host, uint64_t mask, int ncomms) {
  static const uint32_t ids[] = {1, 2, 3, 4};
  static const char* const strs[] = {"AllReduce", "ncclFloat32", "Ring", "Simple"};
  tb_begin(f);
  tb_process(f, PID_SPECIAL, host, 1700000000000000000ll);
  tb_strings(f, 4, ids, strs);
  tb_thread(f, TID_APP, 1, "app");
  tb_thread(f, TID_PROXY, 2, "proxy");
  tb_thread(f, TID_OTHER, 3, "other");
  for (int c = 1; c <= ncomms; c++) {
    tb_comm cm = {.comm = (uint32_t)c, .comm_id = 0xABC000ull + (uint64_t)c, .rank = 0, .nranks = 2, .nnodes = 1,
                  .name = c == 1 ? "world" : "split", .abi = 6, .mask = mask,
                  .uuid = "GPU-00000000-0000-0000-0000-00000000000a", .ts = T - 1000 + (uint64_t)c, .tid = TID_APP};
    tb_comm_init(f, &cm);
  }
}

static int finish(tb_file* f, const char* dir, const char* name) {
  tb_end(f);
  char path[4096];
  snprintf(path, sizeof path, "%s/ncclscope-%s-%u.nstrace", dir, name, PID_SPECIAL);
  int rc = tb_write(f, path, SIZE_MAX);
  tb_free(f);
  return rc;
}

static ns_record proxy_op(uint32_t comm, uint32_t tid, uint64_t ts, uint64_t id, uint64_t parent, uint64_t channel) {
  ns_record r = tb_start(NS_EV_PROXY_OP, comm, tid, ts, id, parent);
  r.num[NS_PROXY_OP_CHANNEL] = channel;
  r.num[NS_PROXY_OP_PEER] = 1;
  r.num[NS_PROXY_OP_STEPS] = 4;
  r.num[NS_PROXY_OP_CHUNK_SIZE] = 65536;
  r.num[NS_PROXY_OP_IS_SEND] = 1;
  r.num[NS_PROXY_OP_PID] = PID_SPECIAL;
  return r;
}

/* n ProxyOps start 10 ms apart and never stop; then the first 10 and the
 * last 10 stop. (10 ms apart: the metrics pass's own in-flight state is
 * bounded by trace age, 10 s; the cap under test bounds the walker's.) */
static int open_run(const char* dir, uint64_t n) {
  if (n < 20) n = 20;
  tb_file f;
  header(&f, "open", 0x7F5F, 1);
  rec_stream s = {.f = &f, .tid = TID_PROXY, .ring = 2};
  for (uint64_t i = 1; i <= n; i++) rs_put(&s, proxy_op(1, TID_PROXY, T + i * 10000000, i, 0, i % 4));
  uint64_t ts = T + (n + 1) * 10000000;
  for (uint64_t i = 1; i <= 10; i++) rs_put(&s, tb_stop(NS_EV_PROXY_OP, 1, TID_PROXY, ts++, i));
  for (uint64_t i = n - 9; i <= n; i++) rs_put(&s, tb_stop(NS_EV_PROXY_OP, 1, TID_PROXY, ts++, i));
  rs_flush(&s);
  tb_comm_fini(&f, 1, ts + 100, TID_APP, n, 0);
  return finish(&f, dir, "open");
}

/* Two communicators, each finalized with its own drops, then the process
 * COUNTERS block as the plugin writes it at its last finalize. With
 * `no_fini`, no COMM_FINI precedes the COUNTERS block. */
static int counters_run(const char* dir, int no_fini) {
  tb_file f;
  header(&f, no_fini ? "counters-nofini" : "counters", 0x7F5F, 2);
  rec_stream s = {.f = &f, .tid = TID_PROXY, .ring = 2};
  for (uint64_t i = 1; i <= 4; i++) {
    rs_put(&s, proxy_op((uint32_t)(1 + i % 2), TID_PROXY, T + i * 100, i, 0, i % 2));
    rs_put(&s, tb_stop(NS_EV_PROXY_OP, (uint32_t)(1 + i % 2), TID_PROXY, T + i * 100 + 50, i));
  }
  rs_flush(&s);
  static const uint32_t fini_keys[] = {NS_P_COMM, NS_P_TS, NS_P_TID, NS_P_EVENTS, NS_P_DROPPED,
                                       NS_P_TYPE_EVENTS_BASE + NS_EV_PROXY_OP,
                                       NS_P_TYPE_DROPPED_BASE + NS_EV_PROXY_STEP};
  uint64_t fini1[] = {1, T + 1000, TID_APP, 2, 3, 2, 3};
  uint64_t fini2[] = {2, T + 1100, TID_APP, 2, 4, 2, 4};
  if (!no_fini) {
    tb_props_block(&f, NS_BLOCK_COMM_FINI, 7, fini_keys, fini1);
    tb_props_block(&f, NS_BLOCK_COMM_FINI, 7, fini_keys, fini2);
  }
  static const uint32_t keys[] = {NS_P_TYPE_EVENTS_BASE + NS_EV_PROXY_OP, NS_P_TYPE_DROPPED_BASE + NS_EV_PROXY_STEP,
                                  NS_P_TYPE_DROPPED_BASE + NS_EV_COLL, NS_P_EVENTS, NS_P_DROPPED, NS_P_DROPPED_RING,
                                  NS_P_DROPPED_HANDLES, NS_P_BAD_HANDLES, NS_P_PXN_EVENTS, NS_P_PARENT_LOST,
                                  NS_P_WRITE_ERRORS, NS_P_BYTES_WRITTEN};
  static const uint64_t vals[] = {4, 7, 2, 4, 9, 7, 2, 5, 0, 1, 0, 123456};
  tb_props_block(&f, NS_BLOCK_COUNTERS, sizeof keys / sizeof keys[0], keys, vals);
  return finish(&f, dir, no_fini ? "counters-nofini" : "counters");
}

static ns_record api(uint8_t type, uint32_t tid, uint64_t ts, uint64_t id, uint64_t parent) {
  ns_record r = tb_start(type, 1, tid, ts, id, parent);
  if (type == NS_EV_COLL_API || type == NS_EV_P2P_API) {
    r.str[NS_COLL_API_FUNC] = 1; /* CollApi and P2pApi share these three */
    r.str[NS_COLL_API_DTYPE] = 2;
    r.num[NS_COLL_API_COUNT] = 1024;
  }
  return r;
}

static ns_record step(uint32_t tid, uint64_t ts, uint64_t id, uint64_t parent, uint64_t n) {
  ns_record r = tb_start(NS_EV_PROXY_STEP, 1, tid, ts, id, parent);
  r.num[NS_PROXY_STEP_STEP] = n;
  return r;
}

/* Slices that overlap without nesting on one track, in every way the
 * exporter must handle (ids: thread * 100000 + n; times T + offset):
 *  app   GroupApi X [100, 500] whose stop is recorded by another thread and
 *        read last, KernelLaunch child Z [150, 180] written before X (its
 *        arrow starts at X's start), CollApi Y [200, 600]: X moves;
 *        GroupApi A [1000, 2000] with a CollApi child B from 1500 that never
 *        stops (drawn to the end): B moves
 *  proxy ProxyOp P (ch 0) with steps S1 [1000, 1200] (stop recorded by the
 *        other thread and read before S2 starts) and S2 [1100, 1300]; ProxyOp
 *        Q (ch 1) with 40 steps in flight at once; a step on ch 2 whose
 *        states were recorded out of time order
 *  app3  40 CollApi [10000 + i, 20000 + i]: each overlaps every other one
 *  app4  GroupApi G from 30000 that never stops, with 1500 CollApi children
 *        one after another: G contains them all and stays */
static int misnest_run(const char* dir) {
  enum { TID_APP3 = 500, TID_APP4 = 600 };
  tb_file f;
  header(&f, "misnest", 0x7FFF, 1);
  tb_thread(&f, TID_APP3, 4, "app3");
  tb_thread(&f, TID_APP4, 5, "app4");
  rec_stream app = {.f = &f, .tid = TID_APP, .ring = 1};
  rec_stream prx = {.f = &f, .tid = TID_PROXY, .ring = 2};
  rec_stream oth = {.f = &f, .tid = TID_OTHER, .ring = 3};
  const uint64_t A = 100000, P = 200000, X3 = 500000, X4 = 600000;

  /* proxy, first block: P and S1 start. */
  rs_put(&prx, proxy_op(1, TID_PROXY, T + 50, P + 1, 0, 0));
  rs_put(&prx, step(TID_PROXY, T + 1000, P + 2, P + 1, 0));
  rs_flush(&prx);
  /* app: X, Z, Y; A and B. */
  rs_put(&app, api(NS_EV_GROUP_API, TID_APP, T + 100, A + 1, 0));
  rs_put(&app, api(NS_EV_KERNEL_LAUNCH, TID_APP, T + 150, A + 2, A + 1));
  rs_put(&app, tb_stop(NS_EV_KERNEL_LAUNCH, 1, TID_APP, T + 180, A + 2));
  rs_put(&app, api(NS_EV_COLL_API, TID_APP, T + 200, A + 3, A + 1));
  rs_put(&app, tb_stop(NS_EV_COLL_API, 1, TID_APP, T + 600, A + 3));
  rs_put(&app, api(NS_EV_GROUP_API, TID_APP, T + 1000, A + 4, 0));
  rs_put(&app, api(NS_EV_COLL_API, TID_APP, T + 1500, A + 5, A + 4));
  rs_put(&app, tb_stop(NS_EV_GROUP_API, 1, TID_APP, T + 2000, A + 4));
  rs_flush(&app);
  /* other: the stops of X and S1. */
  rs_put(&oth, tb_stop(NS_EV_PROXY_STEP, 1, TID_OTHER, T + 1200, P + 2));
  rs_put(&oth, tb_stop(NS_EV_GROUP_API, 1, TID_OTHER, T + 500, A + 1));
  rs_flush(&oth);
  /* proxy, second block: S2; Q and its 40 steps; the step with shuffled states; the stops. */
  rs_put(&prx, step(TID_PROXY, T + 1100, P + 3, P + 1, 1));
  rs_put(&prx, tb_stop(NS_EV_PROXY_STEP, 1, TID_PROXY, T + 1300, P + 3));
  rs_put(&prx, proxy_op(1, TID_PROXY, T + 1900, P + 10, 0, 1));
  for (uint64_t i = 0; i < 40; i++) rs_put(&prx, step(TID_PROXY, T + 2000 + i, P + 100 + i, P + 10, i));
  for (uint64_t i = 0; i < 40; i++) rs_put(&prx, tb_stop(NS_EV_PROXY_STEP, 1, TID_PROXY, T + 3000 + i, P + 100 + i));
  rs_put(&prx, tb_stop(NS_EV_PROXY_OP, 1, TID_PROXY, T + 3100, P + 10));
  rs_put(&prx, proxy_op(1, TID_PROXY, T + 6900, P + 20, 0, 2));
  rs_put(&prx, step(TID_PROXY, T + 7000, P + 21, P + 20, 0));
  static const uint64_t state_ts[] = {7010, 7030, 7020, 7040};
  static const int state_id[] = {8, 9, 10, 9};
  for (int i = 0; i < 4; i++) rs_put(&prx, tb_state(NS_EV_PROXY_STEP, 1, TID_PROXY, T + state_ts[i], P + 21, state_id[i], 1, 4096));
  rs_put(&prx, tb_stop(NS_EV_PROXY_STEP, 1, TID_PROXY, T + 7050, P + 21));
  rs_put(&prx, tb_stop(NS_EV_PROXY_OP, 1, TID_PROXY, T + 7100, P + 20));
  rs_put(&prx, tb_stop(NS_EV_PROXY_OP, 1, TID_PROXY, T + 8000, P + 1));
  rs_flush(&prx);
  /* app3: 40 events, each overlapping every other one. */
  rec_stream a3 = {.f = &f, .tid = TID_APP3, .ring = 4};
  for (uint64_t i = 0; i < 40; i++) rs_put(&a3, api(NS_EV_COLL_API, TID_APP3, T + 10000 + i, X3 + i + 1, 0));
  for (uint64_t i = 0; i < 40; i++) rs_put(&a3, tb_stop(NS_EV_COLL_API, 1, TID_APP3, T + 20000 + i, X3 + i + 1));
  rs_flush(&a3);
  /* app4: an outer event that never stops around 1500 children. */
  rec_stream a4 = {.f = &f, .tid = TID_APP4, .ring = 5};
  rs_put(&a4, api(NS_EV_GROUP_API, TID_APP4, T + 30000, X4 + 1, 0));
  for (uint64_t k = 0; k < 1500; k++) {
    rs_put(&a4, api(NS_EV_COLL_API, TID_APP4, T + 30010 + 10 * k, X4 + 2 + k, X4 + 1));
    rs_put(&a4, tb_stop(NS_EV_COLL_API, 1, TID_APP4, T + 30015 + 10 * k, X4 + 2 + k));
  }
  rs_flush(&a4);
  tb_comm_fini(&f, 1, T + 50000, TID_APP, 0, 0);
  return finish(&f, dir, "misnest");
}

int tb_write_special(const char* dir, const char* name, uint64_t n) {
  if (strcmp(name, "open") == 0) return open_run(dir, n ? n : 5000);
  if (strcmp(name, "counters") == 0) return counters_run(dir, 0);
  if (strcmp(name, "counters-nofini") == 0) return counters_run(dir, 1);
  if (strcmp(name, "misnest") == 0) return misnest_run(dir);
  return -1;
}
