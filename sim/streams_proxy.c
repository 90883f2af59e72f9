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
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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

/* per proxy thread: how well the timed send transfers kept the link model (truth `xfer` records) */
typedef struct {
  uint64_t comm;
  int rank, peer;
  size_t bytes;
  uint64_t steps, unqueued, onTime, minNs, maxLateNs;
} xferStat;
#define SIM_XFER_STATS 512

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
  xferStat* xstats; /* proxy thread only; SIM_XFER_STATS entries */
  int nxstats;
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
  if (replay) w->g.tLaunch = w->g.tKernel = 0; /* a replayed graph launches no kernel of its own */
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

/* One NetPlugin call sequence: start (kind 0) or update + stop (kind 1). Runs
 * on the network helper thread (socket plugin) or inline on the proxy thread
 * (IB plugin, whose callbacks run inside isend/irecv/test). */
static void netDo(netReq* r) {
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
    netDo(r);
    atomic_store_explicit(&r->done, 1, memory_order_release);
  }
  simTruthThreadEnd();
  return NULL;
}

/* ---------------- one work item ---------------- */

/* A work item runs as a time-ordered queue of actions (a binary heap). An
 * action that starts a timed interval schedules its successor relative to
 * the moment it actually ran, not to the plan: on a loaded machine the proxy
 * thread runs late, and a plan made in advance would then squeeze or stretch
 * the interval a plugin measures (SendWait -> step stop is the link model's
 * transfer time). Late actions only make later actions late. */
enum {
  A_STEP_START,   /* ProxyStep start (+ SendGPUWait | irecv: NetPlugin start, RecvWait) */
  A_SEND_PEER,    /* SendPeerWait: the GPU produced the chunk */
  A_SEND_WAIT,    /* isend: NetPlugin start (IB), SendWait; the transfer begins */
  A_NET_STOP,     /* NetPlugin update + stop shortly before the completion is seen */
  A_RECV_ARRIVE,  /* irecv completed: RecvFlushWait */
  A_RECV_FLUSHED, /* RecvGPUWait */
  A_STEP_STOP,    /* ProxyStep stop (send: test() saw the completion; recv: GPU consumed) */
  A_OP_STOP,
  A_KCH_STOP
};
typedef struct {
  uint64_t t;
  uint64_t order; /* insertion order: ties run first in, first out */
  int kind, sub, step;
} action;

typedef struct {
  action* v;
  size_t n, cap;
  uint64_t order;
} actionHeap;

static bool actionBefore(const action* x, const action* y) { return x->t != y->t ? x->t < y->t : x->order < y->order; }

static void heapPush(actionHeap* h, uint64_t t, int kind, int sub, int step) {
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 64;
    h->v = realloc(h->v, h->cap * sizeof *h->v);
  }
  size_t i = h->n++;
  action x = {t, h->order++, kind, sub, step};
  while (i > 0 && actionBefore(&x, &h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = x;
}

/* A completion the socket helper thread has not made yet: look again in
 * 1 us. In --fast mode nothing sleeps, so the poll gives the CPU away first:
 * under valgrind, which runs one thread at a time, a spinning poll starves
 * the very thread it waits for (a --fast run took minutes instead of seconds). */
static void pollAgain(actionHeap* h, int kind, int sub, int step) {
  if (simOpt.fast) sched_yield();
  heapPush(h, simNowNs() + 1000, kind, sub, step);
}

static action heapPop(actionHeap* h) {
  action top = h->v[0], last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && actionBefore(&h->v[c + 1], &h->v[c])) c++;
    if (!actionBefore(&h->v[c], &last)) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n) h->v[i] = last;
  return top;
}

/* NetPlugin request state per step slot */
enum { NET_NONE, NET_STARTED, NET_STOPPED };

