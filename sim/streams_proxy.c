/* ncclscope-sim: the proxy progress thread and its network thread.
 *
 * One proxy thread per rank and shared-resource set (split communicators of
 * that rank share it); it issues ProxyCtrl (13-18), ProxyOp (19), ProxyStep
 * (8/20/9 send, 10/11/12 recv) and KernelCh (start + KernelChStop + stop).
 * A companion network thread per proxy issues NetPlugin events whose parent
 * is the ProxyStep handle, with NetPluginUpdate before the stop.
 *
 * Step handles live in 8 slots (step % 8); a slot is reused only after its
 * step stopped, as in NCCL. Each work item is turned into a list of timed
 * actions computed from the model and executed in time order (real mode
 * sleeps until each action's time; --fast executes them back to back).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_shared.h"

typedef struct netReq {
  int kind; /* 0 start, 1 update+stop */
  const simPlugin* p;
  void* ctx;
  simEvent* step;
  simEvent net;
  int rank;
  int64_t id;
  union {
    ncclProfilerNetIbDescr_v1_t ib;
    ncclProfilerNetSockDescr_v1_t sock;
  } data;
  char key[96];
  bool pxn;
  pid_t originPid;
  _Atomic int done;
  struct netReq* next;
} netReq;

typedef struct simProxy {
  simComm* owner;
  pthread_t th, nth;
  pthread_mutex_t m;
  pthread_cond_t cv;
  simWork *head, *tail;
  bool stop;
  pthread_mutex_t nm;
  pthread_cond_t ncv;
  netReq *nhead, *ntail;
  bool nstop;
  int lastIdle;
} simProxy;

struct simWork {
  simComm* c;
  simGroupSpec g;
  int mask;
  uint64_t opIndex;
  bool replay;
  pthread_mutex_t m;
  pthread_cond_t cv;
  int done, aborted;
  simWork* next;
};

simWork* simWorkNew(simComm* c, simGroupSpec* g, int mask, uint64_t opIndex, bool replay) {
  simWork* w = calloc(1, sizeof *w);
  w->c = c;
  w->g = *g;
  w->g.tasks = malloc(sizeof(simTask) * (size_t)(g->nTasks ? g->nTasks : 1));
  memcpy(w->g.tasks, g->tasks, sizeof(simTask) * (size_t)g->nTasks);
  w->mask = mask;
  w->opIndex = opIndex;
  w->replay = replay;
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

void simWorkFree(simWork* w) {
  free(w->g.tasks);
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

void simProxyPost(simProxy* p, simWork* w) {
  pthread_mutex_lock(&p->m);
  w->next = NULL;
  if (p->tail)
    p->tail->next = w;
  else
    p->head = w;
  p->tail = w;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->m);
}

int simBarrier(simComm* c, uint64_t opIndex) {
  _Atomic uint64_t* a = &simShm->arrived[c->slot];
  atomic_fetch_add_explicit(a, 1, memory_order_acq_rel);
  uint64_t need = c->barrierBase + (opIndex + 1) * (uint64_t)c->nranks;
  uint64_t deadline = simNowNs() + (uint64_t)simOpt.hangTimeoutMs * 1000000ull;
  while (atomic_load_explicit(a, memory_order_acquire) < need) {
    if (atomic_load_explicit(&simShm->abortedOp[c->slot], memory_order_acquire) != 0) return 1;
    if (simNowNs() > deadline) {
      atomic_store_explicit(&simShm->abortedOp[c->slot], (int)opIndex + 1, memory_order_release);
      return 1;
    }
    usleep(simOpt.fast ? 0 : 20);
  }
  return 0;
}

/* ---------------- network thread ---------------- */

static void netPost(simProxy* px, netReq* r) {
  atomic_store_explicit(&r->done, 0, memory_order_relaxed);
  pthread_mutex_lock(&px->nm);
  r->next = NULL;
  if (px->ntail)
    px->ntail->next = r;
  else
    px->nhead = r;
  px->ntail = r;
  pthread_cond_signal(&px->ncv);
  pthread_mutex_unlock(&px->nm);
}

static void netWait(netReq* r) {
  /* acquire pairs with the release store in netMain: the net event is complete */
  while (!atomic_load_explicit(&r->done, memory_order_acquire)) sched_yield();
}

static void* netMain(void* arg) {
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
    if (r->kind == 0) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.type = ncclProfileNetPlugin;
      d.parentObj = r->step->h;
      d.rank = r->rank;
      d.netPlugin.id = r->id;
      d.netPlugin.data = &r->data;
      simStart(r->p, r->ctx, &r->net, r->step, &d, r->pxn, r->originPid, r->key);
    } else {
      ncclProfilerEventStateArgs_v6_t a;
      memset(&a, 0, sizeof a);
      a.netPlugin.data = &r->data;
      simRecord(r->p, &r->net, ncclProfilerNetPluginUpdate, &a);
      simStop(r->p, &r->net);
    }
    atomic_store_explicit(&r->done, 1, memory_order_release);
  }
  simTruthThreadEnd();
  return NULL;
}

