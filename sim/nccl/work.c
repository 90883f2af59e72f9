/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: a work, from its post to its release.
 *
 * The application thread makes a work and posts it to its proxy; the parts
 * that run it (device.c, proxy_net.c, proxy_thread.c) report each part they
 * finish through simProxyWorkDone. A work is complete for its poster when
 * its kernel and its ProxyOps are done (its truth is written then); the
 * proxy lets it go once its KernelCh ops are done too. Two references: the
 * poster's and the proxy's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl/proxy.h"

simWork* simWorkNew(simComm* c, simGroupSpec* g, int mask, uint64_t opIndex, bool replay) {
  simWork* w = calloc(1, sizeof *w);
  w->c = c;
  w->g = *g;
  if (replay) w->g.tLaunch = w->g.tKernel = 0; /* a replayed graph launches no kernel of its own */
  w->g.tasks = malloc(sizeof(simTask) * (size_t)(g->nTasks ? g->nTasks : 1));
  memcpy(w->g.tasks, g->tasks, sizeof(simTask) * (size_t)g->nTasks);
  w->mask = mask;
  /* the communicator's plugin and context as of the post: the app thread may
   * finalize the communicator while the proxy still reports this work */
  w->plugin = c->plugin;
  w->ctx = c->ctx;
  w->opIndex = opIndex;
  w->replay = replay;
  w->foreignRank = -1;
  atomic_init(&w->refs, 2); /* the poster's and the proxy's */
  atomic_fetch_add_explicit(&c->unsettled, 1, memory_order_relaxed);
  pthread_mutex_init(&w->m, NULL);
  pthread_cond_init(&w->cv, NULL);
  /* PXN: publish this rank's context and task handles for the proxy of another process */
  if (g->pxn && c->rank < SIM_MAX_RANKS / 4) {
    simPxnPub* pub = &simShm->pxn[c->slot][c->rank];
    pub->ctx = (uint64_t)(uintptr_t)c->ctx;
    for (int i = 0; i < g->nTasks && i < SIM_PXN_TASKS; i++) pub->task[i] = (uint64_t)(uintptr_t)g->tasks[i].task.h;
    pub->mask = mask;
    pub->pid = (int)getpid();
    /* release: the fields above are visible to whoever acquires op */
    atomic_store_explicit(&pub->op, opIndex + 1, memory_order_release);
  }
  return w;
}

void simWorkSetDeviceOnly(simWork* w) { w->deviceOnly = true; }
void simWorkSetCost(simWork* w, const simCost* caller) { w->cost = *caller; }
void simWorkLink(simWork* w, simWork* next) { w->outNext = next; }
simWork* simWorkNextOut(simWork* w) { return w->outNext; }

void simWorkRelease(simWork* w) {
  /* acq_rel: the last owner sees every write the other made before its release */
  if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1) return;
  free(w->g.tasks);
  free(w->subs);
  free(w->kops);
  free(w->batchOf);
  pthread_mutex_destroy(&w->m);
  pthread_cond_destroy(&w->cv);
  free(w);
}

int simWorkWait(simWork* w) {
  pthread_mutex_lock(&w->m);
  while (!w->done) pthread_cond_wait(&w->cv, &w->m);
  pthread_mutex_unlock(&w->m);
  return w->aborted;
}

