/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the one place where the simulator calls the plugin.
 *
 * Runs on every simulator thread. Applies the version adapter, keeps the
 * per-thread call counters and appends each startEvent actually made to the
 * truth start log, so a test can zip a plugin's per-thread start order with it.
 * Like NCCL, stop and record are only issued for non-NULL handles.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static atomic_uint_fast64_t nextSerial = 1;

/* reuse scenario: detect a plugin handing out a handle that is still live
 * (started, not stopped). Guarded by liveLock; off the path otherwise. */
typedef struct liveNode {
  void* h;
  uint64_t serial;
  struct liveNode* next;
} liveNode;
#define LIVE_BUCKETS 4096
static bool liveOn; /* set by the reuse scenario's first thread; relaxed atomic accesses */
static pthread_mutex_t liveLock = PTHREAD_MUTEX_INITIALIZER;
static liveNode* live[LIVE_BUCKETS];
static uint64_t liveReuses;

bool simBenchOn;
/* bench: per-thread accumulators, so that timing one call never waits for
 * another thread. A thread registers its block once (under benchLock) and
 * then only touches its own cacheline-aligned block. simBenchTake runs after
 * every timed thread was joined: it sums the blocks, frees them and bumps
 * benchGen, which makes a surviving thread register a fresh block. */
typedef struct benchBlock {
  simBenchAcc acc;
  int role;
  struct benchBlock* next;
} benchBlock;
static pthread_mutex_t benchLock = PTHREAD_MUTEX_INITIALIZER;
static benchBlock* benchBlocks;
static atomic_uint benchGen = 1;
static _Thread_local benchBlock* benchMine;
static _Thread_local unsigned benchMineGen;

static benchBlock* benchBlockSelf(void) {
  unsigned gen = atomic_load_explicit(&benchGen, memory_order_acquire);
  if (benchMine && benchMineGen == gen) return benchMine;
  benchBlock* b = aligned_alloc(64, (sizeof *b + 63) / 64 * 64);
  memset(b, 0, sizeof *b);
  b->role = simTruthRole();
  pthread_mutex_lock(&benchLock);
  b->next = benchBlocks;
  benchBlocks = b;
  pthread_mutex_unlock(&benchLock);
  benchMine = b, benchMineGen = gen;
  return b;
}

static void benchAdd(int kind, uint64_t t0) {
  uint64_t d = simNowNs() - t0;
  benchBlock* b = benchBlockSelf();
  b->acc.ns[kind] += d;
  b->acc.n[kind]++;
}

void simBenchTake(simBenchAcc out[5]) {
  memset(out, 0, 5 * sizeof *out);
  pthread_mutex_lock(&benchLock);
  for (benchBlock *b = benchBlocks, *next; b; b = next) {
    next = b->next;
    for (int q = 0; q < 3; q++) out[b->role].ns[q] += b->acc.ns[q], out[b->role].n[q] += b->acc.n[q];
    free(b);
  }
  benchBlocks = NULL;
  atomic_fetch_add_explicit(&benchGen, 1, memory_order_release);
  pthread_mutex_unlock(&benchLock);
}

int simTypeGate(int t) {
  const int net = ncclProfileNetPlugin, step = ncclProfileProxyStep | net, op = ncclProfileProxyOp | step,
            task = op | ncclProfileKernelCh;
  switch (t) {
  case 0: return ncclProfileGroup | ncclProfileColl | ncclProfileP2p | task;
  case 1: return ncclProfileColl | task;
  case 2: return ncclProfileP2p | task;
  case 3: return op;
  case 4: return step;
  case 8: return ncclProfileGroupApi | ncclProfileCollApi | ncclProfileP2pApi | ncclProfileKernelLaunch |
                 ncclProfileGroup | ncclProfileColl | ncclProfileP2p | task | NCCL_PROFILE_CE_MASK;
  case 9: return ncclProfileCollApi | ncclProfileColl | task | NCCL_PROFILE_CE_MASK;
  case 10: return ncclProfileP2pApi | ncclProfileP2p | task;
  case 12: return NCCL_PROFILE_CE_MASK;
  default: return t >= 0 && t < SIM_NTYPES ? 1 << t : 0;
  }
}

void simReuseCheckEnable(void) { __atomic_store_n(&liveOn, true, __ATOMIC_RELAXED); }

static size_t bucketOf(void* h) { return ((uintptr_t)h >> 4) % LIVE_BUCKETS; }

static void liveAdd(void* h, uint64_t serial, int type) {
  pthread_mutex_lock(&liveLock);
  size_t b = bucketOf(h);
  for (liveNode* n = live[b]; n; n = n->next)
    if (n->h == h) {
      liveReuses++;
      if (liveReuses <= 5)
        fprintf(stderr, "ncclscope-sim: warning: plugin returned handle %p for %s #%llu while it is still live "
                "for #%llu\n", h, simTypeName(type), (unsigned long long)serial, (unsigned long long)n->serial);
      simTruthf("\"kind\":\"handle_reuse\",\"serial\":%llu,\"live_serial\":%llu,\"type\":\"%s\"",
                (unsigned long long)serial, (unsigned long long)n->serial, simTypeName(type));
      n->serial = serial;
      pthread_mutex_unlock(&liveLock);
      return;
    }
  liveNode* n = malloc(sizeof *n);
  n->h = h, n->serial = serial, n->next = live[b];
  live[b] = n;
  pthread_mutex_unlock(&liveLock);
}

