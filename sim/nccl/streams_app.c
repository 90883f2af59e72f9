/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: what NCCL's application-side code emits for one group.
 *
 * Runs on the application thread of a rank; the launch part runs on an async
 * thread for a nonblocking communicator, and graph replays on a
 * CUDA-host-callback-like thread. Order, as in NCCL 2.28+ (enqueue.cc,
 * group.cc): GroupApi start, state 23, {CollApi|P2pApi start, stop}*,
 * state 24, [connection setup on the first launch], KernelLaunch start, the
 * launch call, KernelLaunch stop, Group start, {Coll|P2p start}*, post the
 * proxy work, {Coll|P2p stop}*, Group stop, GroupApi stop (nonblocking: right
 * after the launch thread is spawned, before any of the launch events).
 * The application does not wait for the GPU unless its scenario says so
 * (--async-depth). Releases before 2.28 emit no API or KernelLaunch events;
 * their gating, seqNumber and mask rules follow the personality.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_shared.h"

/* The call's user tag in its truth key (v7), when it has one. */
static void simTagTruth(char* key, size_t n, uint64_t tag) {
  size_t len = strlen(key);
  if (tag && len < n) snprintf(key + len, n - len, ",\"tag\":%llu", (unsigned long long)tag);
}

static bool isP2p(int f) { return f == SIM_FUNC_SEND || f == SIM_FUNC_RECV; }

/* fake device buffers: stable per rank and task index, look like cudaMalloc'd */
static void* fakeBuf(simComm* c, int i, int which) {
  return (void*)(uintptr_t)(0x7f0000000000ull + ((uint64_t)c->rank << 32) + ((uint64_t)i << 20) +
                            ((uint64_t)which << 12));
}

static const char* algoFor(size_t bytes) { return bytes < 65536 ? "TREE" : "RING"; }
static const char* protoFor(size_t bytes) { return bytes < 16384 ? "LL" : bytes < 262144 ? "LL128" : "SIMPLE"; }

static int eventRank(const simComm* c) { return simQuirk(Q_EVENT_RANK_ZERO) ? 0 : c->rank; }

/* Tasks that emit no Coll and have no profiler op: symmetric-memory
 * collectives (2.28+) and Broadcasts run as AllGatherV (2.29+). */
static bool apiOnly(const simTask* t) {
  return (t->sym && simQuirk(Q_SYMMETRIC)) || (t->func == SIM_FUNC_BROADCAST && simQuirk(Q_AGV_BCAST));
}

/* NCCL's gates for Group and Coll/P2p, per release (enqueue.cc/profiler.cc). */
static bool groupGate(int mask) {
  if (simNcclCur.minor <= 25)
    return mask & (ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep);
  return mask & simTypeGate(0);
}
static bool taskGate(int mask, bool p2p, const simEvent* group) {
  if (simNcclCur.minor <= 27 && !group->h) return false; /* before 2.28: only under a Group handle */
  if (simNcclCur.minor <= 25) return mask & (ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileColl);
  if (simNcclCur.minor <= 27 && p2p)
    return mask & (ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileKernelCh);
  return mask & simTypeGate(p2p ? 2 : 1);
}

/* Does the plan have proxy ops (network, copy transport, or a profiler op per
 * channel when KernelCh is on)? Only then does a captured graph call the host
 * at every replay. */
static bool planHasProxyOps(const simComm* c, const simGroupSpec* g, int mask) {
  if (c->plugin && (mask & ncclProfileKernelCh) && simNcclCur.nativeAbi >= 3) return true;
  int n = c->nranks, rpn = (n + c->nNodes - 1) / c->nNodes;
  bool multiNode = c->nNodes > 1 && n > rpn;
  for (int i = 0; i < g->nTasks; i++) {
    const simTask* t = &g->tasks[i];
    if (t->sym && simQuirk(Q_SYMMETRIC)) continue;
    if (isP2p(t->func) && t->peer == c->rank) continue;
    if (multiNode || simOpt.copyProxy) return true;
  }
  return false;
}

typedef struct {
  simComm* c;
  simGroupSpec* g;
  int mask;
  int replays;
  bool hostEvents; /* replays call the host (plan with proxy ops) */
} replayArg;

/* The host task: Group, Coll/P2p starts, proxy work, stops. Returns the
 * posted work (post false: a graph capture, the events alone, no work). */
