/* ncclscope-sim: per-version translation of the simulator's v6 calls.
 *
 * Mirrors what NCCL does when it finds an older ncclProfiler_vN symbol:
 *  - init argument order per version (v1-v3: ctx, mask; v4: ctx, mask, name,
 *    hash, nNodes, nranks, rank, log; v5/v6: ctx, commId, mask, name, ...);
 *    v4 receives the commId in its commHash argument;
 *  - v5: CE events withheld, CE bits cleared from the mask after init;
 *  - v4 and older: API, KernelLaunch and CE events withheld, Coll/P2p parent =
 *    coll.parentGroup (the legacy Group handle);
 *  - v3: no pTimer; v1-v3 lose KernelChStop, NetPluginUpdate, SendPeerWait
 *    and ProxyOpInProgress, and ProxyStep states arrive with zeroed args;
 *  - v1/v2 lose KernelCh and NetPlugin; v1 gets numeric codes.
 * A withheld start leaves the handle NULL. Runs on any calling thread.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim.h"

/* NCCL's logger as a plugin sees it: with NCCL_DEBUG=WARN (or INFO) the
 * plugin's warnings (and infos) are printed on stderr as "NCCL WARN ...". */
static void simLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags, (void)file, (void)line;
  const char* dbg = getenv("NCCL_DEBUG");
  if (!dbg || !fmt) return;
  int showInfo = !strcasecmp(dbg, "INFO") || !strcasecmp(dbg, "TRACE");
  if (level != NCCL_LOG_WARN && !(showInfo && level == NCCL_LOG_INFO)) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "NCCL %s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
}

int simTypeIndex(uint64_t typeBit) {
  for (int i = 0; i < SIM_NTYPES; i++)
    if (typeBit == (1ull << i)) return i;
  return 0;
}

const char* simTypeName(int t) {
  static const char* names[SIM_NTYPES] = {"Group",  "Coll",       "P2p",    "ProxyOp",  "ProxyStep",
                                          "ProxyCtrl", "KernelCh", "NetPlugin", "GroupApi", "CollApi",
                                          "P2pApi", "KernelLaunch", "CeColl", "CeSync",   "CeBatch"};
  return t >= 0 && t < SIM_NTYPES ? names[t] : "?";
}

ncclResult_t simAdaptInit(const simPlugin* p, void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                          int nranks, int rank) {
  ncclResult_t r;
  switch (p->version) {
  case 6:
    return ((const ncclProfiler_v6_t*)p->api)->init(ctx, commId, mask, commName, nNodes, nranks, rank, simLog);
  case 5:
    r = ((const ncclProfiler_v5_t*)p->api)->init(ctx, commId, mask, commName, nNodes, nranks, rank, simLog);
    if (r == ncclSuccess) __atomic_and_fetch(mask, ~NCCL_PROFILE_CE_MASK, __ATOMIC_RELAXED); /* NCCL threads read it relaxed */
    return r;
  case 4:
    return ((const ncclProfiler_v4_t*)p->api)->init(ctx, mask, commName, commId, nNodes, nranks, rank, simLog);
  case 3:
    return ((const ncclProfiler_v3_t*)p->api)->init(ctx, mask);
  case 2:
    return ((const ncclProfiler_v2_t*)p->api)->init(ctx, mask);
  default:
    return ((const ncclProfiler_v1_t*)p->api)->init(ctx, mask);
  }
}

/* v1 codes. NCCL's own mapping compares against the strings it passes;
 * anything unmatched falls to the last value (Send, PAT, SIMPLE, Float64).
 * So "AlltoAll" becomes Send and "Unknown" (Uint8, FP8) becomes Float64. */
