/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the proxy progress thread.
 *
 * One per rank and shared-resource set (split communicators share it; it
 * lives until the last of them is finalized, and its ProxyCtrl events keep
 * the context of the communicator that created it, finalized or not).
 * Application threads post works into its inbox; the thread appends them
 * (ProxyCtrl Append ... AppendEnd around the batch, ProxyOp starts), hands
 * their kernels to the GPU model and runs every work's timed actions from
 * one heap (action_heap.c). It sleeps (ProxyCtrl Sleep/Wakeup) only with
 * nothing to do. A work is complete for its poster when its kernel and its
 * ProxyOps are done; the proxy lets it go once its KernelCh ops are done too.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "proxy.h"

/* ---- works ---- */

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



void simProxyPost(simProxy* px, simWork* w) {
  pthread_mutex_lock(&px->m);
  SIM_FIFO_PUSH(px->head, px->tail, w);
  pthread_cond_signal(&px->cv);
  pthread_mutex_unlock(&px->m);
}

static void signalPoster(simWork* w, int aborted) {
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
  simDeviceWriteTruth(w);
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
    signalPoster(w, w->aborted);
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

/* ---- the barrier: every rank's kernel must reach an op before data moves ---- */

static void arrive(simWork* w) {
  simComm* c = w->c;
  /* release: pairs with the acquire loads of the other ranks' checks */
  atomic_store_explicit(&simShm->arrivedOp[c->slot][c->rank % (SIM_MAX_RANKS / 4)], w->opIndex + 1,
                        memory_order_release);
}

/* 0: every rank arrived; 1: given up (a rank hangs); 2: not yet */
static int barrierState(simWork* w, uint64_t since) {
  simComm* c = w->c;
  int aborted = atomic_load_explicit(&simShm->abortedOp[c->slot], memory_order_acquire);
  if (aborted && (uint64_t)aborted <= w->opIndex + 1) return 1;
  bool all = true;
  for (int r = 0; r < c->nranks && all; r++)
    all = atomic_load_explicit(&simShm->arrivedOp[c->slot][r % (SIM_MAX_RANKS / 4)], memory_order_acquire) >=
          w->opIndex + 1;
  if (all) return 0;
  if (simNowNs() - since > (uint64_t)simOpt.hangTimeoutMs * 1000000ull) {
    atomic_store_explicit(&simShm->abortedOp[c->slot], (int)w->opIndex + 1, memory_order_release);
    return 1;
  }
  return 2;
}

/* The end: every rank's data is done (its channels would end at endAt), so
 * all end at the latest of those. A rank given up as hung, or one that never
 * comes within the hang timeout: this rank ends on its own. Another rank
 * cannot publish a later op's end while this one waits: it would need this
 * rank's kernel past this op's start barrier first. */
void simProxyEndBarrier(simProxy* px, simWork* w) {
  simComm* c = w->c;
  uint64_t own = 0;
  for (int k = 0; k < w->nk; k++)
    if (w->kops[k].endWant > own) own = w->kops[k].endWant;
  if (!w->endSince) {
    w->endSince = simNowNs();
    int me = c->rank % (SIM_MAX_RANKS / 4);
    atomic_store_explicit(&simShm->endAt[c->slot][me], own, memory_order_relaxed);
    /* release: endAt is visible to the rank that acquires endOp */
    atomic_store_explicit(&simShm->endOp[c->slot][me], w->opIndex + 1, memory_order_release);
  }
  uint64_t t = own;
  int aborted = atomic_load_explicit(&simShm->abortedOp[c->slot], memory_order_acquire);
  bool give_up = (aborted && (uint64_t)aborted <= w->opIndex + 1) ||
                 simNowNs() - w->endSince > (uint64_t)simOpt.hangTimeoutMs * 1000000ull;
  for (int r = 0; r < c->nranks && !give_up; r++) {
    int slot = r % (SIM_MAX_RANKS / 4);
    if (atomic_load_explicit(&simShm->endOp[c->slot][slot], memory_order_acquire) < w->opIndex + 1) {
      if (simOpt.fast) sched_yield();
      simHeapPush(&px->H, simNowNs() + 20000, A_END_BARRIER, w, 0, 0);
      return;
    }
    uint64_t e = atomic_load_explicit(&simShm->endAt[c->slot][slot], memory_order_relaxed);
    if (e > t) t = e;
  }
  /* the last data reaches the ranks a few hops apart: up to 2 us, per rank */
  simDeviceEndAll(px, w, t + (uint64_t)(simRngUniform(&c->rng) * 2000.0));
}

static bool hasNetwork(const simWork* w) {
  for (int k = 0; k < w->nsub; k++)
    if (!w->subs[k].copy) return true;
  return false;
}

static void barrierAction(simProxy* px, simWork* w, uint64_t t) {
  if (!w->arrived) {
    w->arrived = true;
    w->barrierSince = simNowNs();
    if (w->c->nranks > 1) arrive(w);
  }
  int st = w->c->nranks > 1 && (hasNetwork(w) || w->nk) ? barrierState(w, w->barrierSince) : 0;
  if (st == 2) {
    if (simOpt.fast) sched_yield();
    simHeapPush(&px->H, simNowNs() + 20000, A_BARRIER, w, 0, 0);
    return;
  }
  w->tAll = simOpt.fast ? t : simNowNs();
  if (st == 1) {
    w->aborted = 1;
    simNetAbort(px, w);
    simDeviceAbort(px, w);
    return;
  }
  simNetBegin(px, w);
}

/* ---- ProxyCtrl ---- */

static void ctrlEvent(simProxy* px, int s1, int appended, int s2, bool waitForWork) {
  const simPlugin* p = px->ctrlPlugin;
  simEvent ev = {0};
  /* NCCL reads the mask for every ProxyCtrl event (relaxed: no ordering needed,
   * a plugin's change may show up one event late) */
  if (p && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) {
    simCostCtrlEvent();
    ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileProxyCtrl, NULL, 0);
    simStart(p, px->ctrlCtx, &ev, NULL, &d, false, getpid(), NULL);
  }
  ncclProfilerEventStateArgs_v6_t a;
  memset(&a, 0, sizeof a);
  if (ev.h && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) simRecord(p, &ev, s1, &a);
  if (waitForWork)
    while (!px->head && !px->stop) pthread_cond_wait(&px->cv, &px->m);
  if (s2 >= 0) {
    a.proxyCtrl.appendedProxyOps = appended;
    if (ev.h && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) simRecord(p, &ev, s2, &a);
  }
  simStop(p, &ev);
}

