/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope tests: a recording profiler plugin, built once per ABI version.
 *
 * Compiled with -DREC_V=N into libnccl-profiler-recvN.so exporting only
 * ncclProfiler_vN. Every call it receives is appended as one JSON line to
 * $NCCLSCOPE_REC_OUT.<pid>. Handles are heap blocks it owns and never reuses
 * while loaded. Knobs: REC_MASK (mask set by init, default 0x7FFF),
 * REC_MASK_AFTER=N + REC_MASK2=M (after N starts, change the mask through the
 * kept pointer; with REC_MASK_THREAD=1 the plugin's own thread makes that
 * store, woken by the Nth start and joined at unload; with REC_MASK_AFTER_TYPE=T
 * only starts of type bit T count), REC_NULL_TYPES (type bits for which start returns NULL),
 * REC_LEAK_THREAD=1 (leave a thread running), REC_INIT_FAIL=1.
 * Called from any simulator thread; one mutex serializes the output.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"

#ifndef REC_V
#error "REC_V must be 1..6"
#endif

#define EXPORT __attribute__((visibility("default")))
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define DESCR CAT(CAT(ncclProfilerEventDescr_v, REC_V), _t)
#define SARGS CAT(CAT(ncclProfilerEventStateArgs_v, REC_V), _t)
#define API CAT(CAT(ncclProfiler_v, REC_V), _t)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE* out;
static int* maskPtr;
static long starts;
static long maskAfter = -1;
static unsigned long maskAfterType; /* 0: every start counts towards maskAfter */
static long counted;
static int mask2;
static unsigned long nullTypes;
static pthread_t leaked;
/* REC_MASK_THREAD: the thread that changes the mask, and its wake-up (under lock) */
static pthread_t flipper;
static int flipperRunning, flipWanted, flipperQuit;
static pthread_cond_t flipCv = PTHREAD_COND_INITIALIZER;

typedef struct recHandle {
  unsigned magic;
  long id;
  struct recHandle* all; /* every handle ever made: never reused while loaded, freed at unload */
} recHandle;
static long nextId;
static recHandle* allHandles;

static recHandle* newHandle(unsigned magic) {
  recHandle* r = calloc(1, sizeof *r);
  r->magic = magic;
  r->id = ++nextId;
  r->all = allHandles;
  allHandles = r;
  return r;
}

static int tid(void) { return (int)syscall(SYS_gettid); }
/* CLOCK_MONOTONIC ns of the call (taken before the output lock) */
static unsigned long long now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static void emit(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char* fmt, ...) {
  if (!out) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(out, fmt, ap);
  va_end(ap);
  fputc('\n', out);
}

__attribute__((unused)) static const char* s(const char* x) { return x ? x : "(null)"; }

__attribute__((constructor)) static void recLoad(void) {
  const char* p = getenv("NCCLSCOPE_REC_OUT");
  if (p) {
    char name[4096];
    snprintf(name, sizeof name, "%s.%d", p, (int)getpid());
    out = fopen(name, "a");
  }
  pthread_mutex_lock(&lock);
  emit("{\"ev\":\"load\",\"tid\":%d,\"version\":%d}", tid(), REC_V);
  pthread_mutex_unlock(&lock);
}

__attribute__((destructor)) static void recUnload(void) {
  if (flipperRunning) {
    pthread_mutex_lock(&lock);
    flipperQuit = 1;
    pthread_cond_signal(&flipCv);
    pthread_mutex_unlock(&lock);
    pthread_join(flipper, NULL);
    flipperRunning = 0;
  }
  pthread_mutex_lock(&lock);
  emit("{\"ev\":\"unload\",\"tid\":%d}", tid());
  if (out) fclose(out);
  out = NULL;
  for (recHandle *r = allHandles, *next; r; r = next) {
    next = r->all;
    free(r);
  }
  allHandles = NULL;
  pthread_mutex_unlock(&lock);
}

/* The store and its log line happen under lock: a start logged before the mask_change line read the old
 * mask or the new one, a task whose mask was read after it logs its start after it. */
