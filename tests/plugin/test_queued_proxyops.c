/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: ProxyOps queued on a busy connection are not
 * "never stopped".
 *
 * NCCL starts a ProxyOp when it queues it on its connection (proxy.cc
 * ProxyAppend) and records InProgress only once the ProxyOps before it on
 * that connection are done (net.cc): on a real run (2 ranks time-sliced on
 * one H100, NCCL 2.28.9, docs/validation/) receive and send ProxyOps waited
 * 40-180 ms without a state, and the writer closed 201 of 528 as copy-transport
 * ProxyOps that NCCL never stops, then counted their real stops as stale.
 *
 * Here, with a 20 ms hold: a receive ProxyOp on connection (channel 0, peer 1)
 * runs and stops (a net connection); then four ProxyOps wait 80 ms without a
 * state, in this order: a receive on a connection no ProxyOp of which ever
 * stops (a copy transport's), a second receive on (0, 1), a net send, and a
 * receive that is the first of its connection (1, 1). All but the copy
 * transport's end with their own stops; that one is closed neverStopped once
 * ProxyOps started after it were stopped (collectives end in order). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

static void* proxy_op(ncclProfiler_v6_t* p, void* ctx, void* coll, int channel, int peer, int is_send) {
  ncclProfilerEventDescr_v6_t d = {.type = ncclProfileProxyOp, .parentObj = coll};
  d.proxyOp.pid = getpid();
  d.proxyOp.channelId = (uint8_t)channel;
  d.proxyOp.peer = peer;
  d.proxyOp.nSteps = 2;
  d.proxyOp.chunkSize = 32768;
  d.proxyOp.isSend = is_send;
  void* h = NULL;
  p->startEvent(ctx, &h, &d);
  return h;
}

static void run_op(ncclProfiler_v6_t* p, void* op) {
  ncclProfilerEventStateArgs_v6_t a;
  memset(&a, 0, sizeof a);
  p->recordEventState(op, ncclProfilerProxyOpInProgress_v4, &a);
  p->stopEvent(op);
}

/* The event of that START: whether it was stopped, and the reason it was closed (0: not closed). */
static void outcome(const tl_trace* t, uint64_t id, int* stopped, uint64_t* closed) {
  *stopped = 0;
  *closed = 0;
  for (size_t i = 0; i < t->nrecs; i++) {
    const ns_record* r = &t->recs[i].r;
    if (r->id != id) continue;
    if (r->kind == NS_REC_STOP) *stopped = 1;
    if (r->kind == NS_REC_STATE && r->state == NS_ST_CLOSED) *closed = r->arg;
  }
}

/* NCCL's calls: a net receive that runs and stops, then four ProxyOps 80 ms without a state. */
static void record_ops(ncclProfiler_v6_t* p, void* ctx) {
  ncclProfilerEventDescr_v6_t cd = {.type = ncclProfileColl};
  cd.coll.func = "AllReduce";
  cd.coll.nChannels = 1;
  void* coll = NULL;
  p->startEvent(ctx, &coll, &cd);
  p->stopEvent(coll);
  void* first = proxy_op(p, ctx, coll, 0, 1, 0);
  CHECK_TRUE(coll && first);
  run_op(p, first); /* InProgress: the communicator's net ProxyOps record it; then NCCL stops it */
  usleep(10000);    /* the writer drains both */

  void* copy = proxy_op(p, ctx, coll, 0, 2, 0);
  void* queued_recv = proxy_op(p, ctx, coll, 0, 1, 0);
  void* queued_send = proxy_op(p, ctx, coll, 0, 1, 1);
  void* first_of_conn = proxy_op(p, ctx, coll, 1, 1, 0);
  CHECK_TRUE(copy && queued_recv && queued_send && first_of_conn);
  usleep(80000); /* 4 hold times without a state, the writer polling each ms */
  run_op(p, queued_recv);
  run_op(p, queued_send);
  usleep(40000); /* the copy transport's is now older than ops NCCL stopped */
  run_op(p, first_of_conn);
  usleep(10000);
}

static const char* const settings[] = {"NCCLSCOPE_HOLD_MS", "20", "NCCLSCOPE_POLL_MS", "1", NULL};

int main(void) {
  char dir[128];
  tp_plugin plugin;
  void* ctx = tp_start_v6(&plugin, dir, sizeof dir, "test-queued-proxyops", settings, 0x9E0E, 2);
  if (!ctx) return 1;
  record_ops(plugin.v6, ctx);
  CHECK_U64(plugin.v6->finalize(ctx), ncclSuccess);

  tl_trace t = {0};
  CHECK_TRUE(tl_load_dir(&t, dir) == 1);
  uint64_t ids[5] = {0};
  size_t n = 0;
  for (size_t i = 0; i < t.nrecs && n < 5; i++)
    if (t.recs[i].r.kind == NS_REC_START && t.recs[i].r.type == NS_EV_PROXY_OP) ids[n++] = t.recs[i].r.id;
  CHECK_U64(n, 5);
  int stopped;
  uint64_t closed;
  outcome(&t, ids[1], &stopped, &closed);
  CHECK_U64(stopped, 0); /* the copy transport's receive */
  CHECK_U64(closed, NS_CLOSE_NEVER_STOPPED);
  for (size_t k = 2; k < 5; k++) { /* the queued receive, the net send, the first of its connection */
    outcome(&t, ids[k], &stopped, &closed);
    CHECK_U64(stopped, 1);
    CHECK_U64(closed, 0);
  }
  tl_free(&t);
  CHECK_DONE();
}