typedef struct {
  simEvent op;
  simEvent steps[SIM_STEPS];
  netReq nets[SIM_STEPS];
  int netState[SIM_STEPS];
  int ch, peer, isSend, rank, nSteps, chunk, task;
  size_t bytes;
  void* ctx;
  bool foreign;
  bool ib; /* even channels: IB plugin (NetPlugin inline); odd: socket plugin (helper thread) */
  pid_t pid;
  uint64_t linkFree;             /* model: the link is busy with earlier steps until then */
  uint64_t due[SIM_STEPS];       /* completion time of the step in the slot (send: its stop) */
  uint64_t waitAt[SIM_STEPS];    /* send: when SendWait was recorded (see A_SEND_WAIT) */
  bool waitTight[SIM_STEPS];     /* send: the SendWait call was quick, waitAt is within SIM_CALL_SLOP_NS */
  int stepsDone;
  uint64_t tLast; /* when the last step actually stopped */
} subState;

typedef struct {
  simEvent ev;
  int ch, task;
  int pendingSubs;    /* network ProxyOps of this channel still running */
  uint64_t e0;        /* compute-only end of the channel */
  uint64_t lastStop;  /* latest actual stop of those ProxyOps' last steps */
  uint64_t tGpuStart, tGpuStop, cbStart, cbStop, pStart, pStop;
} kchState;

/* A SendWait call longer than this (preempted, a cache-cold or page-faulting
 * plugin) is taken to have been recorded at its end: the scheduled transfer
 * then can only look longer to the plugin, never shorter. A quick call
 * (typically 30-60 ns with ncclscope) is taken from its start: the plugin may
 * then see up to this much less than the model, as the stop call's own
 * lead-in mostly makes up. */
#define SIM_CALL_SLOP_NS 100
/* A step stop that runs this much after its due time is counted as late in the truth's xfer records. */
#define SIM_ON_TIME_NS 150

static uint64_t u64max(uint64_t a, uint64_t b) { return a > b ? a : b; }

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

/* bytes moved by step st of a ProxyOp (the last one takes the rest) */
static size_t stepBytes(const subState* s, int st) {
  return st == s->nSteps - 1 ? s->bytes - (size_t)s->chunk * (size_t)(s->nSteps - 1) : (size_t)s->chunk;
}

/* when the GPU has produced (send) chunk st */
static uint64_t chunkReady(uint64_t tAll, int st) { return tAll + (uint64_t)(st + 1) * 2000; }

static void stepState(const simPlugin* p, subState* s, simEvent* step, int st, int state) {
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  if (state == ncclProfilerProxyStepSendWait || state == ncclProfilerProxyStepRecvFlushWait ||
      state == ncclProfilerProxyStepRecvGPUWait)
    sa.proxyStep.transSize = stepBytes(s, st);
  if (s->op.h) simRecord(p, step, state, &sa);
}

/* NetPlugin start for step st: inline for IB (inside isend/irecv), handed to
 * the helper thread for sockets. */
static void netStart(simProxy* px, const simComm* c, const simPlugin* p, int mask, subState* s, int st, size_t b) {
  int slot = st % SIM_STEPS;
  netReq* r = &s->nets[slot];
  memset(r, 0, sizeof *r);
  s->netState[slot] = NET_NONE;
  if (!p || !(mask & ncclProfileNetPlugin)) return;
  r->kind = 0, r->p = p, r->ctx = s->ctx, r->step = &s->steps[slot], r->rank = s->rank;
  r->pxn = s->foreign, r->originPid = s->pid;
  if (s->ib) {
    r->id = (int64_t)(NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER);
    r->data.ib.type = ncclProfileQp;
    r->data.ib.qp.device = c->node % 4;
    r->data.ib.qp.wr_id = ((uint64_t)s->ch << 16) | (uint64_t)st;
    r->data.ib.qp.opcode = s->isSend ? 2 /* RDMA_WRITE_WITH_IMM-like */ : 128;
    r->data.ib.qp.qpNum = 1000 + s->ch;
    r->data.ib.qp.length = b;
  } else {
    r->id = (int64_t)(NCCL_PROFILER_NET_TYPE_SOCK | NCCL_PROFILER_NET_SOCKET_VER);
    r->data.sock.type = ncclProfileSocket;
    r->data.sock.sock.fd = 100 + s->ch;
    r->data.sock.sock.op = s->isSend ? 0 : 1;
    r->data.sock.sock.length = b;
  }
  snprintf(r->key, sizeof r->key, "\"channel\":%d,\"step\":%d,\"send\":%d,\"net\":\"%s\"", s->ch, st, s->isSend,
           s->ib ? "ib" : "socket");
  s->netState[slot] = NET_STARTED;
  if (s->ib)
    netDo(r);
  else
    netPost(px, r);
}

