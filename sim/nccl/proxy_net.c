/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: a work's ProxyOps and their network steps, on the proxy thread.
 *
 * Per channel and network peer a send and a receive ProxyOp; their steps in
 * NCCL's 8 slots (step % 8, reused only after that step stopped):
 * send 8 -> 20 -> 9 -> stop, receive 10 -> 11 -> 12 -> stop, with the NetPlugin
 * events of the IB plugin (inline, inside isend/irecv/test) or the socket
 * plugin (inline on the proxy thread in test(), or on a helper thread;
 * net_plugin_events.c).
 * What a release does differently is switched by its quirks (nccl_version.h):
 * when ProxyOps start and whether they stop, ProxyOp states 0-7, NULL or
 * stale step args, receive steps started again until their post succeeds,
 * SendPeerWait repeated while the receiver is not ready, NetPlugin events
 * stopped twice. Timing: each action schedules the next from the moment it
 * actually ran (action_heap.c); the link model is simXferNs.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nccl/proxy.h"

/* A SendWait call longer than this (preempted, a cache-cold or page-faulting
 * plugin) is taken to have been recorded at its end: the scheduled transfer
 * then can only look longer to the plugin, never shorter. A quick call is
 * taken from its start: the plugin may see up to this much less than the
 * model, as the stop call's own lead-in mostly makes up. */
#define SIM_CALL_SLOP_NS 100
/* A step stop that runs this much after its due time is counted as late in the truth's xfer records. */
#define SIM_ON_TIME_NS 150
#define PASS_NS 1000ull /* one pass of the proxy's progress loop over its ops */

static uint64_t u64max(uint64_t a, uint64_t b) { return a > b ? a : b; }

static size_t netFactor(int f) { return f == SIM_FUNC_ALLREDUCE ? 2 : 1; /* ring traffic per rank / buffer */ }

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

static bool isP2p(int f) { return f == SIM_FUNC_SEND || f == SIM_FUNC_RECV; }

/* bytes moved by step st of a ProxyOp (the last one takes the rest) */
static size_t stepBytes(const subState* s, int st) {
  return st == s->nSteps - 1 ? s->bytes - (size_t)s->chunk * (size_t)(s->nSteps - 1) : (size_t)s->chunk;
}

/* when the GPU has produced (send) chunk st */
static uint64_t chunkReady(uint64_t tAll, int st) { return tAll + (uint64_t)(st + 1) * 2000; }

/* ProxyOps a work's task gets on this rank: AllGatherV Broadcasts carry mask
 * 0 (no events, the transfers still happen), self send/recv and
 * symmetric/CE collectives have none. */
static bool silentOps(const simTask* t) {
  return t->func == SIM_FUNC_BROADCAST && simQuirk(Q_AGV_BCAST);
}

