/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the GPU of a communicator rank, its profiler ring and the
 * KernelCh events NCCL's proxy derives from it.
 *
 * Runs on the proxy thread. Modelled on NCCL 2.27+ (device/common.h,
 * transport/profiler.cc, proxy.cc):
 *  - Kernels of one communicator run in stream order; a kernel's channels
 *    process their work batches. With coalescing, every work of a batch gets
 *    the batch's start and end time.
 *  - Per channel the device keeps a work counter (every work, profiled or
 *    not) and a 64-slot ring {counter, globaltimer} for started and for
 *    completed works; only works whose task has KernelCh write it.
 *  - The host numbers the works it has a profiler op for (its own counter).
 *    A profiler op waits, FIFO per channel connection, until the ring slot
 *    base % 64 holds a counter >= base, and takes the time found there: the
 *    time of another work when the counters drifted apart (a self send/recv
 *    or an AllGatherV Broadcast is device work without a profiler op) or when
 *    the GPU ran 64 works ahead of the proxy. Start and stop come from two
 *    different proxy passes.
 * Without the ptimer-ring quirk each op takes its own work's times (the ideal
 * model); NCCL 2.26 passes no pTimer at all.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl/proxy.h"

#define PASS_NS 2000ull /* one proxy progress pass while ops are outstanding */

struct simDevice* simDeviceNew(void) {
  struct simDevice* d = calloc(1, sizeof *d);
  if (!d) {
    SIM_ERR("out of memory (device)");
    exit(2);
  }
  return d;
}

void simDeviceFree(struct simDevice* d) {
  for (int c = 0; c < SIM_MAX_CHANNELS; c++) free(d->ch[c].works);
}

static bool isP2p(int f) { return f == SIM_FUNC_SEND || f == SIM_FUNC_RECV; }

/* Tasks that are no kernel work of the channels (their own kernel, or host copies). */
static bool noChannelWork(const simWork* w, const simTask* t) {
  return (t->sym && simQuirk(Q_SYMMETRIC)) || w->g.ce;
}

static simDevWork* devWork(simDevChannel* ch, uint64_t counter) {
  if (counter < ch->firstCounter || counter >= ch->firstCounter + ch->n) return NULL;
  return &ch->works[counter - ch->firstCounter];
}

static uint64_t appendDevWork(simDevChannel* ch, bool enabled, uint64_t opIndex, int task) {
  if (ch->n == ch->cap) {
    /* keep the newest 4096 once there are 8192: the ring only ever shows the latest 64 */
    if (ch->n >= 8192) {
      memmove(ch->works, ch->works + 4096, (ch->n - 4096) * sizeof *ch->works);
      ch->n -= 4096;
      ch->firstCounter += 4096;
    } else {
      ch->cap = ch->cap ? ch->cap * 2 : 64;
      ch->works = realloc(ch->works, ch->cap * sizeof *ch->works);
      if (!ch->works) {
        SIM_ERR("out of memory (device works)");
        exit(2);
      }
    }
  }
  if (ch->n == 0) ch->firstCounter = ch->devCtr + 1;
  uint64_t counter = ++ch->devCtr;
  ch->works[ch->n++] = (simDevWork){.counter = counter, .enabled = enabled, .opIndex = opIndex, .task = task};
  return counter;
}

/* Batches: consecutive collectives of one function (NCCL also needs the
 * same type, op, algorithm and protocol: same in the simulator's groups) or
 * up to 8 P2p works share a batch. Without coalescing, every task is its own. */
static void planBatches(simWork* w) {
  int b = -1, inBatch = 0;
  for (int i = 0; i < w->g.nTasks; i++) {
    const simTask* t = &w->g.tasks[i];
    const simTask* prev = i ? &w->g.tasks[i - 1] : NULL;
    bool join = simQuirk(Q_COALESCE) && prev && !noChannelWork(w, prev) && !noChannelWork(w, t) &&
                (isP2p(t->func) ? isP2p(prev->func) && inBatch < 8 : prev->func == t->func && t->bytes == prev->bytes);
    if (!join) b++, inBatch = 0;
    w->batchOf[i] = b;
    inBatch++;
  }
}

