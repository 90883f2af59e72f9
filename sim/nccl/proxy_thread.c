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

#include "nccl/proxy.h"

void simProxyPost(simProxy* px, simWork* w) {
  pthread_mutex_lock(&px->m);
  SIM_FIFO_PUSH(px->head, px->tail, w);
  pthread_cond_signal(&px->cv);
  pthread_mutex_unlock(&px->m);
}

/* ---- the barrier: every rank's kernel must reach an op before data moves ---- */

static void arriveAtBarrier(simWork* w) {
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

static bool hasNetwork(const simWork* w) {
  for (int k = 0; k < w->nsub; k++)
    if (!w->subs[k].copy) return true;
  return false;
}

static void barrierAction(simProxy* px, simWork* w, uint64_t t) {
  if (!w->arrived) {
    w->arrived = true;
    w->barrierSince = simNowNs();
    if (w->c->nranks > 1) arriveAtBarrier(w);
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
    simDeviceEndBarrier(px, x->w);
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
    if (!w->completed) simWorkSignalPoster(w, 1);
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
