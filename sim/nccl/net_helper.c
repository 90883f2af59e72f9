/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: NetPlugin calls, inline or on the socket plugin's helper thread.
 *
 * The IB plugin (and the socket plugin without helper threads, NCCL's
 * default) makes its profiler calls inside isend/irecv/test on the proxy
 * thread: simNetDo runs there. With helper threads (the ideal model, or
 * --socket-threads) the proxy hands requests over (simNetPost) and the helper
 * makes the calls; the proxy polls its `done` flag, it never blocks on it.
 */
#include <sched.h>
#include <string.h>

#include "nccl/proxy.h"

void simNetPost(simProxy* px, netReq* r) {
  atomic_store_explicit(&r->done, 0, memory_order_relaxed);
  pthread_mutex_lock(&px->nm);
  SIM_FIFO_PUSH(px->nhead, px->ntail, r);
  pthread_cond_signal(&px->ncv);
  pthread_mutex_unlock(&px->nm);
}

void simNetWait(netReq* r) {
  /* acquire pairs with the release store in helperMain: the net event is complete */
  while (!atomic_load_explicit(&r->done, memory_order_acquire)) sched_yield();
}

/* One NetPlugin call sequence: start (kind 0) or [update +] stop (kind 1). */
void simNetDo(netReq* r) {
  if (r->kind == 0) {
    ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileNetPlugin, r->parent.h, r->rank);
    d.netPlugin.id = r->id;
    d.netPlugin.data = &r->data;
    simStart(r->p, r->ctx, &r->net, &r->parent, &d, r->pxn, r->originPid, r->key);
  } else {
    if (r->update) {
      ncclProfilerEventStateArgs_v6_t a;
      memset(&a, 0, sizeof a);
      a.netPlugin.data = &r->data;
      simRecord(r->p, &r->net, ncclProfilerNetPluginUpdate, &a);
    }
    simStop(r->p, &r->net);
  }
}

static void* helperMain(void* arg) {
  simProxy* px = arg;
  simTruthThreadBegin("net");
  for (;;) {
    pthread_mutex_lock(&px->nm);
    while (!px->nhead && !px->nstop) pthread_cond_wait(&px->ncv, &px->nm);
    netReq* r = px->nhead;
    if (!r) {
      pthread_mutex_unlock(&px->nm);
      break;
    }
    px->nhead = r->next;
    if (!px->nhead) px->ntail = NULL;
    pthread_mutex_unlock(&px->nm);
    simNetDo(r);
    atomic_store_explicit(&r->done, 1, memory_order_release);
  }
  simTruthThreadEnd();
  return NULL;
}

void simNetHelperStart(simProxy* px) {
  pthread_mutex_init(&px->nm, NULL);
  pthread_cond_init(&px->ncv, NULL);
  simThreadCreate(&px->nth, helperMain, px);
}

void simNetHelperStop(simProxy* px) {
  pthread_mutex_lock(&px->nm);
  px->nstop = true;
  pthread_cond_signal(&px->ncv);
  pthread_mutex_unlock(&px->nm);
  simThreadJoin(px->nth);
  pthread_mutex_destroy(&px->nm);
  pthread_cond_destroy(&px->ncv);
}