void simNetPlan(simProxy* px, simWork* w) {
  (void)px;
  simComm* c = w->c;
  simGroupSpec* g = &w->g;
  int n = c->nranks;
  int rpn = (n + c->nNodes - 1) / c->nNodes;
  bool multiNode = c->nNodes > 1 && n > rpn;
  bool pxn = g->pxn && multiNode;
  int foreignRank = pxn && simOpt.procs > 1 ? (c->rank - simOpt.ranksPerProc + n) % n : -1;
  w->subs = calloc((size_t)g->nTasks * SIM_MAX_CHANNELS * 4 + 1, sizeof *w->subs);
  if (w->deviceOnly || g->ce) return;
  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    if ((t->sym && simQuirk(Q_SYMMETRIC)) || (isP2p(t->func) && t->peer == c->rank)) continue;
    for (int j = 0; j < t->nChannels; j++) {
      int ch = (t->chanBase + j) % SIM_MAX_CHANNELS;
      int sendPeer = -1, recvPeer = -1;
      if (t->func == SIM_FUNC_SEND)
        sendPeer = t->peer;
      else if (t->func == SIM_FUNC_RECV)
        recvPeer = t->peer;
      else if (n > 1)
        /* ring neighbours: through the network where the ring crosses a node boundary */
        sendPeer = (c->rank + 1) % n, recvPeer = (c->rank - 1 + n) % n;
      size_t perCh = t->bytes * netFactor(t->func) / (size_t)t->nChannels;
      int chunk = t->bytes < 16384 ? 16384 : 131072;
      int nSteps = (int)((perCh + (size_t)chunk - 1) / (size_t)chunk);
      if (nSteps < 1) nSteps = 1;
      if (nSteps > 64) nSteps = 64;
      for (int dir = 0; dir < 2; dir++) {
        int peer = dir == 0 ? sendPeer : recvPeer;
        if (peer < 0) continue;
        bool net = peer / rpn != c->node;
        /* a copy transport (SHM/P2P through the proxy, CollNet): a ProxyOp
         * without steps, which NCCL 2.27+ starts and never stops */
        bool copy = !net && simOpt.copyProxy && simNcclCur.minor >= 27;
        if (!net && !copy) continue;
        if (dir == 0 && net && pxn) continue; /* the partner process's proxy sends for us */
        subState* s = &w->subs[w->nsub++];
        s->ch = ch, s->peer = peer, s->isSend = dir == 0 && net, s->rank = c->rank, s->nSteps = nSteps;
        s->chunk = chunk, s->task = i, s->bytes = perCh, s->ctx = w->ctx, s->pid = getpid(), s->copy = copy;
        s->silent = silentOps(t);
        s->poolSlot = px->nextPool++ % SIM_POOL;
      }
      if (pxn && sendPeer >= 0 && sendPeer / rpn != c->node) {
        /* foreign send ProxyOp on behalf of another rank */
        subState* s = &w->subs[w->nsub++];
        s->ch = ch, s->isSend = 1, s->nSteps = nSteps, s->chunk = chunk, s->task = i, s->bytes = perCh;
        s->foreign = true;
        s->rank = foreignRank >= 0 ? foreignRank : c->rank;
        s->peer = (s->rank + rpn) % n;
        s->pid = getppid();
        s->ctx = (char*)unmappedPage() + 64;
        s->poolSlot = px->nextPool++ % SIM_POOL;
      }
    }
  }
  for (int k = 0; k < w->nsub; k++)
    if (!w->subs[k].copy) w->pendingSubs++;
}

/* ---- state records ---- */

/* A ProxyStep state. Args per release: NULL (2.23-2.26); the step's own
 * transfer size on 9/11/12 (ideal); NCCL's sub->transSize, this step's only
 * in SendWait and RecvFlushWait (2.27+). */
static void stepState(simProxy* px, subState* s, simEvent* step, int st, int state) {
  (void)px;
  if (!s->op.h || s->silent) return; /* NCCL records step states only under a ProxyOp handle */
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  size_t own = stepBytes(s, st);
  if (simQuirk(Q_STALE_TRANSSIZE)) {
    if (state == ncclProfilerProxyStepSendWait || state == ncclProfilerProxyStepRecvFlushWait) s->lastSize = own;
    sa.proxyStep.transSize = s->lastSize;
  } else if (state == ncclProfilerProxyStepSendWait || state == ncclProfilerProxyStepRecvFlushWait ||
             state == ncclProfilerProxyStepRecvGPUWait) {
    sa.proxyStep.transSize = own;
  }
  simRecord(s->plugin, step, state, simQuirk(Q_STEP_ARGS_NULL) ? NULL : &sa);
}

/* 2.23-2.26: ProxyOp states 0-7, args {steps, transSize accumulated over the op's pool element}. */
static void oldOpState(simProxy* px, subState* s, int state, int steps, size_t add) {
  if (!simQuirk(Q_OLD_PROXYOP_STATES) || s->silent) return;
  px->poolOldSize[s->poolSlot] += add;
  simRecordOp(s->plugin, &s->op, state, (size_t)px->poolOldSize[s->poolSlot], steps);
}

/* ---- ProxyOps ---- */