/* The truth of each kernel batch of a finished work: its tasks, bytes and GPU interval. */
static void batchTruth(const simWork* w) {
  const simComm* c = w->c;
  int nb = w->g.nTasks ? w->batchOf[w->g.nTasks - 1] + 1 : 0;
  for (int b = 0; b < nb; b++) {
    uint64_t s = UINT64_MAX, e = 0;
    size_t bytes = 0;
    int tasks = 0, nch = 0;
    char seqs[512];
    size_t sl = 0;
    seqs[0] = 0;
    for (int i = 0; i < w->g.nTasks; i++) {
      if (w->batchOf[i] != b) continue;
      tasks++;
      bytes += w->g.tasks[i].bytes;
      sl += (size_t)snprintf(seqs + sl, sl < sizeof seqs ? sizeof seqs - sl : 0, "%s%llu", sl ? "," : "",
                             (unsigned long long)w->g.tasks[i].seq);
    }
    for (int k = 0; k < w->nk; k++) {
      const kchOp* op = &w->kops[k];
      if (op->batch != b) continue;
      if (op->tGpuStart < s) s = op->tGpuStart;
      if (op->tGpuStop > e) e = op->tGpuStop;
      nch++;
    }
    if (!tasks || !nch) continue;
    const simTask* t0 = NULL;
    for (int i = 0; i < w->g.nTasks && !t0; i++)
      if (w->batchOf[i] == b) t0 = &w->g.tasks[i];
    simTruthf("\"kind\":\"batch\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%llu,\"batch\":%d,\"func\":\"%s\","
              "\"tasks\":%d,\"seqs\":[%s],\"bytes\":%zu,\"t_start\":%llu,\"t_end\":%llu,\"replay\":%s",
              (unsigned long long)c->commId, c->rank, (unsigned long long)w->opIndex, b, simFuncName(t0->func),
              tasks, seqs, bytes, (unsigned long long)s, (unsigned long long)e, w->replay ? "true" : "false");
  }
}

void simWorkSignalPoster(simWork* w, int aborted) {
  pthread_mutex_lock(&w->m);
  w->aborted = aborted;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->m);
}

/* The truth of a finished work: per task its true start (its batch's) and
 * end (its last channel or network step, as they actually ran). */
static void collTruth(simWork* w) {
  const simComm* c = w->c;
  batchTruth(w);
  for (int i = 0; i < w->g.nTasks; i++) {
    const simTask* t = &w->g.tasks[i];
    uint64_t tStart = 0, tEnd = w->tAll;
    for (int k = 0; k < w->nk; k++) {
      const kchOp* op = &w->kops[k];
      if (op->task != i) continue;
      if (!tStart || op->tGpuStart < tStart) tStart = op->tGpuStart;
      if (op->tGpuStop > tEnd) tEnd = op->tGpuStop;
    }
    for (int k = 0; k < w->nsub; k++)
      if (w->subs[k].task == i && !w->subs[k].foreign && w->subs[k].tLast > tEnd) tEnd = w->subs[k].tLast;
    simTruthf("\"kind\":\"coll\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"op\":%llu,"
              "\"peer\":%d,\"bytes\":%zu,\"t_launch\":%llu,\"t_start\":%llu,\"t_end\":%llu,\"aborted\":%s,"
              "\"replay\":%s,\"ce\":false,\"batch\":%d,\"emitted\":%s",
              (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq,
              (unsigned long long)w->opIndex, t->peer, t->bytes, (unsigned long long)w->g.tLaunch,
              (unsigned long long)(tStart ? tStart : w->tK), (unsigned long long)tEnd, w->aborted ? "true" : "false",
              w->replay ? "true" : "false", w->batchOf ? w->batchOf[i] : 0, t->task.serial ? "true" : "false");
  }
  if (w->aborted)
    simTruthf("\"kind\":\"hang_observed\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%llu,\"waited_ms\":%d",
              (unsigned long long)c->commId, c->rank, (unsigned long long)w->opIndex, simOpt.hangTimeoutMs);
}

void simProxyWorkDone(simProxy* px, simWork* w) {
  if (!w->completed && w->pendingChannels == 0 && w->pendingSubs == 0) {
    w->completed = true;
    /* copy transports' ProxyOps: NCCL 2.27+ never stops them; without that quirk they end with the work */
    for (int k = 0; k < w->nsub; k++)
      if (w->subs[k].copy && !simQuirk(Q_PROXYOP_UNSTOPPED)) simStop(w->subs[k].plugin, &w->subs[k].op);
    collTruth(w);
    simWorkSignalPoster(w, w->aborted);
  }
  if (w->completed && w->pendingKch == 0 && !w->released) {
    w->released = true;
    /* release: every event of the work is reported; the poster may finalize */
    atomic_fetch_sub_explicit(&w->c->unsettled, 1, memory_order_release);
    px->active--;
    if (w->activePrev) w->activePrev->activeNext = w->activeNext;
    else px->activeHead = w->activeNext;
    if (w->activeNext) w->activeNext->activePrev = w->activePrev;
    simWorkRelease(w);
  }
}