/* ---------------- one work item ---------------- */

enum { A_STEP_START, A_STATE, A_NET_START, A_STEP_STOP, A_OP_STOP, A_KCH_STOP };
typedef struct {
  uint64_t t;
  int kind, sub, step, arg;
  int order;
} action;

typedef struct {
  simEvent op;
  simEvent steps[SIM_STEPS];
  netReq nets[SIM_STEPS];
  int ch, peer, isSend, rank, nSteps, chunk, task;
  size_t bytes;
  void* ctx;
  bool foreign;
  pid_t pid;
  uint64_t tLast;
} subState;

typedef struct {
  simEvent ev;
  int ch, task;
  uint64_t tGpuStart, tGpuStop, cbStart, cbStop, pStart, pStop;
} kchState;

static int cmpAction(const void* a, const void* b) {
  const action *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->order - y->order;
}

static size_t netFactor(int f, int nranks) {
  /* ring traffic per rank relative to the buffer size */
  switch (f) {
  case SIM_FUNC_ALLREDUCE:
    return 2;
  case SIM_FUNC_ALLGATHER:
  case SIM_FUNC_REDUCESCATTER:
    return 1;
  default:
    (void)nranks;
    return 1;
  }
}

/* Any proxy thread may ask first: the winner of the CAS publishes its mapping
 * (relaxed is enough: the page is never accessed, only its address is used). */