static void startOp(simWork* w, subState* s) {
  const simPlugin* p = w->plugin;
  s->plugin = p;
  int foreignRank = w->foreignRank;
  int smask = simSubMask(w, s);
  if (!p || s->silent || !(smask & (ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileNetPlugin))) return;
  char key[192];
  ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileProxyOp, NULL, s->rank);
  const simEvent* par = &w->g.tasks[s->task].task;
  d.parentObj = par->h;
  if (s->foreign)
    d.parentObj = foreignRank >= 0 ? (void*)(uintptr_t)w->pxnTask[s->task % SIM_PXN_TASKS]
                                   : (char*)unmappedPage() + 4096 + 64 * s->task;
  d.proxyOp.pid = s->pid;
  d.proxyOp.channelId = (uint8_t)s->ch;
  d.proxyOp.peer = s->peer;
  d.proxyOp.nSteps = s->copy ? 0 : s->nSteps;
  d.proxyOp.chunkSize = s->chunk;
  d.proxyOp.isSend = s->isSend;
  snprintf(key, sizeof key, "\"channel\":%d,\"peer\":%d,\"send\":%d,\"nsteps\":%d,\"op\":%llu,\"copy\":%s", s->ch,
           s->peer, s->isSend, s->nSteps, (unsigned long long)w->opIndex, s->copy ? "true" : "false");
  simStart(p, s->ctx, &s->op, s->foreign ? NULL : (par->serial ? par : NULL), &d, s->foreign, s->pid, key);
  /* 2.27+: InProgress when it begins (simNetBegin), or at once without that quirk; before: states 0..7 */
  if (!simQuirk(Q_OLD_PROXYOP_STATES) && !simQuirk(Q_PROXYOP_QUEUED) && !s->copy)
    simRecord(p, &s->op, ncclProfilerProxyOpInProgress_v4, &(ncclProfilerEventStateArgs_v6_t){0});
}

/* The ProxyOps start when the proxy appends the work (2.27+: every
 * transport); before 2.27 the net transport starts them at its first progress. */
void simNetAppend(simProxy* px, simWork* w) {
  (void)px;
  simComm* c = w->c;
  simPxnPub pub;
  memset(&pub, 0, sizeof pub);
  int n = c->nranks;
  bool anyForeign = false;
  for (int k = 0; k < w->nsub; k++) anyForeign = anyForeign || w->subs[k].foreign;
  int foreignRank = anyForeign && simOpt.procs > 1 ? (c->rank - simOpt.ranksPerProc + n) % n : -1;
  if (anyForeign && foreignRank >= 0) {
    /* real PXN: wait (bounded) for the originating process's publication; its
     * context and task handles are addresses valid only in that process */
    simPxnPub* src = &simShm->pxn[c->slot][foreignRank % (SIM_MAX_RANKS / 4)];
    uint64_t deadline = simNowNs() + (uint64_t)simOpt.hangTimeoutMs * 1000000ull;
    while (atomic_load_explicit(&src->op, memory_order_acquire) < w->opIndex + 1 && simNowNs() < deadline)
      sched_yield();
    pub = *src; /* acquire above orders these reads after the publisher's writes */
    for (int k = 0; k < w->nsub; k++)
      if (w->subs[k].foreign) w->subs[k].ctx = (void*)(uintptr_t)pub.ctx, w->subs[k].pid = (pid_t)pub.pid;
  }
  w->pxnMask = pub.mask;
  w->foreignRank = foreignRank;
  memcpy(w->pxnTask, pub.task, sizeof w->pxnTask);
  for (int k = 0; k < w->nsub; k++) {
    subState* s = &w->subs[k];
    s->plugin = w->plugin;
    if (simQuirk(Q_OLD_PROXYOP_STATES) && !s->copy) continue; /* started at its first progress */
    startOp(w, s);
  }
}

void simNetBegin(simProxy* px, simWork* w) {
  for (int k = 0; k < w->nsub; k++) {
    subState* s = &w->subs[k];
    if (s->copy) continue;
    /* InProgress comes from net.cc's progress at the op's Ready state, when
     * the ops queued before it on its connection are done: the op may have
     * started (ProxyAppend) long before. Copy transports' progress functions
     * call no profiler function at all. */
    if (!simQuirk(Q_OLD_PROXYOP_STATES) && simQuirk(Q_PROXYOP_QUEUED))
      simRecord(s->plugin, &s->op, ncclProfilerProxyOpInProgress_v4, &(ncclProfilerEventStateArgs_v6_t){0});
    s->ib = s->ch % 2 == 0;
    s->linkFree = w->tAll;
    for (int st = 0; st < s->nSteps && st < SIM_STEPS; st++)
      simHeapPush(&px->H, w->tAll + (uint64_t)st * 200, A_STEP_START, w, k, st);
  }
  /* channels without network ProxyOps end after their compute time */
  for (int k = 0; k < w->nk; k++) {
    kchOp* op = &w->kops[k];
    for (int q = 0; q < w->nsub; q++)
      if (w->subs[q].ch == op->ch && w->subs[q].task == op->task && !w->subs[q].foreign && !w->subs[q].copy)
        op->pendingSubs++;
    if (op->pendingSubs == 0) simDeviceChannelDone(px, w, k, w->tAll);
  }
}

