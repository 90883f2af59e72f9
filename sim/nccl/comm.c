/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: communicators.
 *
 * simCommInit/simCommFinalize run on the thread that owns the rank (the app
 * thread or the main thread in churn).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_shared.h"

/* What the release does when the plugin's init returns an error (docs/simulator.md). */
static const simPlugin* initFailed(const simPlugin* p, void** ctx, bool* holdsRef) {
  switch (simNcclCur.initFail) {
  case SIM_INITFAIL_GLOBAL_NULL:
    if ((simNcclCur.minor == 24 || simNcclCur.minor == 25) && p->version == 1) return p; /* the v1 shim ignores it */
    /* the global plugin pointer becomes NULL: this and every later communicator
     * is not profiled, live contexts are never finalized, the reference stays */
    simPluginMarkGlobalNull();
    *ctx = NULL;
    return NULL;
  case SIM_INITFAIL_KEEP_CONTEXT:
    if (p->version < simNcclCur.nativeAbi && simPluginLoads() == 1 && *holdsRef) {
      /* a shim fills its function pointers only after a successful first init */
      SIM_ERR("NCCL %s would crash at the first event: the v%d shim's functions are NULL after the plugin's "
              "first init failed", simNcclCur.name, p->version);
      simPluginCrash();
    }
    return p; /* the communicator keeps the context the plugin wrote and gets every event */
  case SIM_INITFAIL_DOUBLE_UNLOAD:
    simPluginDeferClose();
    simPluginRelease(); /* unloaded at once; events go on with the left-over context */
    return p;
  default:
    simPluginRelease();
    *holdsRef = false;
    *ctx = NULL;
    return NULL;
  }
}

const simPlugin* simProfilerInit(void** ctx, uint64_t commId, const char* name, int nNodes, int nranks, int rank,
                                 bool* holdsRef) {
  *ctx = NULL;
  *holdsRef = false;
  const simPlugin* p = simPluginAcquire();
  *holdsRef = simPluginHeld();
  if (!p) return NULL;
  ncclResult_t r = simAdaptInit(p, ctx, commId, &simEventMask, name, nNodes, nranks, rank);
  simTruthf("\"kind\":\"init\",\"comm\":\"0x%016llx\",\"rank\":%d,\"nranks\":%d,\"nnodes\":%d,\"version\":%d,"
            "\"result\":%d,\"mask_after\":%d,\"nccl\":\"%s\"",
            (unsigned long long)commId, rank, nranks, nNodes, p->version, (int)r, simInitMaskAfter, simNcclCur.name);
  return r == ncclSuccess ? p : initFailed(p, ctx, holdsRef);
}

void simProfilerFinalize(const simPlugin* p, void* ctx, uint64_t commId, int rank, bool holdsRef) {
  /* finalize only with a context (2.28+ check it; before, a failed init left none) */
  if (p && ctx && simPluginLive(p)) simAdaptFinalize(p, ctx);
  simTruthf("\"kind\":\"finalize\",\"comm\":\"0x%016llx\",\"rank\":%d", (unsigned long long)commId, rank);
  if (holdsRef) simPluginRelease();
}

int simCommInit(simComm* c, uint64_t commId, const char* name, int slot, int nranks, int rank, int nNodes, int gpu,
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
  simGpuClockInit(&c->gpu, gpu, simOpt.seed);
  c->nonblocking = simOpt.nonblocking;
  c->dev = simDeviceNew();
  simRngSeed(&c->rng, simOpt.seed ^ (commId * 31 + (uint64_t)rank));
  simRngSeed(&c->launchRng, simOpt.seed ^ (commId * 37 + (uint64_t)rank + 0x4c41));
  c->plugin = simProfilerInit(&c->ctx, commId, name, c->nNodes, nranks, rank, &c->holdsRef);
  simTruthf("\"kind\":\"comm\",\"comm\":\"0x%016llx\",\"rank\":%d,\"nranks\":%d,\"gpu\":%d,\"nonblocking\":%s",
            (unsigned long long)commId, rank, nranks, gpu, c->nonblocking ? "true" : "false");
  if (shareProxyWith) {
    c->proxy = shareProxyWith->proxy;
    c->ownsProxy = false;
    simProxyShare(c->proxy, c->dev);
  } else {
    c->proxy = simProxyCreate(c);
    c->ownsProxy = true;
  }
  return 0;
}

/* NCCL's commFree: the proxy goes first when this was its last user (a
 * shared proxy outlives the others), then the plugin's finalize, then the
 * unload. The device model stays with the proxy until it is gone. */
static void commEnd(simComm* c, bool abandon) {
  if (!abandon) simCommDrain(c);
  simProxyRelease(c->proxy, abandon);
  if (abandon) simCommDrain(c); /* the proxy gave up every work in flight */
  c->proxy = NULL;
  c->dev = NULL;
  if (c->plugin || c->holdsRef) simProfilerFinalize(c->plugin, c->ctx, c->commId, c->rank, c->holdsRef);
  c->plugin = NULL;
  c->holdsRef = false;
}

void simCommFinalize(simComm* c) { commEnd(c, false); }

void simCommAbort(simComm* c) { commEnd(c, true); }