/* When to end the NetPlugin event of a step completing at `done`: IB just
 * before the completion is polled; the socket helper thread some time ahead,
 * so that its wake-up rarely delays the step's stop. */
static uint64_t netStopAt(const subState* s, uint64_t now, uint64_t done) {
  uint64_t lead = s->ib ? 1000 : 10000;
  return done > now + lead ? done - lead : now;
}

static void netStop(simProxy* px, subState* s, int st) {
  int slot = st % SIM_STEPS;
  netReq* r = &s->nets[slot];
  if (s->netState[slot] != NET_STARTED) return;
  s->netState[slot] = NET_STOPPED;
  if (s->ib) {
    r->kind = 1;
    netDo(r);
    return;
  }
  netWait(r); /* its start is done */
  r->kind = 1;
  netPost(px, r);
}

/* The NetPlugin event of step st has stopped (it must, before the step moves on). */
static void netFinish(simProxy* px, subState* s, int st) {
  int slot = st % SIM_STEPS;
  if (s->netState[slot] == NET_STARTED) netStop(px, s, st);
  if (s->netState[slot] == NET_STOPPED && !s->ib) netWait(&s->nets[slot]);
}

/* Like NCCL's test(): has the NetPlugin event of step st ended? Never blocks:
 * a socket helper that has not run yet makes the caller poll again later
 * (as the proxy's progress loop does), so other steps keep their times. */
static bool netDone(simProxy* px, subState* s, int st) {
  int slot = st % SIM_STEPS;
  if (s->netState[slot] == NET_STARTED) netStop(px, s, st);
  if (s->netState[slot] != NET_STOPPED || s->ib) return true;
  /* acquire pairs with the release store in netMain: the net event is complete */
  return atomic_load_explicit(&s->nets[slot].done, memory_order_acquire) != 0;
}

/* The kernel channel ends at e (CLOCK_MONOTONIC): its KernelChStop callback follows after a polling lag. */
static void kchFinish(simComm* c, actionHeap* H, kchState* ks, int k, uint64_t e) {
  ks->tGpuStop = e;
  ks->pStop = simGpuTime(&c->gpu, e);
  ks->cbStop = u64max(e + simPollLagNs(&c->rng), ks->cbStart);
  heapPush(H, ks->cbStop, A_KCH_STOP, k, 0);
}