static simWork* hostPlanTask(simComm* c, simGroupSpec* g, int mask, bool replay, bool emit, bool post) {
  const simPlugin* p = emit ? c->plugin : NULL;
  simEvent group = {0};
  char key[256];
  if (p && groupGate(mask)) {
    ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileGroup, NULL, eventRank(c));
    snprintf(key, sizeof key, "\"comm\":\"0x%016llx\"", (unsigned long long)c->commId);
    simStart(p, c->ctx, &group, NULL, &d, false, getpid(), key);
  }
  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    memset(&t->task, 0, sizeof t->task);
    if (apiOnly(t)) continue; /* no Coll, no seqNumber (symmetric, AllGatherV Broadcast) */
    bool p2p = isP2p(t->func);
    bool emitted = p && taskGate(t->mask, p2p, &group);
    t->seq = c->seq[t->func];
    if (emitted) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.rank = c->rank;
      d.parentObj = simQuirk(Q_API_EVENTS) ? t->api.h : NULL;
      if (p2p) {
        d.type = ncclProfileP2p;
        d.p2p.func = t->func == SIM_FUNC_SEND ? "Send" : "Recv";
        d.p2p.buff = fakeBuf(c, i, 0);
        d.p2p.datatype = t->dtype;
        d.p2p.count = t->count;
        d.p2p.peer = t->peer;
        d.p2p.nChannels = (uint8_t)t->nChannels;
        d.p2p.parentGroup = group.h;
        snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"func\":\"%s\",\"peer\":%d,\"replay\":%s",
                 (unsigned long long)c->commId, d.p2p.func, t->peer, replay ? "true" : "false");
      } else {
        d.type = ncclProfileColl;
        d.coll.seqNumber = t->seq;
        d.coll.func = t->dtype ? simFuncName(t->func) : NULL; /* nasty: NULL strings together */
        d.coll.sendBuff = fakeBuf(c, i, 0);
        d.coll.recvBuff = fakeBuf(c, i, 1);
        d.coll.count = t->count;
        d.coll.root = t->root;
        d.coll.datatype = t->dtype;
        d.coll.nChannels = (uint8_t)t->nChannels;
        d.coll.nWarps = 16;
        d.coll.algo = t->dtype ? algoFor(t->bytes) : NULL;
        d.coll.proto = t->dtype ? protoFor(t->bytes) : NULL;
        d.coll.parentGroup = group.h;
        snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"func\":\"%s\",\"seq\":%llu,\"replay\":%s",
                 (unsigned long long)c->commId, simFuncName(t->func), (unsigned long long)t->seq,
                 replay ? "true" : "false");
      }
      const simEvent* parent = p->version <= 4 ? &group : &t->api;
      if (!parent->serial) parent = NULL;
      simV7Next.userTag = t->tag;
      if (!p2p && t->sym && simQuirk(Q_SYM_COLL_EVENTS)) {
        /* src/plugin/profiler.cc: the symmetric kernel's name as variant, algo what follows its '_', no proto */
        simV7Next.isSymColl = true;
        simV7Next.kernelVariant = "AllReduce_AGxLL_R";
        d.coll.algo = "AGxLL_R";
        d.coll.proto = "";
      }
      simTagTruth(key, sizeof key, t->tag);
      simStart(p, c->ctx, &t->task, parent, &d, false, getpid(), key);
    }
    /* seqNumber: before 2.26 counted per emitted Coll (graph replays too);
     * since, every eager collective, and a captured one only with KernelCh */
    bool bump = simQuirk(Q_SEQ_AFTER_EMIT) ? emitted && !p2p
                                           : !g->graphCaptured || (p && (t->mask & ncclProfileKernelCh) && emitted);
    if (bump) c->seq[t->func]++;
  }
  simWork* w = NULL;
  if (post) {
    /* NCCL's own work for the plan's profiler proxy ops (uploaded and posted with the plan) */
    simCost cost;
    simCostCaller(c, g, !emit, &cost);
    w = simWorkNew(c, g, mask, c->opCount++, replay);
    simWorkSetCost(w, &cost);
    if (!emit) simWorkSetDeviceOnly(w);
    simProxyPost(c->proxy, w);
  }
  for (int i = 0; i < g->nTasks; i++) simStop(p, &g->tasks[i].task);
  simStop(p, &group);
  return w;
}

