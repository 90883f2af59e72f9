/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: repeated states, collapsed per thread.
 *
 * NCCL 2.27+ records SendPeerWait once per proxy pass for every step that
 * waits on its receiver, interleaved over the channels of its connections.
 * The plugin counts a state equal to its event's previous one in a table of
 * places in the thread's ring (one per id, NS_COLLAPSE_SLOTS of them); the
 * count travels with the event's next entry or, when another event takes
 * the place, alone (a REPEAT entry).
 * 1. One thread interleaves NSTEPS + 1 ProxySteps that each record
 *    SendPeerWait REPS times, then (all but the last) SendWait, then stop:
 *    per step the trace holds one SendPeerWait, repeat records adding up to
 *    REPS - 1, the SendWait, and no repeat record after the step's stop.
 * 2. Two steps NS_COLLAPSE_SLOTS ids apart share a place: the first's
 *    counted repeats leave in a REPEAT entry when the second records a
 *    state, and still add up. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "ring/ring.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

#define NSTEPS 40
#define REPS 25

static void* start_step(ncclProfiler_v6_t* p, void* ctx, void* op, int step) {
  ncclProfilerEventDescr_v6_t d = {.type = ncclProfileProxyStep, .parentObj = op};
  d.proxyStep.step = step;
  void* h = NULL;
  p->startEvent(ctx, &h, &d);
  return h;
}

static void state(ncclProfiler_v6_t* p, void* h, int st, size_t size) {
  ncclProfilerEventStateArgs_v6_t a;
  memset(&a, 0, sizeof a);
  a.proxyStep.transSize = size;
  p->recordEventState(h, (ncclProfilerEventState_t)st, &a);
}

int main(void) {
  char dir[128];
  tp_plugin plugin;
  void* ctx = tp_start_v6(&plugin, dir, sizeof dir, "test-collapse", NULL, 0x77, 2);
  if (!ctx) return 1;
  ncclProfiler_v6_t* p = plugin.v6;
  ncclProfilerEventDescr_v6_t od = {.type = ncclProfileProxyOp};
  od.proxyOp.pid = getpid();
  od.proxyOp.isSend = 1;
  void* op = NULL;
  p->startEvent(ctx, &op, &od);
  CHECK_TRUE(op != NULL);
  void* steps[NSTEPS + 1];
  for (int i = 0; i <= NSTEPS; i++) steps[i] = start_step(p, ctx, op, i);
  /* REPS proxy passes, each visiting every waiting step (the last one too) */
  for (int r = 0; r < REPS; r++)
    for (int i = 0; i <= NSTEPS; i++) state(p, steps[i], ncclProfilerProxyStepSendPeerWait_v4, 4096);
  /* the steps but the last one move on (SendWait), then stop; the last stops waiting */
  for (int i = 0; i < NSTEPS; i++) {
    state(p, steps[i], ncclProfilerProxyStepSendWait, 4096);
    p->stopEvent(steps[i]);
  }
  p->stopEvent(steps[NSTEPS]);
  /* 2: a, then NS_COLLAPSE_SLOTS - 1 others, then b: a and b share a place */
  void* a = start_step(p, ctx, op, 1000);
  void* others[NS_COLLAPSE_SLOTS - 1];
  for (int i = 0; i < NS_COLLAPSE_SLOTS - 1; i++) others[i] = start_step(p, ctx, op, 1001 + i);
  void* b = start_step(p, ctx, op, 2000);
  for (int r = 0; r < 5; r++) state(p, a, ncclProfilerProxyStepSendPeerWait_v4, 512); /* 1 recorded, 4 counted */
  state(p, b, ncclProfilerProxyStepSendPeerWait_v4, 512);                          /* takes the place */
  state(p, a, ncclProfilerProxyStepSendWait, 512);
  p->stopEvent(a);
  p->stopEvent(b);
  for (int i = 0; i < NS_COLLAPSE_SLOTS - 1; i++) p->stopEvent(others[i]);
  p->stopEvent(op);
  CHECK_U64(p->finalize(ctx), ncclSuccess);

  tl_trace t = {0};
  CHECK_TRUE(tl_load_dir(&t, dir) == 1);
  uint64_t ids[NSTEPS + 1] = {0};
  int n = 0;
  for (size_t k = 0; k < t.nrecs && n <= NSTEPS; k++)
    if (t.recs[k].r.kind == NS_REC_START && t.recs[k].r.type == NS_EV_PROXY_STEP) ids[n++] = t.recs[k].r.id;
  CHECK_U64(n, NSTEPS + 1);
  int exact = 0;
  for (int i = 0; i < n; i++) {
    uint64_t peer_waits = 0, repeats = 0, send_waits = 0, repeats_after_stop = 0;
    int stopped = 0;
    for (size_t k = 0; k < t.nrecs; k++) {
      const ns_record* r = &t.recs[k].r;
      if (r->id != ids[i]) continue;
      if (r->kind == NS_REC_STOP) stopped = 1;
      if (r->kind != NS_REC_STATE) continue;
      if (r->state == NS_ST_PROXY_STEP_SEND_PEER_WAIT) peer_waits++;
      if (r->state == NS_ST_PROXY_STEP_SEND_WAIT) send_waits++;
      if (r->state == NS_ST_REPEATED) repeats += r->arg, repeats_after_stop += stopped;
    }
    int want_send_waits = i < NSTEPS ? 1 : 0;
    if (peer_waits == 1 && repeats == REPS - 1 && send_waits == (uint64_t)want_send_waits && stopped &&
        !repeats_after_stop)
      exact++;
    else
      fprintf(stderr, "step %d: %llu SendPeerWait, %llu repeats, %llu SendWait, stopped %d, %llu repeat records after the stop\n",
              i, (unsigned long long)peer_waits, (unsigned long long)repeats, (unsigned long long)send_waits, stopped,
              (unsigned long long)repeats_after_stop);
  }
  CHECK_U64(exact, NSTEPS + 1);
  /* 2: a's four repeats, in a REPEAT record of their own, before its SendWait */
  uint64_t a_id = 0;
  for (size_t k = 0; k < t.nrecs; k++)
    if (t.recs[k].r.kind == NS_REC_START && t.recs[k].r.type == NS_EV_PROXY_STEP &&
        t.recs[k].r.num[NS_PROXY_STEP_STEP] == 1000)
      a_id = t.recs[k].r.id;
  CHECK_TRUE(a_id != 0);
  uint64_t a_peer = 0, a_rep = 0, a_send = 0;
  int a_order_ok = 1;
  for (size_t k = 0; k < t.nrecs; k++) {
    const ns_record* r = &t.recs[k].r;
    if (r->id != a_id || r->kind != NS_REC_STATE) continue;
    if (r->state == NS_ST_PROXY_STEP_SEND_PEER_WAIT) a_peer++;
    if (r->state == NS_ST_REPEATED) a_rep += r->arg, a_order_ok &= a_send == 0;
    if (r->state == NS_ST_PROXY_STEP_SEND_WAIT) a_send++;
  }
  CHECK_U64(a_peer, 1);
  CHECK_U64(a_rep, 4);
  CHECK_U64(a_send, 1);
  CHECK_TRUE(a_order_ok);
  CHECK_TRUE(t.have_counters);
  if (t.have_counters) {
    CHECK_U64(t.counters.u[NS_P_STATE_REPEATS], (uint64_t)(NSTEPS + 1) * (REPS - 1) + 4);
    CHECK_U64(t.counters.u[NS_P_DROPPED], 0);
  }
  tl_free(&t);
  tp_remove_dir(dir);
  CHECK_DONE();
}