/* ---- the loop ---- */

static void appendWorks(simProxy* px, simWork* list) {
  int added = 0;
  for (simWork* w = list; w; w = w->next) added++;
  ctrlEvent(px, ncclProfilerProxyCtrlAppend, added, ncclProfilerProxyCtrlAppendEnd, false);
  if (px->lastIdle != 0) ctrlEvent(px, ncclProfilerProxyCtrlActive, 0, -1, false), px->lastIdle = 0;
  while (list) {
    simWork* w = list;
    list = w->next;
    px->active++;
    w->activePrev = NULL;
    w->activeNext = px->activeHead;
    if (px->activeHead) px->activeHead->activePrev = w;
    px->activeHead = w;
    simNetPlan(px, w);
    simDevicePlan(px, w);
    simNetAppend(px, w);
    simCostProxy(w);
    if (w->nk)
      simDeviceEnqueue(px, w);
    else if (hasNetwork(w))
      simHeapPush(&px->H, simNowNs(), A_BARRIER, w, 0, 0);
    else
      simProxyWorkDone(px, w); /* nothing runs on the channels (CE, symmetric) */
  }
}

static void runAction(simProxy* px, const simAction* x) {
  switch (x->kind) {
  case A_KERNEL_START:
  case A_CH_END:
  case A_KCH_POLL:
    simDeviceAction(px, x);
    break;
  case A_BARRIER:
    barrierAction(px, x->w, x->t);
    break;
  case A_END_BARRIER:
    simProxyEndBarrier(px, x->w);
    break;
  default:
    simNetAction(px, x);
    break;
  }
}

/* Wait (holding px->m) until the next action is due or a work arrives. */
static void waitUntil(simProxy* px, uint64_t t) {
  for (;;) {
    if (px->head || px->stop) return;
    uint64_t now = simNowNs();
    if (now >= t) return;
    uint64_t d = t - now;
    if (d <= 60000) {
      /* spin the last stretch (a timed wait wakes tens of us late) */
      pthread_mutex_unlock(&px->m);
      while (simNowNs() < t) {
      }
      pthread_mutex_lock(&px->m);
      return;
    }
    struct timespec ts;
    simMachineClock(CLOCK_MONOTONIC, &ts);
    uint64_t wake = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + d - 50000;
    ts.tv_sec = (time_t)(wake / 1000000000ull), ts.tv_nsec = (long)(wake % 1000000000ull);
    pthread_cond_timedwait(&px->cv, &px->m, &ts);
  }
}