static void* replayMain(void* arg) {
  replayArg* a = arg;
  simTruthThreadBegin("cuda_cb");
  for (int r = 0; r < a->replays; r++) {
    /* a replay of a plan without proxy ops runs on the GPU without a host callback */
    simWork* w = hostPlanTask(a->c, a->g, a->mask, true, a->hostEvents, true);
    int aborted = simWorkWait(w);
    simWorkRelease(w);
    if (aborted) break;
  }
  simTruthThreadEnd();
  return NULL;
}

static void runCe(simComm* c, simGroupSpec* g) {
  const simPlugin* p = c->plugin;
  char key[256];
  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    int mask = __atomic_load_n(&simEventMask, __ATOMIC_RELAXED); /* read per CE op */
    simEvent ce = {0};
    uint64_t t0 = simNowNs();
    if (p && (mask & NCCL_PROFILE_CE_MASK) && simQuirk(Q_CE_EVENTS)) {
      ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileCeColl, t->api.h, c->rank);
      d.ceColl.seqNumber = t->ceSeq;
      d.ceColl.func = simFuncName(t->func);
      d.ceColl.sendBuff = fakeBuf(c, i, 0);
      d.ceColl.recvBuff = fakeBuf(c, i, 1);
      d.ceColl.count = t->count;
      d.ceColl.root = t->root;
      d.ceColl.datatype = t->dtype;
      d.ceColl.syncStrategy = "UC";
      d.ceColl.ceSeqNum = (uint32_t)t->ceSeq;
      d.ceColl.stream = (void*)(uintptr_t)0x5000;
      simV7Next.userTag = t->tag;
      snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"func\":\"%s\",\"ce_seq\":%llu",
               (unsigned long long)c->commId, d.ceColl.func, (unsigned long long)t->ceSeq);
      simStart(p, c->ctx, &ce, t->api.serial ? &t->api : NULL, &d, false, getpid(), key);
    }
    int nBatches = 2;
    for (int phase = 0; phase < 2 + nBatches; phase++) {
      bool sync = phase == 0 || phase == nBatches + 1;
      int bit = sync ? ncclProfileCeSync : ncclProfileCeBatch;
      simEvent ev = {0};
      if (p && ce.h && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & bit)) {
        ncclProfilerEventDescr_v6_t d = simDescr((uint64_t)bit, ce.h, c->rank);
        if (sync) {
          d.ceCollSync.isComplete = phase != 0;
          d.ceCollSync.nRanks = c->nranks;
        } else {
          d.ceCollBatch.numOps = c->nranks;
          d.ceCollBatch.totalBytes = t->bytes / (size_t)nBatches;
          d.ceCollBatch.useIntraSync = false;
        }
        snprintf(key, sizeof key, "\"phase\":%d", phase);
        simStart(p, c->ctx, &ev, &ce, &d, false, getpid(), key);
      }
      simSleepUntil(simNowNs() + simXferNs(t->bytes / (size_t)(nBatches + 1)) / 4);
      simStop(p, &ev);
    }
    simStop(p, &ce);
    simTruthf("\"kind\":\"coll\",\"comm\":\"0x%016llx\",\"rank\":%d,\"func\":\"%s\",\"seq\":%llu,\"ce\":true,"
              "\"bytes\":%zu,\"t_enqueue\":%llu,\"t_start\":%llu,\"t_end\":%llu,\"aborted\":false,\"emitted\":%s",
              (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->ceSeq, t->bytes,
              (unsigned long long)t0, (unsigned long long)t0, (unsigned long long)simNowNs(),
              ce.serial ? "true" : "false");
  }
}

/* The app keeps the works it posted; it waits for the oldest beyond its depth. */
static int track(simComm* c, simWork* w, int depth) {
  if (c->outTail)
    simWorkLink(c->outTail, w);
  else
    c->outHead = w;
  c->outTail = w;
  c->nOut++;
  int aborted = 0;
  while (c->nOut > depth) {
    simWork* old = c->outHead;
    c->outHead = simWorkNextOut(old);
    if (!c->outHead) c->outTail = NULL;
    c->nOut--;
    aborted |= simWorkWait(old);
    simWorkRelease(old);
  }
  return aborted;
}