void simDevicePlan(simProxy* px, simWork* w) {
  (void)px;
  simComm* c = w->c;
  struct simDevice* d = c->dev;
  const simPlugin* p = w->plugin;
  w->batchOf = calloc((size_t)(w->g.nTasks ? w->g.nTasks : 1), sizeof *w->batchOf);
  planBatches(w);
  int n = 0;
  for (int i = 0; i < w->g.nTasks; i++)
    if (!noChannelWork(w, &w->g.tasks[i])) n += w->g.tasks[i].nChannels;
  w->kops = calloc((size_t)(n ? n : 1), sizeof *w->kops);
  for (int i = 0; i < w->g.nTasks; i++) {
    const simTask* t = &w->g.tasks[i];
    if (noChannelWork(w, t)) continue;
    bool self = isP2p(t->func) && t->peer == c->rank;
    bool agv = t->func == SIM_FUNC_BROADCAST && simQuirk(Q_AGV_BCAST);
    bool kchInMask = p && (t->mask & ncclProfileKernelCh) && simNcclCur.nativeAbi >= 3;
    /* the device writes the ring for a work whose task has KernelCh; an AllGatherV
     * Broadcast's work is read with another layout: its flag is off */
    bool enabled = kchInMask && !agv && !w->deviceOnly;
    /* NCCL adds a profiler op per channel of every profiled work, except for a
     * self send/recv (no proxy op at all) and the AllGatherV Broadcast */
    bool hasOp = kchInMask && !agv && !w->deviceOnly && !(self && simQuirk(Q_SELF_P2P_DRIFT));
    for (int j = 0; j < t->nChannels; j++) {
      int chIdx = (t->chanBase + j) % SIM_MAX_CHANNELS;
      simDevChannel* ch = &d->ch[chIdx];
      kchOp* k = &w->kops[w->nk++];
      k->w = w, k->task = i, k->ch = chIdx, k->batch = w->batchOf[i];
      k->recvConn = t->func == SIM_FUNC_RECV;
      k->devIndex = (int64_t)appendDevWork(ch, enabled, w->opIndex, i);
      k->hasOp = hasOp;
      if (hasOp) {
        k->base = ++ch->hostCtr;
        if (!simQuirk(Q_PTIMER)) k->base = (uint64_t)k->devIndex; /* ideal: always its own work */
        w->pendingKch++;
      } else if (p && !agv && !w->deviceOnly && !(self && simQuirk(Q_SELF_P2P_DRIFT))) {
        /* a work whose task read a mask without KernelCh: NCCL still counts it
         * on the channel (proxy.cc, incWorkCounter), so the host's count
         * keeps step with the device's across a run-time mask change */
        ++ch->hostCtr;
      }
    }
  }
  w->pendingChannels = w->nk;
}

/* 2.31+ (src/plugin/profiler.cc, ncclProfilerThreadFunc): a thread of NCCL's own polls the rings, sleeping
 * 1 us after a pass that completed something and up to 10 us otherwise: the lag no longer depends on the
 * proxy thread's progress. */
static uint64_t lagNs(simComm* c) {
  if (simQuirk(Q_PROFILER_THREAD)) return 1000 + (uint64_t)(simRngUniform(&c->rng) * 9000.0);
  return simPollLagNs(&c->rng);
}

static void updateQuiet(struct simDevice* d) {
  /* release: pairs with the application's acquire in simDeviceQuiet */
  atomic_store_explicit(&d->quiet, d->pendingPolls == 0 && !d->streamBusy && !d->waitHead, memory_order_release);
}

static void schedulePoll(simProxy* px, struct simDevice* d, int ch, int conn, uint64_t at) {
  d->pendingPolls++;
  updateQuiet(d);
  simHeapPushPoll(&px->H, at, d, ch, conn);
}

bool simDeviceQuiet(struct simDevice* d) { return atomic_load_explicit(&d->quiet, memory_order_acquire); }

/* Profiler ops join their channel connection's FIFO when the work is appended. */
static void queueOps(simProxy* px, simWork* w) {
  struct simDevice* d = w->c->dev;
  for (int k = 0; k < w->nk; k++) {
    kchOp* op = &w->kops[k];
    if (!op->hasOp) continue;
    simDevChannel* ch = &d->ch[op->ch];
    int conn = op->recvConn;
    SIM_FIFO_PUSH(ch->head[conn], ch->tail[conn], op);
    if (ch->head[conn] == op) schedulePoll(px, d, op->ch, conn, simNowNs() + lagNs(w->c));
  }
}

static void startKernelNow(simProxy* px, simWork* w, uint64_t now);