static void* flipMain(void* a) {
  (void)a;
  pthread_mutex_lock(&lock);
  while (!flipWanted && !flipperQuit) pthread_cond_wait(&flipCv, &lock);
  if (flipWanted && maskPtr) {
    __atomic_store_n(maskPtr, mask2, __ATOMIC_RELAXED);
    emit("{\"ev\":\"mask_change\",\"tid\":%d,\"mask\":%d,\"thread\":true}", tid(), mask2);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void* leakMain(void* a) {
  (void)a;
  for (;;) pause();
  return NULL;
}

static ncclResult_t commonInit(void** ctx, int* mask, const char* extra) {
  pthread_mutex_lock(&lock);
  const char* m = getenv("REC_MASK");
  const char* ma = getenv("REC_MASK_AFTER");
  const char* m2 = getenv("REC_MASK2");
  const char* nt = getenv("REC_NULL_TYPES");
  maskAfter = ma ? atol(ma) : -1;
  const char* mt = getenv("REC_MASK_AFTER_TYPE");
  maskAfterType = mt ? strtoul(mt, NULL, 0) : 0;
  mask2 = m2 ? (int)strtol(m2, NULL, 0) : 0;
  nullTypes = nt ? strtoul(nt, NULL, 0) : 0;
  /* NCCL's threads read the mask with relaxed atomics while we write it. */
  int before = __atomic_load_n(mask, __ATOMIC_RELAXED);
  __atomic_store_n(mask, m ? (int)strtol(m, NULL, 0) : NCCL_PROFILE_ALL_MASK, __ATOMIC_RELAXED);
  maskPtr = mask;
  recHandle* c = newHandle(0xC0C0);
  *ctx = c;
  emit("{\"ev\":\"init\",\"tid\":%d,\"ctx\":\"%p\",\"mask_before\":%d,\"mask_set\":%d%s}", tid(), (void*)c, before,
       __atomic_load_n(mask, __ATOMIC_RELAXED), extra);
  if (getenv("REC_LEAK_THREAD") && !leaked) pthread_create(&leaked, NULL, leakMain, NULL);
  if (getenv("REC_MASK_THREAD") && maskAfter >= 0 && !flipperRunning)
    flipperRunning = pthread_create(&flipper, NULL, flipMain, NULL) == 0;
  pthread_mutex_unlock(&lock);
  return getenv("REC_INIT_FAIL") ? ncclInternalError : ncclSuccess;
}

#if REC_V >= 4
/* v4+ init: the communicator's fields in the init line; idKey is "commId"
 * (v5+) or "commHash" (v4). */
static ncclResult_t commInit(void** ctx, int* mask, const char* idKey, uint64_t id, const char* commName, int nNodes,
                             int nranks, int rank, ncclDebugLogger_t logfn) {
  char extra[512];
  snprintf(extra, sizeof extra,
           ",\"%s\":\"0x%016llx\",\"commName\":\"%s\",\"nNodes\":%d,\"nranks\":%d,\"rank\":%d,\"logfn\":%s", idKey,
           (unsigned long long)id, s(commName), nNodes, nranks, rank, logfn ? "true" : "false");
  return commonInit(ctx, mask, extra);
}
#endif

#if REC_V >= 5
static ncclResult_t recInit(void** ctx, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks,
                            int rank, ncclDebugLogger_t logfn) {
  return commInit(ctx, mask, "commId", commId, commName, nNodes, nranks, rank, logfn);
}
#elif REC_V == 4
static ncclResult_t recInit(void** ctx, int* mask, const char* commName, uint64_t commHash, int nNodes, int nranks,
                            int rank, ncclDebugLogger_t logfn) {
  return commInit(ctx, mask, "commHash", commHash, commName, nNodes, nranks, rank, logfn);
}
#else
static ncclResult_t recInit(void** ctx, int* mask) { return commonInit(ctx, mask, ""); }
#endif

static void fields(char* b, size_t n, const DESCR* d) {
  b[0] = 0;
  switch (d->type) {
  case ncclProfileColl:
#if REC_V == 1
    snprintf(b, n, ",\"seq\":%llu,\"func\":%d,\"dtype\":%d,\"algo\":%d,\"proto\":%d,\"nch\":%d,\"count\":%zu",
             (unsigned long long)d->coll.seqNumber, d->coll.func, d->coll.datatype, d->coll.algo, d->coll.proto,
             d->coll.nMaxChannels, d->coll.count);
#elif REC_V <= 3
    snprintf(b, n, ",\"seq\":%llu,\"func\":\"%s\",\"dtype\":\"%s\",\"algo\":\"%s\",\"proto\":\"%s\",\"nch\":%d,"
             "\"count\":%zu,\"commHash\":\"0x%016llx\"",
             (unsigned long long)d->coll.seqNumber, s(d->coll.func), s(d->coll.datatype), s(d->coll.algo),
             s(d->coll.proto), d->coll.nMaxChannels, d->coll.count, (unsigned long long)d->coll.commHash);
#else
    snprintf(b, n, ",\"seq\":%llu,\"func\":\"%s\",\"dtype\":\"%s\",\"algo\":\"%s\",\"proto\":\"%s\",\"nch\":%d,"
             "\"count\":%zu",
             (unsigned long long)d->coll.seqNumber, s(d->coll.func), s(d->coll.datatype), s(d->coll.algo),
             s(d->coll.proto), d->coll.nChannels, d->coll.count);
#endif
    break;
  case ncclProfileP2p:
#if REC_V == 1
    snprintf(b, n, ",\"func\":%d,\"peer\":%d,\"count\":%zu", d->p2p.func, d->p2p.peer, d->p2p.count);
#elif REC_V <= 3
    snprintf(b, n, ",\"func\":\"%s\",\"peer\":%d,\"count\":%zu", s(d->p2p.func), d->p2p.peer, d->p2p.count);
#else
    snprintf(b, n, ",\"func\":\"%s\",\"peer\":%d,\"count\":%zu,\"nch\":%d", s(d->p2p.func), d->p2p.peer,
             d->p2p.count, d->p2p.nChannels);
#endif
    break;
  case ncclProfileProxyOp:
    snprintf(b, n, ",\"pid\":%d,\"channel\":%d,\"peer\":%d,\"nsteps\":%d,\"chunk\":%d,\"send\":%d", (int)d->proxyOp.pid,
             d->proxyOp.channelId, d->proxyOp.peer, d->proxyOp.nSteps, d->proxyOp.chunkSize, d->proxyOp.isSend);
    break;
  case ncclProfileProxyStep:
    snprintf(b, n, ",\"step\":%d", d->proxyStep.step);
    break;
#if REC_V >= 3
  case ncclProfileKernelCh:
#if REC_V >= 4
    snprintf(b, n, ",\"channel\":%d,\"ptimer\":%llu", d->kernelCh.channelId, (unsigned long long)d->kernelCh.pTimer);
#else
    snprintf(b, n, ",\"channel\":%d", d->kernelCh.channelId);
#endif
    break;
  case ncclProfileNetPlugin:
    snprintf(b, n, ",\"id\":%lld,\"data\":%s", (long long)d->netPlugin.id, d->netPlugin.data ? "true" : "false");
    break;
#endif
#if REC_V >= 5
  case ncclProfileGroupApi:
    snprintf(b, n, ",\"depth\":%d,\"graph\":%s", d->groupApi.groupDepth, d->groupApi.graphCaptured ? "true" : "false");
    break;
  case ncclProfileCollApi:
    snprintf(b, n, ",\"func\":\"%s\",\"count\":%zu,\"graph\":%s", s(d->collApi.func), d->collApi.count,
             d->collApi.graphCaptured ? "true" : "false");
    break;
  case ncclProfileP2pApi:
    snprintf(b, n, ",\"func\":\"%s\",\"count\":%zu,\"graph\":%s", s(d->p2pApi.func), d->p2pApi.count,
             d->p2pApi.graphCaptured ? "true" : "false");
    break;
#endif
#if REC_V >= 6
  case ncclProfileCeColl:
    snprintf(b, n, ",\"func\":\"%s\",\"seq\":%llu", s(d->ceColl.func), (unsigned long long)d->ceColl.seqNumber);
    break;
  case ncclProfileCeBatch:
    snprintf(b, n, ",\"numOps\":%d,\"bytes\":%zu", d->ceCollBatch.numOps, d->ceCollBatch.totalBytes);
    break;
#endif
  default:
    break;
  }
}

static ncclResult_t recStart(void* ctx, void** h, DESCR* d) {
  unsigned long long ts = now();
  char f[512];
  fields(f, sizeof f, d);
  pthread_mutex_lock(&lock);
  starts++;
  recHandle* r = NULL;
  if (!(nullTypes & (unsigned long)d->type)) {
    r = newHandle(0xE0E0);
  }
  *h = r;
  emit("{\"ev\":\"start\",\"tid\":%d,\"ts\":%llu,\"h\":\"%p\",\"ctx\":\"%p\",\"type\":%llu,\"parent\":\"%p\","
       "\"rank\":%d,\"mask\":%d%s}",
       tid(), ts, (void*)r, ctx, (unsigned long long)d->type, d->parentObj, d->rank, maskPtr ? __atomic_load_n(maskPtr, __ATOMIC_RELAXED) : -1, f);
  if (!maskAfterType || (unsigned long)d->type == maskAfterType) counted++;
  bool flipNow = maskAfter >= 0 && counted == maskAfter && (!maskAfterType || (unsigned long)d->type == maskAfterType);
  if (flipNow && flipperRunning) {
    flipWanted = 1;
    pthread_cond_signal(&flipCv);
  } else if (flipNow && maskPtr) {
    __atomic_store_n(maskPtr, mask2, __ATOMIC_RELAXED);
    emit("{\"ev\":\"mask_change\",\"tid\":%d,\"mask\":%d}", tid(), mask2);
  }
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}

static ncclResult_t recStop(void* h) {
  unsigned long long ts = now();
  pthread_mutex_lock(&lock);
  emit("{\"ev\":\"stop\",\"tid\":%d,\"ts\":%llu,\"h\":\"%p\"}", tid(), ts, h);
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}

static ncclResult_t recRecord(void* h, ncclProfilerEventState_t st, SARGS* a) {
  unsigned long long ts = now();
  char f[256] = "";
#if REC_V >= 4
  if (a && (st == ncclProfilerKernelChStop))
    snprintf(f, sizeof f, ",\"ptimer\":%llu", (unsigned long long)a->kernelCh.pTimer);
  else if (a && st >= ncclProfilerProxyCtrlIdle && st <= ncclProfilerProxyCtrlAppendEnd)
    snprintf(f, sizeof f, ",\"appended\":%d", a->proxyCtrl.appendedProxyOps);
  else if (a && ((st >= ncclProfilerProxyStepSendGPUWait && st <= ncclProfilerProxyStepRecvGPUWait) ||
                 st == ncclProfilerProxyStepSendPeerWait_v4))
    snprintf(f, sizeof f, ",\"transSize\":%zu", a->proxyStep.transSize);
  else if (a && st == ncclProfilerNetPluginUpdate)
    snprintf(f, sizeof f, ",\"data\":%s", a->netPlugin.data ? "true" : "false");
#else
  if (a && st >= ncclProfilerProxyCtrlIdle && st <= ncclProfilerProxyCtrlAppendEnd)
    snprintf(f, sizeof f, ",\"appended\":%d", a->proxyCtrl.appendedProxyOps);
  else if (a)
    snprintf(f, sizeof f, ",\"transSize\":%zu,\"steps\":%d", a->proxyOp.transSize, a->proxyOp.steps);
#endif
  pthread_mutex_lock(&lock);
  emit("{\"ev\":\"state\",\"tid\":%d,\"ts\":%llu,\"h\":\"%p\",\"state\":%d,\"args_null\":%s%s}", tid(), ts, h,
       (int)st, a ? "false" : "true", f);
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}

static ncclResult_t recFinalize(void* ctx) {
  pthread_mutex_lock(&lock);
  emit("{\"ev\":\"finalize\",\"tid\":%d,\"ctx\":\"%p\"}", tid(), ctx);
  if (out) fflush(out);
  pthread_mutex_unlock(&lock);
  return ncclSuccess;
}

EXPORT API CAT(ncclProfiler_v, REC_V) = {"ncclscope-recording", recInit, recStart, recStop, recRecord, recFinalize};