/* A send step stopped at `now` (read just before the stop call). */
static void xferNote(simProxy* px, const simComm* c, const subState* s, int st, uint64_t now) {
  int slot = st % SIM_STEPS;
  size_t b = stepBytes(s, st);
  uint64_t model = simXferNs(b);
  bool unqueued = s->due[slot] == s->waitAt[slot] + model; /* the link was free when the step was posted */
  uint64_t late = now > s->due[slot] ? now - s->due[slot] : 0;
  xferStat* x = NULL;
  for (int i = 0; i < px->nxstats && !x; i++)
    if (px->xstats[i].comm == c->commId && px->xstats[i].rank == s->rank && px->xstats[i].peer == s->peer &&
        px->xstats[i].bytes == b)
      x = &px->xstats[i];
  if (!x) {
    if (px->nxstats == SIM_XFER_STATS) return;
    x = &px->xstats[px->nxstats++];
    *x = (xferStat){.comm = c->commId, .rank = s->rank, .peer = s->peer, .bytes = b, .minNs = UINT64_MAX};
  }
  x->steps++;
  if (unqueued) x->unqueued++;
  if (unqueued && s->waitTight[slot] && late <= SIM_ON_TIME_NS) x->onTime++;
  if (now - s->waitAt[slot] < x->minNs) x->minNs = now - s->waitAt[slot];
  if (late > x->maxLateNs) x->maxLateNs = late;
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
  /* GPU kernel start on this rank: from its launch call (streams_app.c), or for
   * a graph replay, whose kernels wait for the host callback that posted this
   * work, from now; a straggler's kernel starts later. KernelCh callbacks
   * follow after a polling lag. */
  uint64_t tK = (g->tKernel ? g->tKernel : simKernelStartNs(&c->rng, &c->gpu, T0)) + (uint64_t)c->straggleNs;
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

  /* schedule the steps: the first SIM_STEPS of each ProxyOp now, later ones when their slot frees */
  actionHeap H = {0};
  const uint64_t gpuChunkNs = 2000; /* the GPU produces (send) / consumes (recv) one chunk */
  for (int k = 0; k < nsub && !aborted; k++) {
    subState* s = &subs[k];
    s->ib = s->ch % 2 == 0;
    s->linkFree = tAll;
    for (int st = 0; st < s->nSteps && st < SIM_STEPS; st++)
      heapPush(&H, tAll + (uint64_t)st * 200, A_STEP_START, k, st);
  }
  /* kernel channel ends after the last network step on that channel (or after its compute time) */
  for (int k = 0; k < nk; k++) {
    kchState* ks = &kch[k];
    ks->e0 = aborted ? simNowNs() : tAll + 3000 + simXferNs(g->tasks[ks->task].bytes / 64 + 1) / 8;
    for (int q = 0; q < nsub && !aborted; q++)
      if (subs[q].ch == ks->ch && subs[q].task == ks->task && !subs[q].foreign) ks->pendingSubs++;
    if (ks->pendingSubs == 0) kchFinish(c, &H, ks, k, ks->e0);
  }
  if (aborted)
    for (int k = 0; k < nsub; k++) heapPush(&H, simNowNs(), A_OP_STOP, k, 0);

  while (H.n) {
    action x = heapPop(&H);
    simSleepUntil(x.t);
    subState* s = x.kind == A_KCH_STOP ? NULL : &subs[x.sub];
    int slot = x.step % SIM_STEPS;
    simEvent* step = s ? &s->steps[slot] : NULL;
    size_t b = s ? stepBytes(s, x.step) : 0;
    /* NCCL starts steps whatever the ProxyOp handle is (parent may be NULL) but
     * records step states only when the ProxyOp handle is non-NULL */
    bool stepOn = p && s && (mask & (ncclProfileProxyStep | ncclProfileNetPlugin));
    switch (x.kind) {
    case A_STEP_START:
      memset(step, 0, sizeof *step);
      if (stepOn) {
        ncclProfilerEventDescr_v6_t d;
        memset(&d, 0, sizeof d);
        d.type = ncclProfileProxyStep;
        d.rank = s->rank;
        d.parentObj = s->op.h;
        d.proxyStep.step = x.step;
        snprintf(key, sizeof key, "\"channel\":%d,\"step\":%d,\"send\":%d", s->ch, x.step, s->isSend);
        simStart(p, s->ctx, step, &s->op, &d, s->foreign, s->pid, key);
      }
      if (s->isSend) {
        stepState(p, s, step, x.step, ncclProfilerProxyStepSendGPUWait);
        heapPush(&H, u64max(chunkReady(tAll, x.step), simNowNs()), A_SEND_PEER, x.sub, x.step);
      } else {
        /* irecv: the IB plugin's NetPlugin event starts inside it; then RecvWait */
        netStart(px, c, p, mask, s, x.step, b);
        stepState(p, s, step, x.step, ncclProfilerProxyStepRecvWait);
        /* the sender's data leaves once it is ready and the link is free */
        uint64_t now = simNowNs();
        uint64_t arrive = u64max(u64max(chunkReady(tAll, x.step) + 500, s->linkFree), now) + simXferNs(b);
        s->linkFree = arrive;
        s->due[slot] = arrive;
        heapPush(&H, netStopAt(s, now, arrive), A_NET_STOP, x.sub, x.step);
        heapPush(&H, arrive, A_RECV_ARRIVE, x.sub, x.step);
      }
      break;
    case A_SEND_PEER:
      stepState(p, s, step, x.step, ncclProfilerProxyStepSendPeerWait_v4);
      heapPush(&H, simNowNs() + 500, A_SEND_WAIT, x.sub, x.step); /* the peer's buffer is free */
      break;
    case A_SEND_WAIT: {
      /* isend: the IB plugin's NetPlugin event starts inside it; SendWait once it is posted */
      if (s->ib) netStart(px, c, p, mask, s, x.step, b);
      uint64_t a0 = simNowNs();
      stepState(p, s, step, x.step, ncclProfilerProxyStepSendWait);
      uint64_t a1 = simNowNs();
      if (!s->ib) netStart(px, c, p, mask, s, x.step, b); /* the socket helper thread picks the task up */
      /* The plugin stamped SendWait in [a0, a1]. Transfer time is measured
       * from there, so the stop is scheduled from a0 when that window is
       * short (the stop call's own lead-in mirrors the record call's), else
       * from a1: a disturbed call lengthens the interval, never shortens it. */
      s->waitTight[slot] = a1 - a0 <= SIM_CALL_SLOP_NS;
      s->waitAt[slot] = s->waitTight[slot] ? a0 : a1;
      uint64_t due = u64max(s->waitAt[slot], s->linkFree) + simXferNs(b);
      s->linkFree = due;
      s->due[slot] = due;
      heapPush(&H, netStopAt(s, a1, due), A_NET_STOP, x.sub, x.step);
      heapPush(&H, due, A_STEP_STOP, x.sub, x.step);
      break;
    }
    case A_NET_STOP:
      netStop(px, s, x.step);
      break;
    case A_RECV_ARRIVE:
      if (!netDone(px, s, x.step)) {
        pollAgain(&H, A_RECV_ARRIVE, x.sub, x.step);
        break;
      }
      stepState(p, s, step, x.step, ncclProfilerProxyStepRecvFlushWait);
      heapPush(&H, simNowNs() + 1500, A_RECV_FLUSHED, x.sub, x.step);
      break;
    case A_RECV_FLUSHED:
      stepState(p, s, step, x.step, ncclProfilerProxyStepRecvGPUWait);
      heapPush(&H, simNowNs() + gpuChunkNs, A_STEP_STOP, x.sub, x.step);
      break;
    case A_STEP_STOP: {
      if (s->isSend && !netDone(px, s, x.step)) {
        pollAgain(&H, A_STEP_STOP, x.sub, x.step);
        break;
      }
      uint64_t now = simNowNs();
      simStop(p, step);
      step->h = NULL;
      if (s->isSend && !s->foreign) xferNote(px, c, s, x.step, now);
      s->stepsDone++;
      if (x.step + SIM_STEPS < s->nSteps)
        heapPush(&H, u64max(tAll + (uint64_t)(x.step + SIM_STEPS) * 200, simNowNs()), A_STEP_START, x.sub,
                 x.step + SIM_STEPS);
      if (s->stepsDone == s->nSteps) {
        s->tLast = now;
        heapPush(&H, now + 300, A_OP_STOP, x.sub, 0);
        for (int k = 0; k < nk && !s->foreign; k++) {
          kchState* ks = &kch[k];
          if (ks->ch != s->ch || ks->task != s->task) continue;
          ks->lastStop = u64max(ks->lastStop, now);
          if (--ks->pendingSubs == 0) kchFinish(c, &H, ks, k, u64max(ks->e0, ks->lastStop + 1000));
        }
      }
      break;
    }
    case A_OP_STOP:
      if (s->op.serial) {
        for (int q = 0; q < SIM_STEPS; q++) {
          if (s->netState[q] == NET_STARTED) {
            netFinish(px, s, q);
          }
          if (s->steps[q].h) simStop(p, &s->steps[q]), s->steps[q].h = NULL;
        }
        simStop(p, &s->op);
        s->op.h = NULL;
        s->op.serial = 0;
      }
      break;
    case A_KCH_STOP: {
      kchState* ks = &kch[x.sub];
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
      simTruthf("\"kind\":\"kernel\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"peer\":%d,"
                "\"op\":%llu,\"channel\":%d,\"gpu_start\":%llu,\"gpu_stop\":%llu,\"ptimer_start\":%llu,\"ptimer_stop\":%llu,"
                "\"cb_start\":%llu,\"cb_stop\":%llu,\"replay\":%s",
                (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq, t->peer,
                (unsigned long long)w->opIndex, ks->ch, (unsigned long long)ks->tGpuStart,
                (unsigned long long)ks->tGpuStop, (unsigned long long)ks->pStart, (unsigned long long)ks->pStop,
                (unsigned long long)ks->cbStart, (unsigned long long)ks->cbStop, w->replay ? "true" : "false");
      break;
    }
    }
  }
  free(H.v);
  for (int i = 0; i < g->nTasks; i++) {
    const simTask* t = &g->tasks[i];
    /* the task's true end: its last kernel channel or network step (as they actually ran) */
    uint64_t tEnd = tAll;
    for (int k = 0; k < nk; k++)
      if (kch[k].task == i) tEnd = u64max(tEnd, kch[k].tGpuStop);
    for (int k = 0; k < nsub; k++)
      if (subs[k].task == i && !subs[k].foreign) tEnd = u64max(tEnd, subs[k].tLast);
    simTruthf("\"kind\":\"coll\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"op\":%llu,"
              "\"peer\":%d,\"bytes\":%zu,\"t_launch\":%llu,\"t_start\":%llu,\"t_end\":%llu,\"aborted\":%s,"
              "\"replay\":%s,\"ce\":false",
              (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq,
              (unsigned long long)w->opIndex, t->peer, t->bytes, (unsigned long long)g->tLaunch, (unsigned long long)tK,
              (unsigned long long)(aborted ? simNowNs() : tEnd), aborted ? "true" : "false",
              w->replay ? "true" : "false");
  }
  if (aborted)
    simTruthf("\"kind\":\"hang_observed\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%llu,\"waited_ms\":%d",
              (unsigned long long)c->commId, c->rank, (unsigned long long)w->opIndex, simOpt.hangTimeoutMs);
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
  /* timed waits sleep with 1 ns timer slack (default 50 us), spinning only their last stretch */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
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
  for (int i = 0; i < px->nxstats; i++) {
    const xferStat* x = &px->xstats[i];
    simTruthf("\"kind\":\"xfer\",\"comm\":\"0x%016llx\",\"rank\":%d,\"peer\":%d,\"send\":true,\"bytes\":%zu,"
              "\"model_ns\":%llu,\"steps\":%llu,\"unqueued\":%llu,\"on_time\":%llu,\"min_ns\":%llu,"
              "\"max_late_ns\":%llu",
              (unsigned long long)x->comm, x->rank, x->peer, x->bytes, (unsigned long long)simXferNs(x->bytes),
              (unsigned long long)x->steps, (unsigned long long)x->unqueued, (unsigned long long)x->onTime,
              (unsigned long long)x->minNs, (unsigned long long)x->maxLateNs);
  }
  simTruthThreadEnd();
  return NULL;
}

simProxy* simProxyCreate(simComm* owner) {
  simProxy* px = calloc(1, sizeof *px);
  px->owner = owner;
  px->lastIdle = -1;
  px->xstats = calloc(SIM_XFER_STATS, sizeof *px->xstats);
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
  free(px->xstats);
  free(px);
}
