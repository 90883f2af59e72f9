/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the NetPlugin events of a ProxyOp's network steps, one
 * request slot per step slot (step % 8). The IB plugin (even channels)
 * starts its QP event inside isend/irecv and stops it just before test()
 * sees the completion, inline on the proxy thread; with the double-stop
 * quirk it stops it again when the request completes, and now and then a
 * slot it never started. The socket plugin (odd channels) makes its calls
 * in test() on the proxy thread, or, with helper threads, on the helper
 * (net_helper.c), which the proxy polls and never blocks on. A slot's
 * request is done before the slot is used again and before its op ends.
 */
#include <string.h>

#include "nccl/proxy.h"

static bool netInline(const subState* s) { return s->ib || (simQuirk(Q_SOCKET_PROXY_THREAD) && !simOpt.socketThreads); }

/* NetPlugin start for step st: inline for IB (inside isend/irecv) and for
 * sockets without helper threads (in test()), else handed to the helper. */
void simNetPluginStart(simProxy* px, const simComm* c, int mask, subState* s, int st, size_t b) {
  int slot = st % SIM_STEPS;
  netReq* r = &s->nets[slot];
  /* the previous request of this slot may still sit in the helper's queue
   * (its stop races the step's): it must be done before the slot is reused */
  if (s->netState[slot] == NET_STOPPED && !netInline(s)) simNetWait(r);
  memset(r, 0, sizeof *r);
  s->netState[slot] = NET_NONE;
  if (!s->plugin || !(mask & ncclProfileNetPlugin) || s->silent || simNcclCur.nativeAbi < 3) return;
  /* the helper thread reads only the request: the parent goes in by value */
  r->kind = 0, r->p = s->plugin, r->ctx = s->ctx, r->parent = s->steps[slot], r->rank = s->rank;
  r->pxn = s->foreign, r->originPid = s->pid;
  r->update = !simQuirk(Q_NET_NO_UPDATE);
  if (s->ib) {
    r->id = (int64_t)(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER);
    r->data.ib.type = ncclProfileQp;
    r->data.ib.qp.device = c->node % 4;
    r->data.ib.qp.wr_id = ((uint64_t)s->ch << 16) | (uint64_t)st;
    r->data.ib.qp.qpNum = 1000 + s->ch;
    /* receive descriptors leave opcode and length as the previous user of the request left them */
    bool unset = !s->isSend && simQuirk(Q_NET_DOUBLE_STOP);
    r->data.ib.qp.opcode = s->isSend ? 2 /* RDMA_WRITE_WITH_IMM-like */ : unset ? 0 : 128;
    r->data.ib.qp.length = unset ? 0 : b;
  } else {
    r->id = (int64_t)(NCCL_PROFILER_NET_TYPE_SOCK | NCCL_PROFILER_NET_SOCKET_VER);
    r->data.sock.type = ncclProfileSocket;
    r->data.sock.sock.fd = 100 + s->ch;
    r->data.sock.sock.op = s->isSend ? 0 : 1;
    r->data.sock.sock.length = b;
    if (simOpt.socketThreads && simQuirk(Q_SOCKET_PROXY_THREAD)) {
      /* a helper thread keeps the parent of the request slot that created it:
       * the step that last used that slot, long stopped */
      const simEvent* stale = &px->poolStaleStep[slot];
      if (stale->serial) r->parent = *stale;
    }
  }
  snprintf(r->key, sizeof r->key, "\"channel\":%d,\"step\":%d,\"send\":%d,\"net\":\"%s\"", s->ch, st, s->isSend,
           s->ib ? "ib" : "socket");
  s->netState[slot] = NET_STARTED;
  if (netInline(s))
    simNetDo(r);
  else
    simNetPost(px, r);
}

/* When to end the NetPlugin event of a step completing at `done`: inline just
 * before the completion is polled; the socket helper thread some time ahead,
 * so that its wake-up rarely delays the step's stop. */
uint64_t simNetPluginStopAt(const subState* s, uint64_t now, uint64_t done) {
  uint64_t lead = netInline(s) ? 1000 : 10000;
  return done > now + lead ? done - lead : now;
}

void simNetPluginStop(simProxy* px, subState* s, int st) {
  int slot = st % SIM_STEPS;
  netReq* r = &s->nets[slot];
  if (s->netState[slot] != NET_STARTED) return;
  s->netState[slot] = NET_STOPPED;
  if (netInline(s)) {
    r->kind = 1;
    simNetDo(r);
    return;
  }
  simNetWait(r); /* its start is done */
  r->kind = 1;
  simNetPost(px, r);
}

/* The IB plugin stops a QP event again when the request completes (in
 * test()), and now and then a slot it never started: a NULL handle. */
void simNetPluginStopAgain(subState* s, int st) {
  int slot = st % SIM_STEPS;
  netReq* r = &s->nets[slot];
  if (!simQuirk(Q_NET_DOUBLE_STOP) || !s->ib || s->netState[slot] != NET_STOPPED) return;
  simStop(r->p, &r->net);
  if (st % 4 == 3) simStopNull(r->p, simTypeIndex(ncclProfileNetPlugin));
}

/* Like NCCL's test(): has the NetPlugin event of step st ended? Never blocks:
 * a socket helper that has not run yet makes the caller poll again later
 * (as the proxy's progress loop does), so other steps keep their times. With
 * helper threads in a real release the proxy does not wait for it at all. */
bool simNetPluginDone(simProxy* px, subState* s, int st) {
  int slot = st % SIM_STEPS;
  if (s->netState[slot] == NET_STARTED) simNetPluginStop(px, s, st);
  if (s->netState[slot] != NET_STOPPED || netInline(s)) return true;
  if (simOpt.socketThreads && simQuirk(Q_SOCKET_PROXY_THREAD)) return true; /* its stop races the step's */
  /* acquire pairs with the release store in the helper: the net event is complete */
  return atomic_load_explicit(&s->nets[slot].done, memory_order_acquire) != 0;
}

/* The NetPlugin event of step st has stopped before the op ends. */
void simNetPluginFinish(simProxy* px, subState* s, int st) {
  int slot = st % SIM_STEPS;
  if (s->netState[slot] == NET_STARTED) simNetPluginStop(px, s, st);
  if (s->netState[slot] == NET_STOPPED && !netInline(s)) simNetWait(&s->nets[slot]);
}

void simNetQuiesce(simWork* w) {
  for (int k = 0; k < w->nsub; k++)
    for (int q = 0; q < SIM_STEPS; q++)
      if (w->subs[k].netState[q] != NET_NONE && !netInline(&w->subs[k])) simNetWait(&w->subs[k].nets[q]);
}