static void liveDel(void* h) {
  pthread_mutex_lock(&liveLock);
  for (liveNode** pp = &live[bucketOf(h)]; *pp; pp = &(*pp)->next)
    if ((*pp)->h == h) {
      liveNode* n = *pp;
      *pp = n->next;
      free(n);
      break;
    }
  pthread_mutex_unlock(&liveLock);
}

void simStart(const simPlugin* p, void* ctx, simEvent* ev, const simEvent* parent, ncclProfilerEventDescr_v6_t* d,
              bool pxn, pid_t originPid, const char* keyJson) {
  ev->h = NULL;
  ev->type = simTypeIndex(d->type);
  ev->serial = atomic_fetch_add_explicit(&nextSerial, 1, memory_order_relaxed);
  if (!p || !simPluginLive(p)) return;
  uint64_t t0 = simBenchOn ? simNowNs() : 0;
  bool called = simAdaptStart(p, ctx, &ev->h, d);
  if (simBenchOn && called) benchAdd(0, t0);
  simTruthCountStart(ev->type, called);
  if (!called) return;
  if (__atomic_load_n(&liveOn, __ATOMIC_RELAXED) && ev->h) liveAdd(ev->h, ev->serial, ev->type);
  /* For v4 and older, Coll/P2p hang under the legacy Group: the caller passes
   * that one as `parent` in that case (see streams_app.c). */
  char par[32];
  if (parent && parent->serial)
    snprintf(par, sizeof par, "%llu", (unsigned long long)parent->serial);
  else
    snprintf(par, sizeof par, "null");
  void* passedParent = d->parentObj;
  if (p->version <= 4 && d->type == ncclProfileColl) passedParent = d->coll.parentGroup;
  if (p->version <= 4 && d->type == ncclProfileP2p) passedParent = d->p2p.parentGroup;
  simTruthf("\"kind\":\"start\",\"serial\":%llu,\"type\":\"%s\",\"parent\":%s,\"parent_null\":%s,"
            "\"handle_null\":%s,\"rank\":%d,\"pxn\":%s,\"origin_pid\":%d%s%s",
            (unsigned long long)ev->serial, simTypeName(ev->type), par, passedParent ? "false" : "true",
            ev->h ? "false" : "true", d->rank, pxn ? "true" : "false", (int)originPid, keyJson ? "," : "",
            keyJson ? keyJson : "");
}

void simStop(const simPlugin* p, simEvent* ev) {
  if (!p || !ev->serial || !simPluginLive(p)) return;
  if (!ev->h) {
    simTruthCountStop(ev->type, false);
    return;
  }
  if (__atomic_load_n(&liveOn, __ATOMIC_RELAXED)) liveDel(ev->h);
  uint64_t t0 = simBenchOn ? simNowNs() : 0;
  simAdaptStop(p, ev->h);
  if (simBenchOn) benchAdd(1, t0);
  simTruthCountStop(ev->type, true);
}

static void record(const simPlugin* p, simEvent* ev, int state, ncclProfilerEventStateArgs_v6_t* a, int opSteps) {
  if (!p || !ev->h || !simPluginLive(p)) return;
  uint64_t t0 = simBenchOn ? simNowNs() : 0;
  bool called = simAdaptRecord(p, ev->h, state, a, opSteps);
  if (simBenchOn && called) benchAdd(2, t0);
  simTruthCountRecord(ev->type, state, called);
}

void simRecord(const simPlugin* p, simEvent* ev, int state, ncclProfilerEventStateArgs_v6_t* a) {
  record(p, ev, state, a, 0);
}

void simRecordOp(const simPlugin* p, simEvent* ev, int state, size_t transSize, int steps) {
  ncclProfilerEventStateArgs_v6_t a;
  memset(&a, 0, sizeof a);
  a.proxyStep.transSize = transSize; /* the v1 layout's {transSize, steps} is rebuilt by the adapter */
  record(p, ev, state, &a, steps);
}

void simStopNull(const simPlugin* p, int type) {
  if (!p || !simPluginLive(p)) return;
  simAdaptStop(p, NULL);
  simTruthCountStop(type, true);
  simTruthf("\"kind\":\"null_stop\",\"type\":\"%s\"", simTypeName(type));
}

void simNullHandleCalls(const simPlugin* p) {
  if (!p) return;
  ncclProfilerEventStateArgs_v6_t a = {0};
  bool called = simAdaptRecord(p, NULL, ncclProfilerNetPluginUpdate, &a, 0);
  simTruthCountRecord(simTypeIndex(ncclProfileNetPlugin), ncclProfilerNetPluginUpdate, called);
  simAdaptStop(p, NULL);
  simTruthCountStop(simTypeIndex(ncclProfileNetPlugin), true);
  simTruthf("\"kind\":\"null_handle_calls\",\"type\":\"NetPlugin\",\"record_called\":%s,\"stop_called\":true",
            called ? "true" : "false");
}
