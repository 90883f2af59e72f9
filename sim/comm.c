/* ncclscope-sim: communicators and the cross-process shared area.
 *
 * simCommInit/simCommFinalize run on the thread that owns the rank (the app
 * thread or the main thread in churn). The shared area is an anonymous
 * MAP_SHARED mapping created before fork, so every process sees the same
 * barrier counters (one per communicator slot) and PXN publications.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_shared.h"

simShared* simShm;

void simSharedInit(int procs) {
  (void)procs;
  simShm = mmap(NULL, sizeof(simShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (simShm == MAP_FAILED) {
    SIM_ERR("mmap of the shared area failed");
    exit(2);
  }
  memset(simShm, 0, sizeof *simShm);
}

const char* simFuncName(int f) {
  static const char* n[SIM_NFUNCS] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce",
                                      "SendRecv",  "Send",   "Recv",      "AlltoAll"};
  return f >= 0 && f < SIM_NFUNCS ? n[f] : "Invalid";
}

const simPlugin* simProfilerInit(void** ctx, uint64_t commId, const char* name, int nNodes, int nranks, int rank) {
  *ctx = NULL;
  const simPlugin* p = simPluginAcquire();
  if (!p) return NULL;
  ncclResult_t r = simAdaptInit(p, ctx, commId, &simEventMask, name, nNodes, nranks, rank);
  simTruthf("\"kind\":\"init\",\"comm\":\"0x%016llx\",\"rank\":%d,\"nranks\":%d,\"nnodes\":%d,\"version\":%d,"
            "\"result\":%d,\"mask_after\":%d",
            (unsigned long long)commId, rank, nranks, nNodes, p->version, (int)r,
            __atomic_load_n(&simEventMask, __ATOMIC_RELAXED));
  if (r != ncclSuccess) {
    /* NCCL drops its reference and profiles nothing for this communicator */
    simPluginRelease();
    *ctx = NULL;
    return NULL;
  }
  return p;
}

void simProfilerFinalize(const simPlugin* p, void* ctx, uint64_t commId, int rank) {
  if (ctx) simAdaptFinalize(p, ctx);
  simTruthf("\"kind\":\"finalize\",\"comm\":\"0x%016llx\",\"rank\":%d", (unsigned long long)commId, rank);
  simPluginRelease();
}

int simCommInit(simComm* c, uint64_t commId, const char* name, int slot, int nranks, int rank, int nNodes,
                simComm* shareProxyWith) {
  memset(c, 0, sizeof *c);
  c->commId = commId;
  c->name = name;
  c->slot = slot;
  c->nranks = nranks;
  c->rank = rank;
  /* a communicator spans at most as many nodes as it has ranks (one rank: one node) */
  c->nNodes = nNodes < 1 ? 1 : nNodes > nranks ? nranks : nNodes;
  c->node = rank / ((nranks + c->nNodes - 1) / c->nNodes);
  c->hangAtOp = -1;
  simGpuClockInit(&c->gpu, rank, simOpt.seed);
  simRngSeed(&c->rng, simOpt.seed ^ (commId * 31 + (uint64_t)rank));
  simRngSeed(&c->launchRng, simOpt.seed ^ (commId * 37 + (uint64_t)rank + 0x4c41));
  c->plugin = simProfilerInit(&c->ctx, commId, name, c->nNodes, nranks, rank);
  if (shareProxyWith) {
    c->proxy = shareProxyWith->proxy;
    c->ownsProxy = false;
  } else {
    c->proxy = simProxyCreate(c);
    c->ownsProxy = true;
  }
  return 0;
}

void simCommFinalize(simComm* c) {
  /* proxy goes first (as in NCCL), then the plugin's finalize, then the unload */
  if (c->ownsProxy) simProxyDestroy(c->proxy);
  c->proxy = NULL;
  if (c->plugin) simProfilerFinalize(c->plugin, c->ctx, c->commId, c->rank);
  c->plugin = NULL;
}