static void* unmappedPage(void) {
  static void* page;
  void* p = __atomic_load_n(&page, __ATOMIC_RELAXED);
  if (!p) {
    void* m = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void* expected = NULL;
    if (__atomic_compare_exchange_n(&page, &expected, m, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      p = m;
    } else {
      munmap(m, 1 << 20);
      p = expected;
    }
  }
  return p;
}

static void runWork(simProxy* px, simWork* w) {
  simComm* c = w->c;
  const simPlugin* p = c->plugin;
  simGroupSpec* g = &w->g;
  int n = c->nranks;
  int rpn = (n + c->nNodes - 1) / c->nNodes;
  bool multiNode = c->nNodes > 1 && n > rpn;
  int mask = w->mask;
  int nsub = 0, nk = 0;
  subState* subs = calloc((size_t)g->nTasks * SIM_MAX_CHANNELS * 3 + 1, sizeof *subs);
  kchState* kch = calloc((size_t)g->nTasks * SIM_MAX_CHANNELS + 1, sizeof *kch);
  char key[192];
  uint64_t T0 = simNowNs();

  /* PXN partner (another process's rank): its sends run here */
  bool pxn = g->pxn && multiNode;
  int foreignRank = -1;
  simPxnPub pub;
  memset(&pub, 0, sizeof pub);
  if (pxn && simOpt.procs > 1) {
    foreignRank = (c->rank - simOpt.ranksPerProc + n) % n;
  }

  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    for (int j = 0; j < t->nChannels; j++) {
      int ch = (t->chanBase + j) % SIM_MAX_CHANNELS;
      if (p && (mask & ncclProfileKernelCh)) {
        kch[nk].ch = ch;
        kch[nk].task = i;
        nk++;
      }
      if (!multiNode) continue;
      int sendPeer = -1, recvPeer = -1;
      if (t->func == SIM_FUNC_SEND)
        sendPeer = t->peer / rpn != c->node ? t->peer : -1;
      else if (t->func == SIM_FUNC_RECV)
        recvPeer = t->peer / rpn != c->node ? t->peer : -1;
      else {
        sendPeer = (c->rank + rpn) % n;
        recvPeer = (c->rank - rpn + n) % n;
      }
      size_t perCh = t->bytes * netFactor(t->func, n) / (size_t)t->nChannels;
      int chunk = t->bytes < 16384 ? 16384 : 131072;
      int nSteps = (int)((perCh + (size_t)chunk - 1) / (size_t)chunk);
      if (nSteps < 1) nSteps = 1;
      if (nSteps > 64) nSteps = 64;
      for (int dir = 0; dir < 2; dir++) {
        int peer = dir == 0 ? sendPeer : recvPeer;
        if (peer < 0) continue;
        if (dir == 0 && pxn) continue; /* the partner process's proxy sends for us */
        subState* s = &subs[nsub++];
        s->ch = ch, s->peer = peer, s->isSend = dir == 0, s->rank = c->rank, s->nSteps = nSteps, s->chunk = chunk;
        s->task = i, s->bytes = perCh, s->ctx = c->ctx, s->pid = getpid();
      }
      if (pxn && sendPeer >= 0) {
        /* foreign send ProxyOp on behalf of another rank */
        subState* s = &subs[nsub++];
        s->ch = ch, s->isSend = 1, s->nSteps = nSteps, s->chunk = chunk, s->task = i, s->bytes = perCh;
        s->foreign = true;
        s->rank = foreignRank >= 0 ? foreignRank : c->rank;
        s->peer = (s->rank + rpn) % n;
        s->pid = getppid();
        s->ctx = (char*)unmappedPage() + 64;
      }
    }
  }

  if (pxn && foreignRank >= 0) {
    /* real PXN: wait (bounded) for the originating process's publication; its
     * context and task handles are addresses valid only in that process */
    simPxnPub* src = &simShm->pxn[c->slot][foreignRank % (SIM_MAX_RANKS / 4)];
    uint64_t deadline = simNowNs() + (uint64_t)simOpt.hangTimeoutMs * 1000000ull;
    while (atomic_load_explicit(&src->op, memory_order_acquire) < w->opIndex + 1 && simNowNs() < deadline)
      sched_yield();
    pub = *src; /* acquire above orders these reads after the publisher's writes */
    for (int k = 0; k < nsub; k++)
      if (subs[k].foreign) {
        subs[k].ctx = (void*)(uintptr_t)pub.ctx;
        subs[k].pid = (pid_t)pub.pid;
      }
  }

  /* ProxyOp starts (progress thread picks the op up) */
  for (int k = 0; k < nsub; k++) {
    subState* s = &subs[k];
    int smask = mask;
    if (!p) continue;
    if (s->foreign && foreignRank >= 0) smask = pub.mask;
    if (smask & (ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin)) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.type = ncclProfileProxyOp;
      d.rank = s->rank;
      const simEvent* par = &g->tasks[s->task].task;
      d.parentObj = par->h;
      if (s->foreign)
        d.parentObj = foreignRank >= 0 ? (void*)(uintptr_t)pub.task[s->task % SIM_PXN_TASKS]
                                       : (char*)unmappedPage() + 4096 + 64 * s->task;
      d.proxyOp.pid = s->pid;
      d.proxyOp.channelId = (uint8_t)s->ch;
      d.proxyOp.peer = s->peer;
      d.proxyOp.nSteps = s->nSteps;
      d.proxyOp.chunkSize = s->chunk;
      d.proxyOp.isSend = s->isSend;
      snprintf(key, sizeof key, "\"channel\":%d,\"peer\":%d,\"send\":%d,\"nsteps\":%d,\"op\":%llu", s->ch, s->peer,
               s->isSend, s->nSteps, (unsigned long long)w->opIndex);
      simStart(p, s->ctx, &s->op, s->foreign ? NULL : (par->serial ? par : NULL), &d, s->foreign, s->pid, key);
      simRecord(p, &s->op, ncclProfilerProxyOpInProgress_v4, &(ncclProfilerEventStateArgs_v6_t){0});
    }
  }
  /* GPU kernel start on this rank (compute skew, straggler delay), KernelCh callbacks after polling lag */
  uint64_t tK = T0 + (uint64_t)c->gpu.skewNs + (uint64_t)c->straggleNs;
  for (int k = 0; k < nk; k++) {
    kch[k].tGpuStart = tK + (uint64_t)k * 100;
    kch[k].pStart = simGpuTime(&c->gpu, kch[k].tGpuStart);
    kch[k].cbStart = kch[k].tGpuStart + simPollLagNs(&c->rng);
  }
  /* callbacks in callback-time order */
  for (int k = 0; k < nk; k++) {
    int best = -1;
    for (int q = 0; q < nk; q++)
      if (!kch[q].ev.serial && (best < 0 || kch[q].cbStart < kch[best].cbStart)) best = q;
    kchState* ks = &kch[best];
    simSleepUntil(ks->cbStart);
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelCh;
    d.rank = c->rank;
    const simEvent* par = &g->tasks[ks->task].task;
    d.parentObj = par->h;
    d.kernelCh.channelId = (uint8_t)ks->ch;
    d.kernelCh.pTimer = ks->pStart;
    snprintf(key, sizeof key, "\"channel\":%d,\"ptimer\":%llu,\"op\":%llu", ks->ch, (unsigned long long)ks->pStart,
             (unsigned long long)w->opIndex);
    simStart(p, c->ctx, &ks->ev, par->serial ? par : NULL, &d, false, getpid(), key);
    ks->ev.serial = ks->ev.serial ? ks->ev.serial : 1;
  }
  simSleepUntil(tK);
  int aborted = simBarrier(c, w->opIndex);
  uint64_t tAll = simNowNs();
  if (simOpt.fast) tAll = tK;

  /* schedule the steps */
  size_t nact = 0, cap = 64;
  action* acts = malloc(cap * sizeof *acts);