static uint8_t v1Func(const char* s) {
  static const struct { const char* n; uint8_t v; } m[] = {
      {"AllGather", ncclFuncAllGather_v1}, {"AllReduce", ncclFuncAllReduce_v1}, {"Broadcast", ncclFuncBroadcast_v1},
      {"Recv", ncclFuncRecv_v1},           {"Reduce", ncclFuncReduce_v1},       {"ReduceScatter", ncclFuncReduceScatter_v1},
      {"SendRecv", ncclFuncSendRecv_v1}};
  for (size_t i = 0; s && i < sizeof m / sizeof m[0]; i++)
    if (strcmp(s, m[i].n) == 0) return m[i].v;
  return ncclFuncSend_v1;
}
static uint8_t v1Algo(const char* s) {
  static const char* m[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE"};
  for (uint8_t i = 0; s && i < 6; i++)
    if (strcmp(s, m[i]) == 0) return i;
  return ncclAlgoPat_v1;
}
static uint8_t v1Proto(const char* s) {
  if (s && strcmp(s, "LL") == 0) return ncclProtoLL_v1;
  if (s && strcmp(s, "LL128") == 0) return ncclProtoLL128_v1;
  return ncclProtoSimple_v1;
}
static uint8_t v1Dtype(const char* s) {
  /* ncclUint8 is missing on purpose: NCCL's table has no entry for it. */
  static const struct { const char* n; uint8_t v; } m[] = {
      {"ncclInt8", ncclInt8_v1},       {"ncclInt32", ncclInt32_v1},     {"ncclUint32", ncclUint32_v1},
      {"ncclInt64", ncclInt64_v1},     {"ncclUint64", ncclUint64_v1},   {"ncclFloat16", ncclFloat16_v1},
      {"ncclFloat32", ncclFloat32_v1}, {"ncclBfloat16", ncclBfloat16_v1}};
  for (size_t i = 0; s && i < sizeof m / sizeof m[0]; i++)
    if (strcmp(s, m[i].n) == 0) return m[i].v;
  return ncclFloat64_v1;
}

/* Fields common to v1..v3 descriptors for ProxyOp/ProxyStep (same layout). */
#define COPY_PROXY(dst, src)                              \
  do {                                                    \
    (dst).proxyOp.pid = (src)->proxyOp.pid;               \
    (dst).proxyOp.channelId = (src)->proxyOp.channelId;   \
    (dst).proxyOp.peer = (src)->proxyOp.peer;             \
    (dst).proxyOp.nSteps = (src)->proxyOp.nSteps;         \
    (dst).proxyOp.chunkSize = (src)->proxyOp.chunkSize;   \
    (dst).proxyOp.isSend = (src)->proxyOp.isSend;         \
  } while (0)

static bool startV1(const ncclProfiler_v1_t* api, void* ctx, void** h, const ncclProfilerEventDescr_v6_t* d) {
  ncclProfilerEventDescr_v1_t e;
  memset(&e, 0, sizeof e);
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  switch (d->type) {
  case ncclProfileGroup:
  case ncclProfileProxyCtrl:
    break;
  case ncclProfileColl:
    e.parentObj = d->coll.parentGroup;
    e.coll.seqNumber = d->coll.seqNumber;
    e.coll.func = v1Func(d->coll.func);
    e.coll.sendBuff = d->coll.sendBuff;
    e.coll.recvBuff = d->coll.recvBuff;
    e.coll.count = d->coll.count;
    e.coll.root = d->coll.root;
    e.coll.datatype = v1Dtype(d->coll.datatype);
    e.coll.nMaxChannels = d->coll.nChannels;
    e.coll.nWarps = d->coll.nWarps;
    e.coll.algo = v1Algo(d->coll.algo);
    e.coll.proto = v1Proto(d->coll.proto);
    break;
  case ncclProfileP2p:
    e.parentObj = d->p2p.parentGroup;
    e.p2p.func = v1Func(d->p2p.func);
    e.p2p.buff = d->p2p.buff;
    e.p2p.count = d->p2p.count;
    e.p2p.datatype = v1Dtype(d->p2p.datatype);
    e.p2p.peer = d->p2p.peer;
    break;
  case ncclProfileProxyOp:
    COPY_PROXY(e, d);
    break;
  case ncclProfileProxyStep:
    e.proxyStep.step = d->proxyStep.step;
    break;
  default:
    return false;
  }
  api->startEvent(ctx, h, &e);
  return true;
}

/* v2 and v3 share the string-typed layout except KernelCh/NetPlugin. */
#define FILL_V23(e, d)                                    \
  do {                                                    \
    switch ((d)->type) {                                  \
    case ncclProfileColl:                                 \
      (e).parentObj = (d)->coll.parentGroup;              \
      (e).coll.seqNumber = (d)->coll.seqNumber;           \
      (e).coll.func = (d)->coll.func;                     \
      (e).coll.sendBuff = (d)->coll.sendBuff;             \
      (e).coll.recvBuff = (d)->coll.recvBuff;             \
      (e).coll.count = (d)->coll.count;                   \
      (e).coll.root = (d)->coll.root;                     \
      (e).coll.datatype = (d)->coll.datatype;             \
      (e).coll.nMaxChannels = (d)->coll.nChannels;        \
      (e).coll.nWarps = (d)->coll.nWarps;                 \
      (e).coll.algo = (d)->coll.algo;                     \
      (e).coll.proto = (d)->coll.proto;                   \
      break;                                              \
    case ncclProfileP2p:                                  \
      (e).parentObj = (d)->p2p.parentGroup;               \
      (e).p2p.func = (d)->p2p.func;                       \
      (e).p2p.buff = (d)->p2p.buff;                       \
      (e).p2p.count = (d)->p2p.count;                     \
      (e).p2p.datatype = (d)->p2p.datatype;               \
      (e).p2p.peer = (d)->p2p.peer;                       \
      break;                                              \
    case ncclProfileProxyOp:                              \
      COPY_PROXY(e, d);                                   \
      break;                                              \
    case ncclProfileProxyStep:                            \
      (e).proxyStep.step = (d)->proxyStep.step;           \
      break;                                              \
    default:                                              \
      break;                                              \
    }                                                     \
  } while (0)

static bool startV2(const ncclProfiler_v2_t* api, void* ctx, void** h, const ncclProfilerEventDescr_v6_t* d) {
  ncclProfilerEventDescr_v2_t e;
  memset(&e, 0, sizeof e);
  if (d->type > ncclProfileProxyCtrl) return false;
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  FILL_V23(e, d);
  api->startEvent(ctx, h, &e);
  return true;
}

static bool startV3(const ncclProfiler_v3_t* api, void* ctx, void** h, const ncclProfilerEventDescr_v6_t* d) {
  ncclProfilerEventDescr_v3_t e;
  memset(&e, 0, sizeof e);
  if (d->type > ncclProfileNetPlugin) return false;
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  FILL_V23(e, d);
  if (d->type == ncclProfileKernelCh) e.kernelCh.channelId = d->kernelCh.channelId;
  if (d->type == ncclProfileNetPlugin) {
    e.netPlugin.id = d->netPlugin.id;
    e.netPlugin.data = d->netPlugin.data;
  }
  api->startEvent(ctx, h, &e);
  return true;
}

static bool startV4(const ncclProfiler_v4_t* api, void* ctx, void** h, const ncclProfilerEventDescr_v6_t* d) {
  ncclProfilerEventDescr_v4_t e;
  memset(&e, 0, sizeof e);
  if (d->type > ncclProfileNetPlugin) return false;
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  switch (d->type) {
  case ncclProfileColl:
    e.parentObj = d->coll.parentGroup;
    e.coll.seqNumber = d->coll.seqNumber;
    e.coll.func = d->coll.func;
    e.coll.sendBuff = d->coll.sendBuff;
    e.coll.recvBuff = d->coll.recvBuff;
    e.coll.count = d->coll.count;
    e.coll.root = d->coll.root;
    e.coll.datatype = d->coll.datatype;
    e.coll.nChannels = d->coll.nChannels;
    e.coll.nWarps = d->coll.nWarps;
    e.coll.algo = d->coll.algo;
    e.coll.proto = d->coll.proto;
    break;
  case ncclProfileP2p:
    e.parentObj = d->p2p.parentGroup;
    e.p2p.func = d->p2p.func;
    e.p2p.buff = d->p2p.buff;
    e.p2p.count = d->p2p.count;
    e.p2p.datatype = d->p2p.datatype;
    e.p2p.peer = d->p2p.peer;
    e.p2p.nChannels = d->p2p.nChannels;
    break;
  case ncclProfileProxyOp:
    COPY_PROXY(e, d);
    break;
  case ncclProfileProxyStep:
    e.proxyStep.step = d->proxyStep.step;
    break;
  case ncclProfileKernelCh:
    e.kernelCh.channelId = d->kernelCh.channelId;
    e.kernelCh.pTimer = d->kernelCh.pTimer;
    break;
  case ncclProfileNetPlugin:
    e.netPlugin.id = d->netPlugin.id;
    e.netPlugin.data = d->netPlugin.data;
    break;
  default:
    break;
  }
  api->startEvent(ctx, h, &e);
  return true;
}

bool simAdaptStart(const simPlugin* p, void* ctx, void** h, ncclProfilerEventDescr_v6_t* d) {
  *h = NULL;
  switch (p->version) {
  case 6:
    ((const ncclProfiler_v6_t*)p->api)->startEvent(ctx, h, d);
    return true;
  case 5:
    if (d->type & NCCL_PROFILE_CE_MASK) return false;
    /* v5 and v6 descriptors share the layout of every non-CE member */
    ((const ncclProfiler_v5_t*)p->api)->startEvent(ctx, h, (ncclProfilerEventDescr_v5_t*)(void*)d);
    return true;
  case 4:
    return startV4(p->api, ctx, h, d);
  case 3:
    return startV3(p->api, ctx, h, d);
  case 2:
    return startV2(p->api, ctx, h, d);
  default:
    return startV1(p->api, ctx, h, d);
  }
}

bool simAdaptStop(const simPlugin* p, void* h) {
  /* stopEvent has the same signature in every version */
  ((const ncclProfiler_v1_t*)p->api)->stopEvent(h);
  return true;
}

static bool oldStateKept(int s) {
  return (s >= ncclProfilerProxyCtrlIdle && s <= ncclProfilerProxyCtrlAppendEnd) ||
         (s >= ncclProfilerProxyStepSendGPUWait && s <= ncclProfilerProxyStepRecvGPUWait);
}

bool simAdaptRecord(const simPlugin* p, void* h, int s, ncclProfilerEventStateArgs_v6_t* a) {
  if (p->version == 6) {
    ((const ncclProfiler_v6_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, a);
    return true;
  }
  if (p->version >= 4) {
    ncclProfilerEventStateArgs_v4_t b;
    memset(&b, 0, sizeof b);
    bool isApi = s == ncclProfilerGroupStartApiStop || s == ncclProfilerGroupEndApiStart;
    if ((s >= ncclProfilerProxyStepSendGPUWait && s <= ncclProfilerProxyStepRecvGPUWait) ||
        s == ncclProfilerProxyStepSendPeerWait_v4)
      b.proxyStep.transSize = a ? a->proxyStep.transSize : 0;
    else if (s >= ncclProfilerProxyCtrlIdle && s <= ncclProfilerProxyCtrlAppendEnd)
      b.proxyCtrl.appendedProxyOps = a ? a->proxyCtrl.appendedProxyOps : 0;
    else if (s == ncclProfilerNetPluginUpdate)
      b.netPlugin.data = a ? a->netPlugin.data : NULL;
    else if (s == ncclProfilerKernelChStop)
      b.kernelCh.pTimer = a ? a->kernelCh.pTimer : 0;
    else if (s == ncclProfilerProxyOpInProgress_v4 || (isApi && p->version == 5)) {
      /* no args */
    } else
      return false;
    if (p->version == 5)
      /* NCCL's v5 adapter passes a (non-NULL, uninitialized) args struct even
       * for the GroupApi states; we pass a zeroed one. */
      ((const ncclProfiler_v5_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s,
                                                           (ncclProfilerEventStateArgs_v5_t*)(void*)&b);
    else
      ((const ncclProfiler_v4_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, &b);
    return true;
  }
  if (!oldStateKept(s)) return false;
  ncclProfilerEventStateArgs_v1_t b; /* v1..v3 args share one layout */
  memset(&b, 0, sizeof b);
  if (s >= ncclProfilerProxyCtrlIdle) b.proxyCtrl.appendedProxyOps = a ? a->proxyCtrl.appendedProxyOps : 0;
  ((const ncclProfiler_v1_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, &b);
  return true;
}

void simAdaptFinalize(const simPlugin* p, void* ctx) { ((const ncclProfiler_v1_t*)p->api)->finalize(ctx); }
