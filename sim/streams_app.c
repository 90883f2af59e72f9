/* ncclscope-sim: what NCCL's application-side code emits for one group.
 *
 * Runs on the application thread of a rank (and, for graph replays, on a
 * CUDA-host-callback-like thread). Order, as in NCCL (launch path where the
 * host task runs on the launching thread after the kernel launch):
 *   GroupApi start, state 23, {CollApi|P2pApi start, stop}*, state 24,
 *   KernelLaunch start, stop, Group start, {Coll|P2p start}*, post proxy work,
 *   {Coll|P2p stop}*, Group stop, GroupApi stop.
 * The mask is read once per outermost group; the snapshot travels with the
 * work to the proxy thread. v6 CE collectives read the mask per CE op.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_shared.h"


static bool isP2p(int f) { return f == SIM_FUNC_SEND || f == SIM_FUNC_RECV; }

/* fake device buffers: stable per rank and task index, look like cudaMalloc'd */
static void* fakeBuf(simComm* c, int i, int which) {
  return (void*)(uintptr_t)(0x7f0000000000ull + ((uint64_t)c->rank << 32) + ((uint64_t)i << 20) +
                            ((uint64_t)which << 12));
}

static const char* algoFor(size_t bytes) { return bytes < 65536 ? "TREE" : "RING"; }
static const char* protoFor(size_t bytes) { return bytes < 16384 ? "LL" : bytes < 262144 ? "LL128" : "SIMPLE"; }

typedef struct {
  simComm* c;
  simGroupSpec* g;
  int mask;
  int replays;
} replayArg;

/* The host task: Group, Coll/P2p starts, proxy work, stops. Returns the work
 * so that the caller can wait for it. */
static simWork* hostPlanTask(simComm* c, simGroupSpec* g, int mask, bool replay) {
  const simPlugin* p = c->plugin;
  simEvent group = {0};
  char key[256];
  if (p && (mask & simTypeGate(0))) {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroup;
    d.rank = c->rank;
    snprintf(key, sizeof key, "\"comm\":\"0x%016llx\"", (unsigned long long)c->commId);
    simStart(p, c->ctx, &group, NULL, &d, false, getpid(), key);
  }
  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    memset(&t->task, 0, sizeof t->task);
    bool p2p = isP2p(t->func);
    /* graph-captured plans bump seqNumber only when KernelCh is on (NCCL's RAS workaround) */
    bool bump = !g->graphCaptured || (p && (mask & ncclProfileKernelCh));
    t->seq = c->seq[t->func];
    if (p && (mask & simTypeGate(p2p ? 2 : 1))) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.rank = c->rank;
      d.parentObj = t->api.h;
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
      if (p->version <= 4 && !group.serial) parent = NULL;
      if (p->version >= 5 && !t->api.serial) parent = NULL;
      simStart(p, c->ctx, &t->task, parent, &d, false, getpid(), key);
    }
    if (bump) c->seq[t->func]++;
  }
  simWork* w = simWorkNew(c, g, mask, c->opCount++, replay);
  simProxyPost(c->proxy, w);
  for (int i = 0; i < g->nTasks; i++) simStop(p, &g->tasks[i].task);
  simStop(p, &group);
  return w;
}

static void* replayMain(void* arg) {
  replayArg* a = arg;
  simTruthThreadBegin("cuda_cb");
  for (int r = 0; r < a->replays; r++) {
    simWork* w = hostPlanTask(a->c, a->g, a->mask, true);
    int aborted = simWorkWait(w);
    simWorkFree(w);
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
    if (p && (mask & NCCL_PROFILE_CE_MASK)) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.type = ncclProfileCeColl;
      d.parentObj = t->api.h;
      d.rank = c->rank;
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
        ncclProfilerEventDescr_v6_t d;
        memset(&d, 0, sizeof d);
        d.type = (uint64_t)bit;
        d.parentObj = ce.h;
        d.rank = c->rank;
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
              "\"bytes\":%zu,\"t_enqueue\":%llu,\"t_start\":%llu,\"t_end\":%llu,\"aborted\":false",
              (unsigned long long)c->commId, c->rank, simFuncName(t->func), (unsigned long long)t->ceSeq, t->bytes,
              (unsigned long long)t0, (unsigned long long)t0, (unsigned long long)simNowNs());
  }
}

int simRunGroup(simComm* c, simGroupSpec* g) {
  const simPlugin* p = c->plugin;
  int mask = __atomic_load_n(&simEventMask, __ATOMIC_RELAXED); /* once per outermost group */
  simEvent gapi = {0};
  char key[256];
  if (p && (mask & simTypeGate(8))) {
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileGroupApi;
    d.rank = c->rank;
    d.groupApi.graphCaptured = g->graphCaptured;
    d.groupApi.groupDepth = 1;
    snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"ntasks\":%d", (unsigned long long)c->commId, g->nTasks);
    simStart(p, c->ctx, &gapi, NULL, &d, false, getpid(), key);
  }
  simRecord(p, &gapi, ncclProfilerGroupStartApiStop, NULL);
  for (int i = 0; i < g->nTasks; i++) {
    simTask* t = &g->tasks[i];
    memset(&t->api, 0, sizeof t->api);
    bool p2p = isP2p(t->func);
    if (p && (mask & simTypeGate(p2p ? 10 : 9))) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.parentObj = gapi.h;
      d.rank = c->rank;
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
      snprintf(key, sizeof key, "\"comm\":\"0x%016llx\",\"func\":\"%s\",\"index\":%d", (unsigned long long)c->commId,
               simFuncName(t->func), i);
      simStart(p, c->ctx, &t->api, gapi.serial ? &gapi : NULL, &d, false, getpid(), key);
    }
    simStop(p, &t->api); /* CollApi/P2pApi end with the API call */
  }
  simRecord(p, &gapi, ncclProfilerGroupEndApiStart, NULL);
  int aborted = 0;
  if (g->ce) {
    runCe(c, g);
  } else {
    simEvent kl = {0};
    if (p && (mask & ncclProfileKernelLaunch)) {
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      d.type = ncclProfileKernelLaunch;
      d.parentObj = gapi.h;
      d.rank = c->rank;
      d.kernelLaunch.stream = (void*)(uintptr_t)0x5000;
      snprintf(key, sizeof key, "\"comm\":\"0x%016llx\"", (unsigned long long)c->commId);
      simStart(p, c->ctx, &kl, gapi.serial ? &gapi : NULL, &d, false, getpid(), key);
    }
    /* the launch call, which KernelLaunch brackets, begins once its start event
     * returned; the kernel begins a few us into it or later (model.c) */
    g->tLaunch = simNowNs();
    g->tKernel = simKernelStartNs(&c->launchRng, &c->gpu, g->tLaunch);
    simSleepUntil(g->tLaunch + simLaunchCallNs(&c->launchRng));
    simStop(p, &kl);
    if (g->graphCaptured) {
      /* capture only: the plan runs at each replay from the host-callback thread */
      replayArg a = {c, g, mask, g->replays};
      pthread_t th;
      simStop(p, &gapi);
      simThreadCreate(&th, replayMain, &a);
      simThreadJoin(th);
    } else {
      simWork* w = hostPlanTask(c, g, mask, false);
      simStop(p, &gapi);
      aborted = simWorkWait(w);
      simWorkFree(w);
    }
    return aborted;
  }
  simStop(p, &gapi);
  return aborted;
}