int simCommDrain(simComm* c) {
  int aborted = 0;
  while (c->outHead) {
    simWork* old = c->outHead;
    c->outHead = simWorkNextOut(old);
    aborted |= simWorkWait(old);
    simWorkRelease(old);
  }
  /* KernelCh events come in after the GPU finished, on the proxy's polling:
   * wait for them, until the device is quiet (an op still waiting for its
   * ring slot then waits for good: the proxy abandons it when destroyed), or
   * a bound as a safety net */
  uint64_t deadline = simNowNs() + 10000000000ull + (uint64_t)(simOpt.kchLagMs * 2e6);
  while (atomic_load_explicit(&c->unsettled, memory_order_acquire) > 0 && simNowNs() < deadline) {
    if (simDeviceQuiet(c->dev)) {
      usleep(1000); /* quiet twice, 1 ms apart: no poll was in flight between the loads */
      if (simDeviceQuiet(c->dev)) break;
    }
    usleep(200);
  }
  c->outTail = NULL;
  c->nOut = 0;
  return aborted;
}

typedef struct {
  simComm* c;
  simGroupSpec* g;
  int mask;
  const simEvent* gapi;
  simWork* posted; /* out: the eager plan's work, or NULL */
  _Atomic int go;  /* nonblocking: the application thread returned from ncclGroupEnd */
} launchArg;

/* groupLaunch: connection setup, then the launch of the plan (the caller's
 * thread, or the nonblocking communicator's async thread). */
static void launch(launchArg* a) {
  simComm* c = a->c;
  simGroupSpec* g = a->g;
  const simPlugin* p = c->plugin;
  int mask = a->mask;
  char key[128];
  if (!c->connected) {
    /* the first collective of a communicator connects its transports (~1 s on real GPUs) */
    simSleepUntil(simNowNs() + (uint64_t)simOpt.connectMs * 1000000ull);
    c->connected = true;
  }
  if (simQuirk(Q_PROFILER_CONNECT) && p && (mask & ncclProfileKernelCh) && !c->profConnected) {
    /* 64 channels x (send, recv) profiler proxy connections, each a blocking round trip */
    simSleepUntil(simNowNs() + 128ull * (uint64_t)simOpt.profConnectUs * 1000ull);
    c->profConnected = true;
  }
  /* kernel work: every task but symmetric ones (their own kernel, no channel work);
   * Coll events: every task but those and AllGatherV Broadcasts */
  bool kernelTasks = false, anyColl = false;
  for (int i = 0; i < g->nTasks; i++) {
    kernelTasks = kernelTasks || !(g->tasks[i].sym && simQuirk(Q_SYMMETRIC));
    anyColl = anyColl || !apiOnly(&g->tasks[i]);
  }
  simEvent kl = {0};
  /* KernelLaunch: only for a plan with a task whose mask is set (an AllGatherV-only plan has none) */
  if (p && anyColl && simQuirk(Q_API_EVENTS) && (mask & ncclProfileKernelLaunch)) {
    ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileKernelLaunch, a->gapi->h, eventRank(c));
    d.kernelLaunch.stream = (void*)(uintptr_t)0x5000;
    snprintf(key, sizeof key, "\"comm\":\"0x%016llx\"", (unsigned long long)c->commId);
    simStart(p, c->ctx, &kl, a->gapi->serial ? a->gapi : NULL, &d, false, getpid(), key);
  }
  /* the launch call, which KernelLaunch brackets, begins once its start event
   * returned; the kernel begins a few us into it or later (model.c) */
  g->tLaunch = simNowNs();
  g->tKernel = simKernelStartNs(&c->launchRng, &c->gpu, g->tLaunch);
  simSleepUntil(g->tLaunch + simLaunchCallNs(&c->launchRng));
  simStop(p, &kl);
  if (!kernelTasks) return;
  if (g->graphCaptured) {
    /* capture: the plan runs at each replay, from the host-callback thread when
     * it has proxy ops; without, its Group/Coll fire once now (2.27+) or never */
    bool proxyOps = planHasProxyOps(c, g, mask);
    if (!proxyOps && simQuirk(Q_GRAPH_ONCE)) hostPlanTask(c, g, mask, false, true, false);
    replayArg r = {c, g, mask, g->replays, proxyOps};
    pthread_t th;
    simThreadCreate(&th, replayMain, &r);
    simThreadJoin(th);
    return;
  }
  a->posted = hostPlanTask(c, g, mask, false, true, true);
}

