/* SPDX-License-Identifier: Apache-2.0 */
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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim.h"
#include <pthread.h>

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
  static const char* names[SIM_NTYPES] = {
      "Group",    "Coll",    "P2p",    "ProxyOp",      "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin",
      "GroupApi", "CollApi", "P2pApi", "KernelLaunch", "CeColl",    "CeSync",    "CeBatch",  "KernelPhase"};
  return t >= 0 && t < SIM_NTYPES ? names[t] : "?";
}

const char* simFuncName(int f) {
  static const char* n[SIM_NFUNCS] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce",
                                      "SendRecv",  "Send",   "Recv",      "AlltoAll"};
  return f >= 0 && f < SIM_NFUNCS ? n[f] : "Invalid";
}

static void ctxNote(void* ctx, uint64_t commId, const char* name);

_Thread_local int simInitMaskAfter; /* the mask as this thread's last init left it (sim.h) */

static ncclResult_t initByVersion(const simPlugin* p, void** ctx, uint64_t commId, int* mask, const char* commName,
                                  int nNodes, int nranks, int rank) {
  ncclResult_t r;
  switch (p->version) {
  case 7:
    r = ((const ncclProfiler_v7_t*)p->api)->init(ctx, commId, mask, commName, nNodes, nranks, rank, simLog);
    /* src/plugin/profiler.cc (2.31+), ncclProfilerEnforceMaskDeps: after init, KernelPhase in the mask
     * turns KernelCh on (phases fire only under a KernelCh) */
    if (__atomic_load_n(mask, __ATOMIC_RELAXED) & ncclProfileKernelPhase)
      __atomic_or_fetch(mask, ncclProfileKernelCh, __ATOMIC_RELAXED);
    return r;
  case 6:
    return ((const ncclProfiler_v6_t*)p->api)->init(ctx, commId, mask, commName, nNodes, nranks, rank, simLog);
  case 5:
    r = ((const ncclProfiler_v5_t*)p->api)->init(ctx, commId, mask, commName, nNodes, nranks, rank, simLog);
    /* NCCL threads read it relaxed; the value this init left (another rank's init may write it again at once) */
    simInitMaskAfter = r == ncclSuccess ? __atomic_and_fetch(mask, ~NCCL_PROFILE_CE_MASK, __ATOMIC_RELAXED)
                                        : __atomic_load_n(mask, __ATOMIC_RELAXED);
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

ncclResult_t simAdaptInit(const simPlugin* p, void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes,
                          int nranks, int rank) {
  ncclResult_t r = initByVersion(p, ctx, commId, mask, commName, nNodes, nranks, rank);
  if (p->version != 5) simInitMaskAfter = __atomic_load_n(mask, __ATOMIC_RELAXED);
  if (r == ncclSuccess) ctxNote(*ctx, commId, commName);
  return r;
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

/* What a fill needs besides the v6 descriptor: the communicator's name and
 * hash, which v1..v3 Coll/P2p descriptors carry (NCCL fills them natively;
 * its 2.27+ shims leave them NULL/0), and the v4 shim's garbage. */
typedef struct {
  const ncclProfilerEventDescr_v6_t* d;
  const char* commName;
  uint64_t commHash;
  bool garbageP2pChannels;
} simFillIn;

#define AF_V 1
#define AF_NUMERIC 1
#define AF_NAMEHASH 1
#define AF_KCH_NET 0
#define AF_CHANNELS 0
#include "plugin/adapter_fill.h"
#define AF_V 2
#define AF_NUMERIC 0
#define AF_NAMEHASH 1
#define AF_KCH_NET 0
#define AF_CHANNELS 0
#include "plugin/adapter_fill.h"
#define AF_V 3
#define AF_NUMERIC 0
#define AF_NAMEHASH 1
#define AF_KCH_NET 1
#define AF_CHANNELS 0
#include "plugin/adapter_fill.h"
#define AF_V 4
#define AF_NUMERIC 0
#define AF_NAMEHASH 0
#define AF_KCH_NET 1
#define AF_CHANNELS 1
#include "plugin/adapter_fill.h"

/* The communicators' names and ids by context, for v1..v3 descriptors. */
#define CTX_TABLE 1024
static struct {
  void* ctx;
  uint64_t commId;
  const char* name;
} ctxTable[CTX_TABLE];
static pthread_mutex_t ctxLock = PTHREAD_MUTEX_INITIALIZER;

static void ctxNote(void* ctx, uint64_t commId, const char* name) {
  if (!ctx) return;
  pthread_mutex_lock(&ctxLock);
  size_t i = ((uintptr_t)ctx >> 4) % CTX_TABLE;
  ctxTable[i].ctx = ctx, ctxTable[i].commId = commId, ctxTable[i].name = name;
  pthread_mutex_unlock(&ctxLock);
}

static void ctxLookup(void* ctx, simFillIn* in) {
  pthread_mutex_lock(&ctxLock);
  size_t i = ((uintptr_t)ctx >> 4) % CTX_TABLE;
  if (ctx && ctxTable[i].ctx == ctx) in->commHash = ctxTable[i].commId, in->commName = ctxTable[i].name;
  pthread_mutex_unlock(&ctxLock);
}

/* Is NCCL serving this plugin through a shim (an older version than it speaks)? */
static bool shimmed(const simPlugin* p) { return p->version < simNcclCur.nativeAbi; }

_Thread_local simV7Extra simV7Next;

/* A v7 descriptor: every v6 member is a prefix of its v7 member (v7 appends
 * the user tag, Coll's variant and symmetric flag, and the KernelPhase member). */
static void fillV7(const ncclProfilerEventDescr_v6_t* d, const simV7Extra* x, ncclProfilerEventDescr_v7_t* e) {
  memset(e, 0, sizeof *e);
  e->type = d->type, e->parentObj = d->parentObj, e->rank = d->rank;
  switch (d->type) {
  case ncclProfileCollApi: memcpy(&e->collApi, &d->collApi, sizeof d->collApi), e->collApi.userTag = x->userTag; break;
  case ncclProfileP2pApi: memcpy(&e->p2pApi, &d->p2pApi, sizeof d->p2pApi), e->p2pApi.userTag = x->userTag; break;
  case ncclProfileColl:
    memcpy(&e->coll, &d->coll, sizeof d->coll);
    e->coll.kernelVariant = x->kernelVariant, e->coll.isSymColl = x->isSymColl, e->coll.userTag = x->userTag;
    break;
  case ncclProfileP2p: memcpy(&e->p2p, &d->p2p, sizeof d->p2p), e->p2p.userTag = x->userTag; break;
  case ncclProfileCeColl: memcpy(&e->ceColl, &d->ceColl, sizeof d->ceColl), e->ceColl.userTag = x->userTag; break;
  case ncclProfileKernelPhase:
    e->kernelPhase.channelId = x->phaseChannel, e->kernelPhase.phaseId = x->phaseId;
    e->kernelPhase.phaseName = x->phaseName, e->kernelPhase.pTimer = x->phasePTimer;
    break;
  default:
    _Static_assert(sizeof e->groupApi == sizeof d->groupApi, "v7 keeps v6's members");
    memcpy(&e->groupApi, &d->groupApi, sizeof *d - offsetof(ncclProfilerEventDescr_v6_t, groupApi));
    break;
  }
}

bool simAdaptStart(const simPlugin* p, void* ctx, void** h, ncclProfilerEventDescr_v6_t* d) {
  *h = NULL;
  simV7Extra x = simV7Next;
  memset(&simV7Next, 0, sizeof simV7Next);
  if (p->version < 7 && d->type == ncclProfileKernelPhase) return false; /* no shim passes it on */
  simFillIn in = {.d = d};
  /* 2.27+ shims pass no name and hash; a release speaking v1..v3 natively does */
  if (p->version <= 3 && !shimmed(p)) ctxLookup(ctx, &in);
  switch (p->version) {
  case 7: {
    ncclProfilerEventDescr_v7_t e;
    fillV7(d, &x, &e);
    ((const ncclProfiler_v7_t*)p->api)->startEvent(ctx, h, &e);
    return true;
  }
  case 6:
    ((const ncclProfiler_v6_t*)p->api)->startEvent(ctx, h, d);
    return true;
  case 5:
    if (d->type & NCCL_PROFILE_CE_MASK) return false;
    /* v5 and v6 descriptors share the layout of every non-CE member */
    ((const ncclProfiler_v5_t*)p->api)->startEvent(ctx, h, (ncclProfilerEventDescr_v5_t*)(void*)d);
    return true;
  case 4: {
    ncclProfilerEventDescr_v4_t e;
    in.garbageP2pChannels = shimmed(p) && simQuirk(Q_V4_SHIM_GARBAGE);
    if (!fillV4(&in, &e)) return false;
    ((const ncclProfiler_v4_t*)p->api)->startEvent(ctx, h, &e);
    return true;
  }
  case 3: {
    ncclProfilerEventDescr_v3_t e;
    if (!fillV3(&in, &e)) return false;
    ((const ncclProfiler_v3_t*)p->api)->startEvent(ctx, h, &e);
    return true;
  }
  case 2: {
    ncclProfilerEventDescr_v2_t e;
    if (!fillV2(&in, &e)) return false;
    ((const ncclProfiler_v2_t*)p->api)->startEvent(ctx, h, &e);
    return true;
  }
  default: {
    ncclProfilerEventDescr_v1_t e;
    if (!fillV1(&in, &e)) return false;
    ((const ncclProfiler_v1_t*)p->api)->startEvent(ctx, h, &e);
    return true;
  }
  }
}

bool simAdaptStop(const simPlugin* p, void* h) {
  /* stopEvent has the same signature in every version */
  ((const ncclProfiler_v1_t*)p->api)->stopEvent(h);
  return true;
}

/* A pointer to a struct NCCL never initialised: what a shim passes for
 * states without args. The bytes are not zero, so a plugin that reads them
 * gets garbage, as with NCCL. */
static void* garbageArgs(void) {
  /* never written at run time: shared by every thread without a race */
  static union {
    ncclProfilerEventStateArgs_v6_t a;
    unsigned char b[8];
  } g = {.b = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5}};
  _Static_assert(sizeof g == 8, "the state args are one 8-byte union");
  return &g;
}

static bool proxyStepState(int s) {
  return (s >= ncclProfilerProxyStepSendGPUWait && s <= ncclProfilerProxyStepRecvGPUWait) ||
         s == ncclProfilerProxyStepSendPeerWait_v4;
}
static bool proxyCtrlState(int s) { return s >= ncclProfilerProxyCtrlIdle && s <= ncclProfilerProxyCtrlAppendEnd; }
static bool proxyOpOldState(int s) { return s >= ncclProfilerProxyOpSendPosted && s <= ncclProfilerProxyOpRecvDone; }

/* v1..v3 plugins. Natively (2.23-2.26) NCCL passes ProxyOp states 0-7 with
 * {transSize, steps}, ProxyStep states with the args it has (NULL before
 * 2.27) and ProxyCtrl states; its 2.27+ shims send only 8-12 (zeroed args)
 * and 13-18. */
static bool recordOld(const simPlugin* p, void* h, int s, ncclProfilerEventStateArgs_v6_t* a, int opSteps) {
  ncclProfilerEventStateArgs_v1_t b; /* v1..v3 args share one layout */
  memset(&b, 0, sizeof b);
  ncclProfilerEventStateArgs_v1_t* args = &b;
  if (proxyCtrlState(s)) {
    b.proxyCtrl.appendedProxyOps = a ? a->proxyCtrl.appendedProxyOps : 0;
  } else if (proxyOpOldState(s)) {
    if (shimmed(p) && simNcclCur.minor >= 27) return false;
    b.proxyOp.transSize = a ? a->proxyStep.transSize : 0;
    b.proxyOp.steps = opSteps;
  } else if (s >= ncclProfilerProxyStepSendGPUWait && s <= ncclProfilerProxyStepRecvGPUWait) {
    if (!a && !(shimmed(p) && simNcclCur.minor >= 27)) args = NULL; /* as generated (NULL before 2.27) */
  } else {
    return false;
  }
  ((const ncclProfiler_v1_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, args);
  return true;
}

bool simAdaptRecord(const simPlugin* p, void* h, int s, ncclProfilerEventStateArgs_v6_t* a, int opSteps) {
  if (p->version == 7) {
    /* v6 and v7 args are one layout; KernelPhaseStop carries its time in kernelCh.pTimer */
    ((const ncclProfiler_v7_t*)p->api)
        ->recordEventState(h, (ncclProfilerEventState_t)s, (ncclProfilerEventStateArgs_v7_t*)(void*)a);
    return true;
  }
  if (s == ncclProfilerKernelPhaseStop) return false;
  if (p->version == 6) {
    ((const ncclProfiler_v6_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, a);
    return true;
  }
  if (p->version <= 3) return recordOld(p, h, s, a, opSteps);
  bool isApi = s == ncclProfilerGroupStartApiStop || s == ncclProfilerGroupEndApiStart;
  if (s >= 25 || proxyOpOldState(s)) return false; /* CE states; ProxyOp states v4+ never get */
  if (isApi && p->version == 4) return false;
  ncclProfilerEventStateArgs_v4_t b; /* v4 and v5 args share one layout */
  memset(&b, 0, sizeof b);
  void* args = &b;
  if (proxyStepState(s))
    b.proxyStep.transSize = a ? a->proxyStep.transSize : 0;
  else if (proxyCtrlState(s))
    b.proxyCtrl.appendedProxyOps = a ? a->proxyCtrl.appendedProxyOps : 0;
  else if (s == ncclProfilerNetPluginUpdate)
    b.netPlugin.data = a ? a->netPlugin.data : NULL;
  else if (s == ncclProfilerKernelChStop)
    b.kernelCh.pTimer = a ? a->kernelCh.pTimer : 0;
  else if (s == ncclProfilerProxyOpInProgress_v4 || isApi)
    /* no args: natively NULL for the GroupApi states (2.28's v5); the 2.29+
     * v5 shim and 2.28+ v4 shim pass an uninitialised struct instead */
    args = !shimmed(p) && isApi ? NULL
           : shimmed(p) && simQuirk(p->version == 5 ? Q_V5_SHIM_GARBAGE : Q_V4_SHIM_GARBAGE) ? garbageArgs()
                                                                                          : (void*)&b;
  else
    return false;
  if (a == NULL && proxyStepState(s) && !shimmed(p)) args = NULL;
  if (p->version == 5)
    ((const ncclProfiler_v5_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, args);
  else
    ((const ncclProfiler_v4_t*)p->api)->recordEventState(h, (ncclProfilerEventState_t)s, args);
  return true;
}

void simAdaptFinalize(const simPlugin* p, void* ctx) { ((const ncclProfiler_v1_t*)p->api)->finalize(ctx); }