static void opStopped(simProxy* px, simWork* w) {
  w->pendingSubs--;
  simProxyWorkDone(px, w);
}

void simNetAbort(simProxy* px, simWork* w) {
  for (int k = 0; k < w->nsub; k++)
    if (!w->subs[k].copy) simHeapPush(&px->H, simNowNs(), A_OP_STOP, w, k, 0);
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

void simNetWriteStats(simProxy* px) {
  for (int i = 0; i < px->nxstats; i++) {
    const xferStat* x = &px->xstats[i];
    simTruthf("\"kind\":\"xfer\",\"comm\":\"0x%016llx\",\"rank\":%d,\"peer\":%d,\"send\":true,\"bytes\":%zu,"
              "\"model_ns\":%llu,\"steps\":%llu,\"unqueued\":%llu,\"on_time\":%llu,\"min_ns\":%llu,"
              "\"max_late_ns\":%llu",
              (unsigned long long)x->comm, x->rank, x->peer, x->bytes, (unsigned long long)simXferNs(x->bytes),
              (unsigned long long)x->steps, (unsigned long long)x->unqueued, (unsigned long long)x->onTime,
              (unsigned long long)x->minNs, (unsigned long long)x->maxLateNs);
  }
}

/* A completion the socket helper thread has not made yet: look again in
 * 1 us. In --fast mode nothing sleeps, so the poll gives the CPU away first:
 * under valgrind, which runs one thread at a time, a spinning poll starves
 * the very thread it waits for. */
static void pollAgain(simProxy* px, int kind, simWork* w, int sub, int step) {
  if (simOpt.fast) sched_yield();
  simHeapPush(&px->H, simNowNs() + 1000, kind, w, sub, step);
}

/* Repeats of a call NCCL makes once per proxy pass until something is ready:
 * a few passes normally, more the first step of an op (the peer, or the
 * kernel, is not there yet), more with --peer-wait-us. */
static int repeats(simComm* c, int st) {
  double u = simRngUniform(&c->rng);
  int r = (int)(u * u * 4.0);
  if (st == 0) r += (int)(simRngUniform(&c->rng) * 6.0);
  if (simOpt.peerWaitUs > 0) r += (int)(simRngUniform(&c->rng) * (double)simOpt.peerWaitUs);
  return r;
}

/* Action argument b of a step action: the step, a repeat count, and whether
 * this is a repeat (A_STEP_START of a receive started again). */
#define STEP_ARG(st, count, again) ((st) | (count) << 16 | (again) << 30)
#define ARG_STEP(b) ((b)&0xFFFF)
#define ARG_COUNT(b) (((b) >> 16) & 0x3FFF)
#define ARG_AGAIN(b) (((b) >> 30) & 1)

/* leakLeft: -1 on the step's first start, else the starts still to come
 * (a start with starts still to come is leaked: truth "leaked":true). */
static void stepStart(simProxy* px, simWork* w, subState* s, int st, int leakLeft) {
  simComm* c = w->c;
  int slot = st % SIM_STEPS;
  simEvent* step = &s->steps[slot];
  const simPlugin* p = s->plugin;
  bool leaks = !s->isSend && simQuirk(Q_RECV_STEP_LEAK);
  /* NCCL starts a receive's steps in order, one a pass (its sub->posted):
   * while an earlier step's post has not gone out, this one is not started */
  if (leaks && leakLeft < 0 && st > s->posted) {
    simHeapPush(&px->H, simNowNs() + PASS_NS, A_STEP_START, w, (int)(s - w->subs), STEP_ARG(st, 0, 0));
    return;
  }
  if (st == 0 && leakLeft < 0 && simQuirk(Q_OLD_PROXYOP_STATES)) startOp(w, s);
  memset(step, 0, sizeof *step);
  /* how many times this step is started again, decided before its first
   * start so that the truth marks that one leaked too */
  if (leaks && leakLeft < 0) leakLeft = repeats(c, st) / 2;
  bool stepOn = p && !s->silent && (simSubMask(w, s) & (ncclProfileProxyStep | ncclProfileNetPlugin)) &&
                (s->op.h || !simQuirk(Q_STEP_NEEDS_OP));
  if (stepOn) {
    char key[128];
    ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileProxyStep, s->op.h, s->rank);
    d.proxyStep.step = st;
    snprintf(key, sizeof key, "\"channel\":%d,\"step\":%d,\"send\":%d%s", s->ch, st, s->isSend,
             leakLeft > 0 ? ",\"leaked\":true" : "");
    simStart(p, s->ctx, step, &s->op, &d, s->foreign, s->pid, key);
  }
  if (leaks) {
    /* irecv not ready yet (or the registered buffer not published): NCCL
     * starts the same step again on its next pass; this handle is never stopped */
    if (leakLeft > 0) {
      simHeapPush(&px->H, simNowNs() + PASS_NS, A_STEP_START, w, (int)(s - w->subs), STEP_ARG(st, leakLeft - 1, 1));
      return;
    }
  }
  if (st + 1 > s->posted) s->posted = st + 1;
  size_t b = stepBytes(s, st);
  if (s->isSend) {
    oldOpState(px, s, ncclProfilerProxyOpSendPosted, st + 1, 0);
    stepState(px, s, step, st, ncclProfilerProxyStepSendGPUWait);
    simHeapPush(&px->H, u64max(chunkReady(w->tAll, st), simNowNs()), A_SEND_PEER, w, (int)(s - w->subs),
                STEP_ARG(st, simQuirk(Q_SEND_PEER_REPEAT) ? repeats(c, st) : 0, 0));
  } else {
    /* irecv: the IB plugin's NetPlugin event starts inside it; then RecvWait */
    simNetPluginStart(px, c, simSubMask(w, s), s, st, b);
    stepState(px, s, step, st, ncclProfilerProxyStepRecvWait);
    oldOpState(px, s, ncclProfilerProxyOpRecvPosted, st + 1, 0);
    /* the sender's data leaves once it is ready and the link is free */
    uint64_t now = simNowNs();
    uint64_t arrive = u64max(u64max(chunkReady(w->tAll, st) + 500, s->linkFree), now) + simXferNs(b);
    s->linkFree = arrive;
    s->due[slot] = arrive;
    simHeapPush(&px->H, simNetPluginStopAt(s, now, arrive), A_NET_STOP, w, (int)(s - w->subs), st);
    simHeapPush(&px->H, arrive, A_RECV_ARRIVE, w, (int)(s - w->subs), st);
  }
}