static void* asyncLaunchMain(void* arg) {
  launchArg* a = arg;
  simTruthThreadBegin("async");
  /* NCCL's async job starts with groupLaunch's own work; its first event
   * comes after the application's GroupApi stop (the usual order) */
  while (!atomic_load_explicit(&a->go, memory_order_acquire)) sched_yield();
  launch(a);
  simTruthThreadEnd();
  return NULL;
}

int simRunGroup(simComm* c, simGroupSpec* g) {
  const simPlugin* p = c->plugin;
  bool api = simQuirk(Q_API_EVENTS);
  int mask = __atomic_load_n(&simEventMask, __ATOMIC_RELAXED); /* once per group (2.23-2.25) */
  int planMask = g->nTasks ? 0 : mask; /* the plan's events (Group, KernelLaunch): any of its tasks' bits */
  simEvent gapi = {0};
  char key[256];
  if (p && api && (mask & simTypeGate(8))) {
    ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileGroupApi, NULL, eventRank(c));
    d.groupApi.graphCaptured = g->graphCaptured;
    d.groupApi.groupDepth = 1;
    snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"ntasks\":%d", (unsigned long long)c->commId, g->nTasks);
    simStart(p, c->ctx, &gapi, NULL, &d, false, getpid(), key);
  }
  simRecord(p, &gapi, ncclProfilerGroupStartApiStop, NULL);
  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    memset(&t->api, 0, sizeof t->api);
    /* 2.26+: the mask is read at every task append (enqueue.cc, t->eActivationMask); a run-time change
     * applies from the next task; the task keeps the value it read (its Coll, proxy ops and kernel work) */
    if (simQuirk(Q_MASK_PER_TASK)) mask = __atomic_load_n(&simEventMask, __ATOMIC_RELAXED);
    t->mask = mask;
    planMask |= mask;
    /* v7: the tag the application set in the call's config travels with every event of the call */
    t->tag = simOpt.userTags > 0 ? 1 + c->apiCount % (uint64_t)simOpt.userTags : 0;
    c->apiCount++;
    bool p2p = isP2p(t->func);
    if (p && api && (mask & simTypeGate(p2p ? 10 : 9))) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.parentObj = gapi.h;
      d.rank = eventRank(c);
      if (p2p) {
        d.type = ncclProfileP2pApi;
        d.p2pApi.func = t->func == SIM_FUNC_SEND ? "Send" : "Recv";
        d.p2pApi.count = t->count;
        d.p2pApi.datatype = t->dtype;
        d.p2pApi.stream = (void*)(uintptr_t)0x5000;
        d.p2pApi.graphCaptured = g->graphCaptured;
      } else {
        d.type = ncclProfileCollApi;
        d.collApi.func = t->dtype ? simFuncName(t->func) : NULL;
        d.collApi.count = t->count;
        d.collApi.datatype = t->dtype;
        d.collApi.root = t->root;
        d.collApi.stream = (void*)(uintptr_t)0x5000;
        d.collApi.graphCaptured = g->graphCaptured;
      }
      snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"func\":\"%s\",\"index\":%d%s",
               (unsigned long long)c->commId, simFuncName(t->func), i, t->sym ? ",\"sym\":true" : "");
      simTagTruth(key, sizeof key, t->tag);
      simV7Next.userTag = t->tag;
      simStart(p, c->ctx, &t->api, gapi.serial ? &gapi : NULL, &d, false, getpid(), key);
    }
    simStop(p, &t->api); /* CollApi/P2pApi end with the API call */
  }
  simRecord(p, &gapi, ncclProfilerGroupEndApiStart, NULL);
  if (g->ce && !api) g->ce = false; /* before 2.28 a copy-engine collective is an ordinary one */
  if (g->ce && api) {
    /* copy-engine collectives: 2.29+ CeColl/CeSync/CeBatch, 2.28 nothing beyond the API events */
    runCe(c, g);
    simStop(p, &gapi);
    return 0;
  }
  launchArg la = {.c = c, .g = g, .mask = planMask, .gapi = &gapi};
  if (c->nonblocking) {
    /* ncclGroupEnd returns ncclInProgress: GroupApi stops before the launch thread's events */
    pthread_t th;
    simThreadCreate(&th, asyncLaunchMain, &la);
    simStop(p, &gapi);
    atomic_store_explicit(&la.go, 1, memory_order_release);
    simThreadJoin(th);
  } else {
    launch(&la);
    simStop(p, &gapi);
  }
  return la.posted ? track(c, la.posted, simOpt.asyncDepth) : 0;
}