static void* proxyMain(void* arg) {
  simProxy* px = arg;
  simTruthThreadBegin("proxy");
  /* timed waits sleep with 1 ns timer slack (default 50 us), spinning only their last stretch */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  pthread_mutex_lock(&px->m);
  for (;;) {
    if (px->abandon) break;
    if (px->head) {
      simWork* list = px->head;
      px->head = px->tail = NULL;
      pthread_mutex_unlock(&px->m);
      appendWorks(px, list);
      pthread_mutex_lock(&px->m);
      continue;
    }
    if (px->H.n == 0) {
      if (px->stop) break; /* what is left waits for ring writes that never come */
      if (px->active == 0 && px->lastIdle != 1) {
        pthread_mutex_unlock(&px->m);
        ctrlEvent(px, ncclProfilerProxyCtrlIdle, 0, -1, false);
        pthread_mutex_lock(&px->m);
        px->lastIdle = 1;
      }
      if (!px->head && !px->stop) ctrlEvent(px, ncclProfilerProxyCtrlSleep, 0, ncclProfilerProxyCtrlWakeup, true);
      continue;
    }
    if (!simOpt.fast) {
      waitUntil(px, px->H.v[0].t);
      if (px->head) continue;
      if (simNowNs() < px->H.v[0].t && !px->stop) continue;
    }
    pthread_mutex_unlock(&px->m);
    /* every action due now (in --fast mode: the next one) */
    uint64_t now = simNowNs();
    do {
      simAction x = simHeapPop(&px->H);
      runAction(px, &x);
    } while (px->H.n && !simOpt.fast && px->H.v[0].t <= now);
    if (simOpt.fast && px->H.n) {
      simAction x = simHeapPop(&px->H);
      runAction(px, &x);
    }
    pthread_mutex_lock(&px->m);
  }
  pthread_mutex_unlock(&px->m);
  /* What is still held: ops waiting for ring writes that never come, or (abort)
   * everything in flight. Their events are never stopped, as in NCCL. */
  while (px->activeHead) {
    simWork* w = px->activeHead;
    if (getenv("SIM_DEBUG_ABANDON"))
      for (int k = 0; k < w->nk; k++)
        fprintf(stderr, "abandon op %llu k %d ch %d state %d hasOp %d base %llu dev %lld start %llu end %llu pendingKch %d completed %d\n",
                (unsigned long long)w->opIndex, k, w->kops[k].ch, w->kops[k].state, w->kops[k].hasOp,
                (unsigned long long)w->kops[k].base, (long long)w->kops[k].devIndex,
                (unsigned long long)w->kops[k].tGpuStart, (unsigned long long)w->kops[k].tGpuStop, w->pendingKch, w->completed);
    px->activeHead = w->activeNext;
    simDeviceAbandon(px, w);
    simNetQuiesce(w); /* the helper thread no longer holds its requests */
    w->released = true;
    if (!w->completed) signalPoster(w, 1);
    atomic_fetch_sub_explicit(&w->c->unsettled, 1, memory_order_release);
    simWorkRelease(w);
  }
  simNetWriteStats(px);
  simTruthThreadEnd();
  return NULL;
}

/* Every live proxy, so that one a process exits without destroying (--exit
 * exit) stays reachable: the process is meant to end with it alive. */
static pthread_mutex_t proxiesLock = PTHREAD_MUTEX_INITIALIZER;
static simProxy* proxies;

static void addDevice(simProxy* px, struct simDevice* dev) {
  pthread_mutex_lock(&px->m);
  if (px->ndevs == px->capdevs) {
    px->capdevs = px->capdevs ? px->capdevs * 2 : 4;
    px->devs = realloc(px->devs, (size_t)px->capdevs * sizeof *px->devs);
  }
  px->devs[px->ndevs++] = dev;
  pthread_mutex_unlock(&px->m);
}

simProxy* simProxyCreate(simComm* owner) {
  simProxy* px = calloc(1, sizeof *px);
  px->owner = owner;
  px->ctrlPlugin = owner->plugin;
  px->ctrlCtx = owner->ctx;
  atomic_init(&px->users, 1);
  px->lastIdle = -1;
  px->xstats = calloc(SIM_XFER_STATS, sizeof *px->xstats);
  pthread_mutex_init(&px->m, NULL);
  pthread_cond_init(&px->cv, NULL);
  addDevice(px, owner->dev);
  pthread_mutex_lock(&proxiesLock);
  px->nextProxy = proxies;
  proxies = px;
  pthread_mutex_unlock(&proxiesLock);
  simNetHelperStart(px);
  simThreadCreate(&px->th, proxyMain, px);
  return px;
}

void simProxyShare(simProxy* px, struct simDevice* dev) {
  atomic_fetch_add_explicit(&px->users, 1, memory_order_relaxed);
  addDevice(px, dev);
}

/* The last user destroys it, with every device model given to it (a user
 * that leaves first leaves its device: the proxy may still use it): the
 * thread finishes what can finish, drops what waits for ring writes that
 * never come (no stop: NCCL frees such ops), and is joined. With abandon
 * (ncclCommAbort) it stops at once: every ProxyOp, ProxyStep and KernelCh in
 * flight is left without a stop (an abort of one of several users is an
 * ordinary destroy: the others still use the proxy). */
void simProxyRelease(simProxy* px, bool abandon) {
  if (atomic_fetch_sub_explicit(&px->users, 1, memory_order_acq_rel) != 1) return;
  pthread_mutex_lock(&px->m);
  px->stop = true;
  px->abandon = abandon;
  pthread_cond_signal(&px->cv);
  pthread_mutex_unlock(&px->m);
  simThreadJoin(px->th);
  simNetHelperStop(px);
  pthread_mutex_lock(&proxiesLock);
  for (simProxy** pp = &proxies; *pp; pp = &(*pp)->nextProxy)
    if (*pp == px) {
      *pp = px->nextProxy;
      break;
    }
  pthread_mutex_unlock(&proxiesLock);
  for (int i = 0; i < px->ndevs; i++) {
    simDeviceFree(px->devs[i]);
    free(px->devs[i]);
  }
  free(px->devs);
  free(px->H.v);
  free(px->xstats);
  pthread_mutex_destroy(&px->m);
  pthread_cond_destroy(&px->cv);
  free(px);
}