#define ADD(T, K, S, ST, A)                                          \
  do {                                                               \
    if (nact == cap) acts = realloc(acts, (cap *= 2) * sizeof *acts); \
    acts[nact] = (action){(T), (K), (S), (ST), (A), (int)nact};      \
    nact++;                                                          \
  } while (0)
  uint64_t gpuChunkNs = 2000;
  for (int k = 0; k < nsub && !aborted; k++) {
    subState* s = &subs[k];
    uint64_t stopAt[SIM_STEPS + 1];
    uint64_t prevDone = tAll;
    size_t left = s->bytes;
    for (int st = 0; st < s->nSteps; st++) {
      size_t b = left < (size_t)s->chunk ? left : (size_t)s->chunk;
      if (st == s->nSteps - 1) b = left;
      left -= b;
      uint64_t start = tAll + (uint64_t)st * 200;
      if (st >= SIM_STEPS && stopAt[st % SIM_STEPS] > start) start = stopAt[st % SIM_STEPS];
      uint64_t ready = tAll + (uint64_t)(st + 1) * gpuChunkNs;
      if (ready < start) ready = start;
      uint64_t xfer = simXferNs(b);
      if (s->isSend) {
        uint64_t peerOk = ready + 500;
        uint64_t done = (peerOk > prevDone ? peerOk : prevDone) + xfer;
        ADD(start, A_STEP_START, k, st, 0);
        ADD(start, A_STATE, k, st, ncclProfilerProxyStepSendGPUWait);
        ADD(ready, A_STATE, k, st, ncclProfilerProxyStepSendPeerWait_v4);
        ADD(peerOk, A_STATE, k, st, ncclProfilerProxyStepSendWait);
        ADD(peerOk, A_NET_START, k, st, (int)b);
        ADD(done, A_STEP_STOP, k, st, 0);
        prevDone = done;
        stopAt[st % SIM_STEPS] = done;
      } else {
        uint64_t arrive = (ready + 500 > prevDone ? ready + 500 : prevDone) + xfer;
        uint64_t flushed = arrive + 1500;
        uint64_t consumed = flushed + gpuChunkNs;
        ADD(start, A_STEP_START, k, st, 0);
        ADD(start, A_STATE, k, st, ncclProfilerProxyStepRecvWait);
        ADD(start, A_NET_START, k, st, (int)b);
        ADD(arrive, A_STATE, k, st, ncclProfilerProxyStepRecvFlushWait);
        ADD(flushed, A_STATE, k, st, ncclProfilerProxyStepRecvGPUWait);
        ADD(consumed, A_STEP_STOP, k, st, 0);
        prevDone = arrive;
        stopAt[st % SIM_STEPS] = consumed;
      }
      s->tLast = stopAt[st % SIM_STEPS];
    }
    ADD(s->tLast + 300, A_OP_STOP, k, 0, 0);
  }
  /* kernel channel ends after the last network step on that channel (or compute time) */
  uint64_t tEnd = tAll;
  for (int k = 0; k < nk; k++) {
    kchState* ks = &kch[k];
    uint64_t e = tAll + 3000 + simXferNs(g->tasks[ks->task].bytes / 64 + 1) / 8;
    for (int q = 0; q < nsub; q++)
      if (subs[q].ch == ks->ch && subs[q].task == ks->task && !subs[q].foreign && subs[q].tLast + 1000 > e)
        e = subs[q].tLast + 1000;
    if (aborted) e = simNowNs();
    ks->tGpuStop = e;
    ks->pStop = simGpuTime(&c->gpu, e);
    ks->cbStop = e + simPollLagNs(&c->rng);
    if (ks->cbStop < ks->cbStart) ks->cbStop = ks->cbStart;
    ADD(ks->cbStop, A_KCH_STOP, k, 0, 0);
    if (e > tEnd) tEnd = e;
  }
  for (int k = 0; k < nsub; k++)
    if (subs[k].tLast > tEnd) tEnd = subs[k].tLast;
  if (aborted)
    for (int k = 0; k < nsub; k++) ADD(simNowNs(), A_OP_STOP, k, 0, 0);
  qsort(acts, nact, sizeof *acts, cmpAction);

  for (size_t a = 0; a < nact; a++) {
    action* x = &acts[a];
    simSleepUntil(x->t);
    subState* s = x->kind == A_KCH_STOP ? NULL : &subs[x->sub];
    simEvent* step = s ? &s->steps[x->step % SIM_STEPS] : NULL;
    /* NCCL starts steps whatever the ProxyOp handle is (parent may be NULL) but
     * records step states only when the ProxyOp handle is non-NULL */
    bool stepOn = p && s && (mask & (ncclProfileProxyStep | ncclProfileNetPlugin));
    switch (x->kind) {
    case A_STEP_START:
      memset(step, 0, sizeof *step);
      if (stepOn) {
        ncclProfilerEventDescr_v6_t d;
        memset(&d, 0, sizeof d);
        d.type = ncclProfileProxyStep;
        d.rank = s->rank;
        d.parentObj = s->op.h;
        d.proxyStep.step = x->step;
        snprintf(key, sizeof key, "\"channel\":%d,\"step\":%d,\"send\":%d", s->ch, x->step, s->isSend);
        simStart(p, s->ctx, step, &s->op, &d, s->foreign, s->pid, key);
      }
      break;
    case A_STATE: {
      ncclProfilerEventStateArgs_v6_t sa;
      memset(&sa, 0, sizeof sa);
      sa.proxyStep.transSize = (x->arg == ncclProfilerProxyStepSendWait || x->arg == ncclProfilerProxyStepRecvFlushWait ||
                                x->arg == ncclProfilerProxyStepRecvGPUWait)
                                   ? (x->step == s->nSteps - 1 ? s->bytes - (size_t)s->chunk * (size_t)(s->nSteps - 1)
                                                               : (size_t)s->chunk)
                                   : 0;
      if (s->op.h) simRecord(p, step, x->arg, &sa);
      break;
    }
    case A_NET_START: {
      netReq* r = &s->nets[x->step % SIM_STEPS];
      memset(r, 0, sizeof *r);
      if (!p || !(mask & ncclProfileNetPlugin)) break;
      r->kind = 0, r->p = p, r->ctx = s->ctx, r->step = step, r->rank = s->rank;
      r->pxn = s->foreign, r->originPid = s->pid;
      if (s->ch % 2 == 0) {
        r->id = (int64_t)(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER);
        r->data.ib.type = ncclProfileQp;
        r->data.ib.qp.device = c->node % 4;
        r->data.ib.qp.wr_id = ((uint64_t)s->ch << 16) | (uint64_t)x->step;
        r->data.ib.qp.opcode = s->isSend ? 2 /* RDMA_WRITE_WITH_IMM-like */ : 128;
        r->data.ib.qp.qpNum = 1000 + s->ch;
        r->data.ib.qp.length = (size_t)x->arg;
      } else {
        r->id = (int64_t)(NCCL_PROFILER_NET_TYPE_SOCK | NCCL_PROFILER_NET_SOCKET_VER);
        r->data.sock.type = ncclProfileSocket;
        r->data.sock.sock.fd = 100 + s->ch;
        r->data.sock.sock.op = s->isSend ? 0 : 1;
        r->data.sock.sock.length = (size_t)x->arg;
      }
      snprintf(r->key, sizeof r->key, "\"channel\":%d,\"step\":%d,\"send\":%d,\"net\":\"%s\"", s->ch, x->step,
               s->isSend, s->ch % 2 == 0 ? "ib" : "socket");
      netPost(px, r);
      break;
    }
    case A_STEP_STOP: {
      netReq* r = &s->nets[x->step % SIM_STEPS];
      if (r->p) {
        netWait(r); /* start done */
        r->kind = 1;
        netPost(px, r);
        netWait(r);
      }
      simStop(p, step);
      step->h = NULL;
      break;
    }
    case A_OP_STOP:
      if (s->op.serial) {
        for (int q = 0; q < SIM_STEPS; q++) {
          if (s->nets[q].p && s->nets[q].kind == 0) {
            netWait(&s->nets[q]);
            s->nets[q].kind = 1;
            netPost(px, &s->nets[q]);
            netWait(&s->nets[q]);
          }
          if (s->steps[q].h) simStop(p, &s->steps[q]), s->steps[q].h = NULL;
        }
        simStop(p, &s->op);
        s->op.h = NULL;
        s->op.serial = 0;
      }
      break;
    case A_KCH_STOP: {
      kchState* ks = &kch[x->sub];
      if (p && ks->ev.h) {
        ncclProfilerEventStateArgs_v6_t sa;
        memset(&sa, 0, sizeof sa);
        sa.kernelCh.pTimer = ks->pStop;
        simRecord(p, &ks->ev, ncclProfilerKernelChStop, &sa);
        simStop(p, &ks->ev);
      } else {
        simStop(p, &ks->ev);
      }
      const simTask* t = &g->tasks[ks->task];
      simTruthf("\"kind\":\"kernel\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"op\":%llu,"
                "\"channel\":%d,\"gpu_start\":%llu,\"gpu_stop\":%llu,\"ptimer_start\":%llu,\"ptimer_stop\":%llu,"
                "\"cb_start\":%llu,\"cb_stop\":%llu,\"replay\":%s",
                (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq,
                (unsigned long long)w->opIndex, ks->ch, (unsigned long long)ks->tGpuStart,
                (unsigned long long)ks->tGpuStop, (unsigned long long)ks->pStart, (unsigned long long)ks->pStop,
                (unsigned long long)ks->cbStart, (unsigned long long)ks->cbStop, w->replay ? "true" : "false");
      break;
    }
    }
  }
  for (int i = 0; i < g->nTasks; i++) {
    const simTask* t = &g->tasks[i];
    simTruthf("\"kind\":\"coll\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"op\":%llu,"
              "\"peer\":%d,\"bytes\":%zu,\"t_start\":%llu,\"t_end\":%llu,\"aborted\":%s,\"replay\":%s,\"ce\":false",
              (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq,
              (unsigned long long)w->opIndex, t->peer, t->bytes, (unsigned long long)tK,
              (unsigned long long)(aborted ? simNowNs() : tEnd), aborted ? "true" : "false",
              w->replay ? "true" : "false");
  }
  if (aborted)
    simTruthf("\"kind\":\"hang_observed\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%llu,\"waited_ms\":%d",
              (unsigned long long)c->commId, c->rank, (unsigned long long)w->opIndex, simOpt.hangTimeoutMs);
  free(acts);
  free(subs);
  free(kch);
  pthread_mutex_lock(&w->m);
  w->aborted = aborted;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->m);
}