void simNetAction(simProxy* px, const simAction* x) {
  simWork* w = x->w;
  simComm* c = w->c;
  subState* s = &w->subs[x->a];
  int st = ARG_STEP(x->b), more = ARG_COUNT(x->b);
  int slot = st % SIM_STEPS;
  simEvent* step = &s->steps[slot];
  size_t b = stepBytes(s, st);
  const simPlugin* p = s->plugin;
  switch (x->kind) {
  case A_STEP_START:
    stepStart(px, w, s, st, ARG_AGAIN(x->b) ? more : -1);
    break;
  case A_SEND_PEER:
    stepState(px, s, step, st, ncclProfilerProxyStepSendPeerWait_v4);
    oldOpState(px, s, ncclProfilerProxyOpSendRemFifoWait, st + 1, 0);
    if (more > 0) { /* isend returned NULL: the receiver is not ready; next pass, again */
      simHeapPush(&px->H, simNowNs() + PASS_NS, A_SEND_PEER, w, x->a, STEP_ARG(st, more - 1, 0));
      break;
    }
    simHeapPush(&px->H, simNowNs() + 500, A_SEND_WAIT, w, x->a, st); /* the peer's buffer is free */
    break;
  case A_SEND_WAIT: {
    /* isend: the IB plugin's NetPlugin event starts inside it; SendWait once it is posted */
    if (s->ib) simNetPluginStart(px, c, simSubMask(w, s), s, st, b);
    uint64_t a0 = simNowNs();
    stepState(px, s, step, st, ncclProfilerProxyStepSendWait);
    oldOpState(px, s, ncclProfilerProxyOpSendTransmitted, st + 1, b);
    uint64_t a1 = simNowNs();
    if (!s->ib)
      simNetPluginStart(px, c, simSubMask(w, s), s, st, b); /* the socket plugin picks the task up in test() */
    /* The plugin stamped SendWait in [a0, a1]. Transfer time is measured
     * from there, so the stop is scheduled from a0 when that window is
     * short, else from a1: a disturbed call lengthens the interval, never
     * shortens it. */
    s->waitTight[slot] = a1 - a0 <= SIM_CALL_SLOP_NS;
    s->waitAt[slot] = s->waitTight[slot] ? a0 : a1;
    uint64_t due = u64max(s->waitAt[slot], s->linkFree) + simXferNs(b);
    s->linkFree = due;
    s->due[slot] = due;
    simHeapPush(&px->H, simNetPluginStopAt(s, a1, due), A_NET_STOP, w, x->a, st);
    simHeapPush(&px->H, due, A_STEP_STOP, w, x->a, st);
    break;
  }
  case A_NET_STOP: simNetPluginStop(px, s, st); break;
  case A_RECV_ARRIVE:
    if (!simNetPluginDone(px, s, st)) {
      pollAgain(px, A_RECV_ARRIVE, w, x->a, st);
      break;
    }
    simNetPluginStopAgain(s, st);
    stepState(px, s, step, st, ncclProfilerProxyStepRecvFlushWait);
    oldOpState(px, s, ncclProfilerProxyOpRecvReceived, st + 1, b);
    simHeapPush(&px->H, simNowNs() + 1500, A_RECV_FLUSHED, w, x->a, st);
    break;
  case A_RECV_FLUSHED:
    stepState(px, s, step, st, ncclProfilerProxyStepRecvGPUWait);
    oldOpState(px, s, ncclProfilerProxyOpRecvTransmitted, st + 1, 0);
    simHeapPush(&px->H, simNowNs() + 2000, A_STEP_STOP, w, x->a, st); /* the GPU consumes the chunk */
    break;
  case A_STEP_STOP: {
    if (s->isSend && !simNetPluginDone(px, s, st)) {
      pollAgain(px, A_STEP_STOP, w, x->a, st);
      break;
    }
    if (s->isSend) simNetPluginStopAgain(s, st);
    uint64_t now = simNowNs();
    oldOpState(px, s, s->isSend ? ncclProfilerProxyOpSendDone : ncclProfilerProxyOpRecvDone, st + 1, 0);
    simStop(p, step);
    /* the step that used this request slot last is what a socket helper thread keeps as its parent */
    if (simOpt.socketThreads) px->poolStaleStep[slot] = *step;
    step->h = NULL;
    if (s->isSend && !s->foreign) xferNote(px, c, s, st, now);
    s->stepsDone++;
    if (st + SIM_STEPS < s->nSteps)
      simHeapPush(&px->H, u64max(w->tAll + (uint64_t)(st + SIM_STEPS) * 200, simNowNs()), A_STEP_START, w, x->a,
                  st + SIM_STEPS);
    if (s->stepsDone == s->nSteps) {
      s->tLast = now;
      simHeapPush(&px->H, now + 300, A_OP_STOP, w, x->a, 0);
      for (int k = 0; k < w->nk && !s->foreign; k++) {
        kchOp* op = &w->kops[k];
        if (op->ch != s->ch || op->task != s->task) continue;
        op->lastStop = u64max(op->lastStop, now);
        if (--op->pendingSubs == 0) simDeviceChannelDone(px, w, k, op->lastStop);
      }
    }
    break;
  }
  case A_OP_STOP:
    if (s->stopped) break;
    s->stopped = true;
    for (int q = 0; q < SIM_STEPS; q++) {
      /* every NetPlugin request of the op is done, also a stop still queued on the helper */
      simNetPluginFinish(px, s, q);
      if (s->steps[q].h) simStop(p, &s->steps[q]), s->steps[q].h = NULL;
    }
    simStop(p, &s->op);
    s->op.h = NULL;
    opStopped(px, w);
    break;
  default:
    break;
  }
}