void simDeviceEnqueue(simProxy* px, simWork* w) {
  struct simDevice* d = w->c->dev;
  queueOps(px, w);
  SIM_FIFO_PUSH(d->waitHead, d->waitTail, w);
  if (!d->streamBusy) startKernelNow(px, d->waitHead, simNowNs());
  updateQuiet(d);
}

/* The head of the stream's queue gets the GPU: schedule its kernel start. */
static void startKernelNow(simProxy* px, simWork* w, uint64_t now) {
  simComm* c = w->c;
  struct simDevice* d = c->dev;
  SIM_FIFO_POP(d->waitHead, d->waitTail);
  d->streamBusy = true;
  updateQuiet(d);
  /* from its launch call (streams_app.c), or for a graph replay, whose kernel
   * waits for the host callback that posted it, from now; never before the
   * stream's previous kernel ended; a straggler's later */
  uint64_t t = w->g.tKernel ? w->g.tKernel : simKernelStartNs(&c->rng, &c->gpu, now);
  if (d->streamFree && t < d->streamFree + 1000) t = d->streamFree + 1000;
  t += (uint64_t)c->straggleNs;
  if (simOpt.timesliceUs > 0) t += (uint64_t)(simRngUniform(&c->rng) * simOpt.timesliceUs * 1000.0);
  simHeapPush(&px->H, t, A_KERNEL_START, w, 0, 0);
}

/* Ring writes of one batch-channel at time t (start or end). */
static void ringWrite(simProxy* px, simWork* w, int k, bool end, uint64_t t) {
  simComm* c = w->c;
  struct simDevice* d = c->dev;
  kchOp* op = &w->kops[k];
  simDevChannel* ch = &d->ch[op->ch];
  simDevWork* dw = devWork(ch, (uint64_t)op->devIndex);
  /* the proxy sees a new value in the ring only after its polling lag (a
   * busy or descheduled proxy: milliseconds now and then, --kch-lag-ms) */
  uint64_t seen = t + lagNs(c);
  if (dw) {
    if (end)
      dw->tEnd = t, dw->tsEnd = simGpuTime(&c->gpu, t), dw->seenEnd = seen;
    else
      dw->tStart = t, dw->tsStart = simGpuTime(&c->gpu, t), dw->seenStart = seen;
  }
  for (int conn = 0; conn < 2; conn++)
    if (ch->head[conn]) schedulePoll(px, d, op->ch, conn, seen);
}

static void kernelStart(simProxy* px, simWork* w, uint64_t t) {
  w->tK = t;
  w->kernelStarted = true;
  /* channels begin together (100 ns apart); every work of a batch at the batch's start */
  int chanSeen[SIM_MAX_CHANNELS];
  int nSeen = 0;
  for (int k = 0; k < w->nk; k++) {
    kchOp* op = &w->kops[k];
    int idx = -1;
    for (int q = 0; q < nSeen; q++)
      if (chanSeen[q] == op->ch) idx = q;
    if (idx < 0) idx = nSeen, chanSeen[nSeen++] = op->ch;
    op->tGpuStart = t + (uint64_t)idx * 100 + (uint64_t)op->batch * 100;
    op->e0 = op->tGpuStart + 3000 + simXferNs(w->g.tasks[op->task].bytes / 64 + 1) / 8;
    ringWrite(px, w, k, false, op->tGpuStart);
  }
}

/* A batch-channel is over once every work of the batch on that channel is:
 * all of them get the batch's end. */
static void channelEnded(simProxy* px, simWork* w, int k, uint64_t t) {
  kchOp* op = &w->kops[k];
  if (op->ownEnd) return; /* already ended (an abort after the end) */
  op->ownEnd = t;
  uint64_t end = 0;
  for (int q = 0; q < w->nk; q++) {
    kchOp* o = &w->kops[q];
    if (o->ch != op->ch || o->batch != op->batch) continue;
    if (!o->ownEnd) return; /* a work of the batch still runs */
    if (o->ownEnd > end) end = o->ownEnd;
  }
  for (int q = 0; q < w->nk; q++) {
    kchOp* o = &w->kops[q];
    if (o->ch != op->ch || o->batch != op->batch) continue;
    o->tGpuStop = end;
    ringWrite(px, w, q, true, end);
    w->pendingChannels--;
  }
  if (w->pendingChannels == 0) {
    struct simDevice* d = w->c->dev;
    d->streamFree = end > t ? end : t;
    d->streamBusy = false;
    if (d->waitHead) startKernelNow(px, d->waitHead, d->streamFree);
    updateQuiet(d);
    simProxyWorkDone(px, w);
  }
}