/* ---------------- proxy thread ---------------- */

static void ctrlEvent(simProxy* px, int s1, int appended, int s2, bool waitForWork) {
  simComm* o = px->owner;
  const simPlugin* p = o->plugin;
  simEvent ev = {0};
  /* NCCL reads the mask for every ProxyCtrl event (relaxed: no ordering needed,
   * a plugin's change may show up one event late) */
  if (p && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileProxyCtrl;
    simStart(p, o->ctx, &ev, NULL, &d, false, getpid(), NULL);
  }
  ncclProfilerEventStateArgs_v6_t a;
  memset(&a, 0, sizeof a);
  if (ev.h && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) simRecord(p, &ev, s1, &a);
  if (waitForWork) {
    while (!px->head && !px->stop) pthread_cond_wait(&px->cv, &px->m);
  }
  if (s2 >= 0) {
    a.proxyCtrl.appendedProxyOps = appended;
    if (ev.h && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) simRecord(p, &ev, s2, &a);
  }
  simStop(p, &ev);
}

static void* proxyMain(void* arg) {
  simProxy* px = arg;
  simTruthThreadBegin("proxy");
  pthread_mutex_lock(&px->m);
  for (;;) {
    if (!px->head) {
      if (px->stop) break;
      if (px->lastIdle != 1) ctrlEvent(px, ncclProfilerProxyCtrlIdle, 0, -1, false), px->lastIdle = 1;
      if (!px->head && !px->stop) ctrlEvent(px, ncclProfilerProxyCtrlSleep, 0, ncclProfilerProxyCtrlWakeup, true);
      continue;
    }
    simWork* list = px->head;
    px->head = px->tail = NULL;
    pthread_mutex_unlock(&px->m);
    int added = 0;
    for (simWork* w = list; w; w = w->next) added++;
    ctrlEvent(px, ncclProfilerProxyCtrlAppend, added, ncclProfilerProxyCtrlAppendEnd, false);
    if (px->lastIdle != 0) ctrlEvent(px, ncclProfilerProxyCtrlActive, 0, -1, false), px->lastIdle = 0;
    while (list) {
      simWork* next = list->next;
      runWork(px, list); /* list may be freed by its waiter after this */
      list = next;
    }
    pthread_mutex_lock(&px->m);
  }
  pthread_mutex_unlock(&px->m);
  simTruthThreadEnd();
  return NULL;
}

simProxy* simProxyCreate(simComm* owner) {
  simProxy* px = calloc(1, sizeof *px);
  px->owner = owner;
  px->lastIdle = -1;
  pthread_mutex_init(&px->m, NULL);
  pthread_cond_init(&px->cv, NULL);
  pthread_mutex_init(&px->nm, NULL);
  pthread_cond_init(&px->ncv, NULL);
  simThreadCreate(&px->nth, netMain, px);
  simThreadCreate(&px->th, proxyMain, px);
  return px;
}

void simProxyDestroy(simProxy* px) {
  pthread_mutex_lock(&px->m);
  px->stop = true;
  pthread_cond_signal(&px->cv);
  pthread_mutex_unlock(&px->m);
  simThreadJoin(px->th);
  pthread_mutex_lock(&px->nm);
  px->nstop = true;
  pthread_cond_signal(&px->ncv);
  pthread_mutex_unlock(&px->nm);
  simThreadJoin(px->nth);
  free(px);
}