/* The end: every rank's data is done (its channels would end at endAt), so
 * all end at the latest of those. A rank given up as hung, or one that never
 * comes within the hang timeout: this rank ends on its own. Another rank
 * cannot publish a later op's end while this one waits: it would need this
 * rank's kernel past this op's start barrier first. */
void simDeviceEndBarrier(simProxy* px, simWork* w) {
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

/* Channel k's data is done at `at`: it ends after its compute time, or with
 * the other ranks (the end barrier above) once every channel is done:
 * the ranks of a collective finish within microseconds of each other on a
 * real system (each waits for the last one's data), and a rank's own
 * network model alone would scatter them by its proxy thread's scheduling. */
void simDeviceChannelDone(simProxy* px, simWork* w, int k, uint64_t at) {
  kchOp* op = &w->kops[k];
  uint64_t e = op->e0 > at + 1000 ? op->e0 : at + 1000;
  if (w->c->nranks < 2 || !w->arrived) {
    simHeapPush(&px->H, e, A_CH_END, w, k, 0);
    return;
  }
  op->endWant = e;
  if (++w->dataDone == w->nk) simDeviceEndBarrier(px, w);
}

void simDeviceEndAll(simProxy* px, simWork* w, uint64_t t) {
  /* each channel as late as the work's last one: the work's own order (tasks one after another) kept */
  uint64_t own = 0;
  for (int k = 0; k < w->nk; k++)
    if (w->kops[k].endWant > own) own = w->kops[k].endWant;
  uint64_t later = t > own ? t - own : 0;
  for (int k = 0; k < w->nk; k++)
    if (!w->kops[k].ownEnd) simHeapPush(&px->H, w->kops[k].endWant + later, A_CH_END, w, k, 0);
}

void simDeviceAbort(simProxy* px, simWork* w) {
  uint64_t now = simNowNs();
  for (int k = 0; k < w->nk; k++)
    if (!w->kops[k].ownEnd) simHeapPush(&px->H, now, A_CH_END, w, k, 0);
}

/* The ring slot `base % 64` as the proxy sees it at time t: the latest
 * profiled write it can see by then (the highest counter: a later work
 * overwrites the slot). */
static const simDevWork* slotAt(const simDevChannel* ch, uint64_t base, bool end, uint64_t t) {
  if (!ch->n) return NULL;
  /* only works[i] with counter (firstCounter + i) == base mod 64 write this slot */
  uint64_t last = ch->firstCounter + ch->n - 1;
  uint64_t back = (last - base % 64 + 64 * 64) % 64; /* last - back == base (mod 64) */
  for (int64_t i = (int64_t)(ch->n - 1 - back); i >= 0; i -= 64) {
    const simDevWork* dw = &ch->works[i];
    if (!dw->enabled) continue;
    uint64_t wt = end ? dw->seenEnd : dw->seenStart;
    if (wt && wt <= t) return dw;
  }
  return NULL;
}

/* Does op's start (end) show at time t, and with which device work's time? */
static const simDevWork* visible(const simDevChannel* ch, const kchOp* op, bool end, uint64_t t) {
  if (!simQuirk(Q_PTIMER)) {
    const simDevWork* dw = devWork((simDevChannel*)ch, (uint64_t)op->devIndex);
    uint64_t wt = dw ? (end ? dw->seenEnd : dw->seenStart) : 0;
    return wt && wt <= t ? dw : NULL;
  }
  const simDevWork* dw = slotAt(ch, op->base, end, t);
  return dw && dw->counter >= op->base ? dw : NULL;
}

static void kchTruth(const kchOp* op) {
  const simWork* w = op->w;
  const simComm* c = w->c;
  const simTask* t = &w->g.tasks[op->task];
  simTruthf("\"kind\":\"kernel\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"peer\":%d,"
            "\"op\":%llu,\"channel\":%d,\"batch\":%d,\"gpu_start\":%llu,\"gpu_stop\":%llu,\"ptimer_start\":%llu,"
            "\"ptimer_stop\":%llu,\"own_start\":%s,\"own_stop\":%s,\"cb_start\":%llu,\"cb_stop\":%llu,\"replay\":%s",
            (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq, t->peer,
            (unsigned long long)w->opIndex, op->ch, op->batch, (unsigned long long)op->tGpuStart,
            (unsigned long long)op->tGpuStop, (unsigned long long)op->pStart, (unsigned long long)op->pStop,
            op->fromStart == (uint64_t)op->devIndex ? "true" : "false",
            op->fromStop == (uint64_t)op->devIndex ? "true" : "false", (unsigned long long)op->cbStart,
            (unsigned long long)op->cbStop, w->replay ? "true" : "false");
}

static const char* const phaseNames[3] = {"initial_sync", "compute", "final_sync"};

/* The GPU boundaries of op's phases: its start, when every rank had reached the op (the barrier), when this
 * rank's own data and compute were done, its end. */
static void phaseBounds(const kchOp* op, uint64_t b[4]) {
  const simWork* w = op->w;
  uint64_t s = op->tGpuStart, e = op->tGpuStop > s ? op->tGpuStop : s;
  uint64_t all = w->tAll > s ? (w->tAll < e ? w->tAll : e) : s;
  uint64_t own = op->endWant ? op->endWant : op->ownEnd;
  own = own > all ? (own < e ? own : e) : all;
  b[0] = s, b[1] = all, b[2] = own, b[3] = e;
}

/* KernelPhase children of a KernelCh (2.31+, src/plugin/profiler.cc profilerFireKernelPhaseEvents): each
 * phase started, stopped with KernelPhaseStop carrying its end, right before the KernelCh's stop; a phase of
 * zero length is skipped. Truth: one "phase" record per phase the device timed. */
static void phaseEvents(const kchOp* op, const simPlugin* p) {
  const simWork* w = op->w;
  const simComm* c = w->c;
  const simTask* t = &w->g.tasks[op->task];
  uint64_t b[4], g[4];
  phaseBounds(op, b);
  for (int i = 0; i < 4; i++) g[i] = simGpuTime(&c->gpu, b[i]);
  for (int i = 0; i < 3; i++) {
    if (g[i] == g[i + 1]) continue;
    simTruthf(
        "\"kind\":\"phase\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"op\":%llu,"
        "\"channel\":%d,\"phase\":%d,\"name\":\"%s\",\"gpu_start\":%llu,\"gpu_stop\":%llu,\"ptimer_start\":%llu,"
        "\"ptimer_stop\":%llu,\"replay\":%s",
        (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->seq,
        (unsigned long long)w->opIndex, op->ch, i, phaseNames[i], (unsigned long long)b[i],
        (unsigned long long)b[i + 1], (unsigned long long)g[i], (unsigned long long)g[i + 1],
        w->replay ? "true" : "false");
    if (!p || !op->ev.h || !(t->mask & ncclProfileKernelPhase)) continue;
    ncclProfilerEventDescr_v6_t desc;
    memset(&desc, 0, sizeof desc);
    desc.type = ncclProfileKernelPhase;
    desc.rank = simQuirk(Q_EVENT_RANK_ZERO) ? 0 : c->rank;
    desc.parentObj = op->ev.h;
    simV7Next.phaseChannel = (uint8_t)op->ch, simV7Next.phaseId = (uint8_t)i;
    simV7Next.phaseName = phaseNames[i], simV7Next.phasePTimer = g[i];
    char key[160];
    snprintf(key, sizeof key, "\"channel\":%d,\"phase\":%d,\"op\":%llu", op->ch, i, (unsigned long long)w->opIndex);
    simEvent ev;
    simStart(p, w->ctx, &ev, &op->ev, &desc, false, getpid(), key);
    ncclProfilerEventStateArgs_v6_t sa;
    memset(&sa, 0, sizeof sa);
    sa.kernelCh.pTimer = g[i + 1];
    if (ev.h) simRecord(p, &ev, ncclProfilerKernelPhaseStop, &sa);
    simStop(p, &ev);
  }
}

static void opFinished(simProxy* px, kchOp* op) {
  simWork* w = op->w;
  w->pendingKch--;
  simProxyWorkDone(px, w);
}

/* One pass of the proxy over a channel connection: its FIFO's head moves at most one state. */
static void poll(simProxy* px, struct simDevice* d, int chIdx, int conn, uint64_t t) {
  simDevChannel* ch = &d->ch[chIdx];
  kchOp* op = ch->head[conn];
  if (!op) return;
  simWork* w = op->w;
  simComm* c = w->c;
  const simPlugin* p = w->plugin;
  const simDevWork* dw = visible(ch, op, op->state == 1, t);
  if (!dw) return; /* a later ring write schedules the next look */
  char key[192];
  if (op->state == 0) {
    op->pStart = simNcclCur.nativeAbi >= 4 ? dw->tsStart : 0;
    op->fromStart = dw->counter;
    op->cbStart = simNowNs();
    ncclProfilerEventDescr_v6_t desc;
    memset(&desc, 0, sizeof desc);
    desc.type = ncclProfileKernelCh;
    desc.rank = simQuirk(Q_EVENT_RANK_ZERO) ? 0 : c->rank;
    const simEvent* par = &w->g.tasks[op->task].task;
    desc.parentObj = par->h;
    desc.kernelCh.channelId = (uint8_t)op->ch;
    desc.kernelCh.pTimer = op->pStart;
    snprintf(key, sizeof key, "\"channel\":%d,\"ptimer\":%llu,\"op\":%llu", op->ch, (unsigned long long)op->pStart,
             (unsigned long long)w->opIndex);
    simStart(p, w->ctx, &op->ev, par->serial ? par : NULL, &desc, false, getpid(), key);
    op->state = 1;
    schedulePoll(px, d, chIdx, conn, t + PASS_NS); /* the stop is looked for on a later pass */
    return;
  }
  op->pStop = simNcclCur.nativeAbi >= 4 ? dw->tsEnd : 0;
  op->fromStop = dw->counter;
  op->cbStop = simNowNs();
  if (simQuirk(Q_KERNEL_PHASE) && (w->g.tasks[op->task].mask & ncclProfileKernelCh)) phaseEvents(op, p);
  if (op->ev.h && simNcclCur.nativeAbi >= 4) {
    ncclProfilerEventStateArgs_v6_t sa;
    memset(&sa, 0, sizeof sa);
    sa.kernelCh.pTimer = op->pStop;
    simRecord(p, &op->ev, ncclProfilerKernelChStop, &sa);
  }
  simStop(p, &op->ev);
  op->state = 2;
  kchTruth(op);
  SIM_FIFO_POP(ch->head[conn], ch->tail[conn]);
  if (ch->head[conn]) schedulePoll(px, d, chIdx, conn, t + PASS_NS);
  opFinished(px, op);
}

void simDeviceAction(simProxy* px, const simAction* x) {
  switch (x->kind) {
  case A_KERNEL_START:
    kernelStart(px, x->w, x->t);
    simHeapPush(&px->H, x->t, A_BARRIER, x->w, 0, 0);
    break;
  case A_CH_END:
    channelEnded(px, x->w, x->a, x->t);
    break;
  case A_KCH_POLL:
    x->dev->pendingPolls--;
    poll(px, x->dev, x->a, x->b, x->t);
    updateQuiet(x->dev);
    break;
  default:
    break;
  }
}

void simDeviceAbandon(simProxy* px, simWork* w) {
  (void)px;
  struct simDevice* d = w->c->dev;
  for (int k = 0; k < w->nk; k++) {
    kchOp* op = &w->kops[k];
    if (!op->hasOp || op->state >= 2) continue;
    if (!d) break; /* its communicator ended first (a proxy shared with another one): nothing to unlink */
    /* unlink from its FIFO (NCCL's destroy drops the op; its event is never stopped) */
    simDevChannel* ch = &d->ch[op->ch];
    int conn = op->recvConn;
    kchOp** pp = &ch->head[conn];
    kchOp* prev = NULL;
    while (*pp && *pp != op) prev = *pp, pp = &(*pp)->next;
    if (*pp) {
      *pp = op->next;
      if (ch->tail[conn] == op) ch->tail[conn] = prev;
    }
    /* the truth of an op NCCL drops: never started (its ring slot never
     * matched: a stall) or started and never stopped */
    const simTask* t = &w->g.tasks[op->task];
    simTruthf("\"kind\":\"kernel_abandoned\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,"
              "\"op\":%llu,\"channel\":%d,\"started\":%s,\"base\":%llu,\"device_counter\":%lld",
              (unsigned long long)w->c->commId, w->c->rank, simFuncName(t->func), (unsigned long long)t->seq,
              (unsigned long long)w->opIndex, op->ch, op->state == 1 ? "true" : "false", (unsigned long long)op->base,
              (long long)op->devIndex);
    op->state = 3;
    w->pendingKch--;
  }
}
