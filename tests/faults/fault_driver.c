/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope fault tests: host behaviour the simulator does not produce.
 *
 * fault_driver PLUGIN CASE      (run by tests/faults/faults.py, one case per process)
 *
 *   many_comms     3000 communicators alive at once, then all finalized: the
 *                  plugin traces what it can (non-NULL context), refuses the
 *                  rest at init (NULL context or an error: NCCL never
 *                  finalizes those), events on every traced one work
 *   init_race      64 threads init at once (barrier), each emits events,
 *                  all finalize at once; every init must succeed with a
 *                  distinct context
 *   finalize_race  a "proxy" thread starts/stops ProxyStep events of comm A
 *                  in a loop while the main thread finalizes A (comm B keeps
 *                  the session alive), 20 rounds; the last finalize is not
 *                  raced (NCCL destroys the proxy before it)
 *   stale_handles  stop/record on handles of a finalized communicator (the
 *                  writer may already have closed its events)
 *   garbage        stop/record/start with garbage handles, contexts and parents:
 *                  NULL, unmapped, PROT_NONE, misaligned, kernel addresses
 *   hostile_names  communicators named with every byte 0x80-0xFF, every control
 *                  character, "<!--<script>", overlong forms, surrogates and
 *                  cut sequences, and collectives whose func, datatype, algo
 *                  and proto are as odd; one of them is left in flight past
 *                  the hang timeout (the flight record names them). Prints
 *                  each name as "name <kind> <hex>" for faults.py, which
 *                  checks what the outputs make of them
 * Every case: no plugin thread is left once the last context is finalized
 * (checked before dlclose, which would otherwise crash the process).
 * Prints one line per failed check; exit 0 when every check passed.
 * Threads: main plus the ones each case starts.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "plugin_threads.h"

static const ncclProfiler_v6_t* api;
static int failures;

#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond)) {                                \
      failures++;                                 \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

static void quietLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static void* commInit(uint64_t id, int rank, int nranks, ncclResult_t* res) {
  void* ctx = NULL;
  int mask = 0;
  *res = api->init(&ctx, id, &mask, "faults", 1, nranks, rank, quietLog);
  return *res == ncclSuccess ? ctx : NULL;
}

static void* startStep(void* ctx, void* op, int step) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyStep;
  d.parentObj = op;
  d.proxyStep.step = step;
  void* h = NULL;
  api->startEvent(ctx, &h, &d);
  return h;
}

static void* startOp(void* ctx) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyOp;
  d.proxyOp.pid = getpid();
  d.proxyOp.nSteps = 8;
  d.proxyOp.isSend = 1;
  void* h = NULL;
  api->startEvent(ctx, &h, &d);
  return h;
}

static void* startColl(void* ctx, uint64_t seq) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.coll.seqNumber = seq;
  d.coll.func = "AllReduce";
  d.coll.datatype = "ncclFloat32";
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  d.coll.count = 1024;
  void* h = NULL;
  api->startEvent(ctx, &h, &d);
  return h;
}

/* ---- many_comms ---- */
/* Init never fails: past the context table's size a communicator gets a
 * context that records nothing (its events get NULL handles), and NCCL
 * finalizes it like any other. */
static void caseManyComms(void) {
  enum { N = 3000 };
  void** ctx = calloc(N, sizeof *ctx);
  int failedInits = 0, nullCtx = 0;
  for (int i = 0; i < N; i++) {
    ncclResult_t r;
    ctx[i] = commInit(0x1000 + (uint64_t)i, 0, 1, &r);
    failedInits += r != ncclSuccess;
    nullCtx += ctx[i] == NULL;
  }
  int traced = 0, untraced = 0, firstUntraced = -1;
  for (int i = 0; i < N; i++) {
    void* h = startColl(ctx[i], (uint64_t)i);
    if (h) traced++;
    else if (untraced++ == 0) firstUntraced = i;
    api->stopEvent(h);
  }
  int failedFinis = 0;
  for (int i = 0; i < N; i++) failedFinis += api->finalize(ctx[i]) != ncclSuccess;
  printf("traced=%d untraced=%d first_untraced=%d\n", traced, untraced, firstUntraced);
  CHECK(failedInits == 0, "no init fails: %d did", failedInits);
  CHECK(nullCtx == 0, "every init hands out a context: %d NULL", nullCtx);
  CHECK(failedFinis == 0, "no finalize fails: %d did", failedFinis);
  CHECK(traced == 256, "the context table's 256 communicators record: %d do", traced);
  CHECK(untraced == 0 || firstUntraced == traced, "untraced only once the table is full (first %d, traced %d)",
        firstUntraced, traced);
  free(ctx);
}

/* ---- init_race ---- */
enum { RACE_THREADS = 64 };
static pthread_barrier_t raceBar;
typedef struct {
  int index;
  void* ctx;
  ncclResult_t initRes;
  int events;
} raceArg;

static void* raceThread(void* p) {
  raceArg* a = p;
  pthread_barrier_wait(&raceBar);
  a->ctx = commInit(0x5000 + (uint64_t)a->index, a->index, RACE_THREADS, &a->initRes);
  void* op = a->ctx ? startOp(a->ctx) : NULL;
  for (int i = 0; i < 1000 && a->ctx; i++) {
    void* h = startStep(a->ctx, op, i);
    a->events += h != NULL;
    api->stopEvent(h);
  }
  api->stopEvent(op);
  pthread_barrier_wait(&raceBar);
  if (a->ctx) api->finalize(a->ctx);
  return NULL;
}

static void caseInitRace(void) {
  raceArg a[RACE_THREADS];
  pthread_t t[RACE_THREADS];
  pthread_barrier_init(&raceBar, NULL, RACE_THREADS);
  for (int i = 0; i < RACE_THREADS; i++) {
    memset(&a[i], 0, sizeof a[i]);
    a[i].index = i;
    pthread_create(&t[i], NULL, raceThread, &a[i]);
  }
  for (int i = 0; i < RACE_THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&raceBar);
  int ok = 0, distinct = 1;
  for (int i = 0; i < RACE_THREADS; i++) {
    ok += a[i].initRes == ncclSuccess && a[i].ctx;
    for (int j = 0; j < i; j++)
      if (a[i].ctx && a[i].ctx == a[j].ctx) distinct = 0;
    CHECK(a[i].events == 1000, "thread %d recorded %d of 1000 steps", i, a[i].events);
  }
  printf("inits_ok=%d of %d\n", ok, RACE_THREADS);
  CHECK(ok == RACE_THREADS, "every racing init succeeds: %d of %d", ok, RACE_THREADS);
  CHECK(distinct, "distinct contexts");
}

/* ---- finalize_race ---- */
static _Atomic int raceStop;
typedef struct {
  void* ctx;
  _Atomic uint64_t calls;
} loopArg;

static void* proxyLoop(void* p) {
  loopArg* a = p;
  void* op = startOp(a->ctx);
  for (int i = 0; !atomic_load_explicit(&raceStop, memory_order_relaxed); i++) {
    void* h = startStep(a->ctx, op, i);
    ncclProfilerEventStateArgs_v6_t sa;
    memset(&sa, 0, sizeof sa);
    api->recordEventState(h, ncclProfilerProxyStepSendWait, &sa);
    api->stopEvent(h);
    atomic_fetch_add_explicit(&a->calls, 1, memory_order_relaxed);
  }
  api->stopEvent(op);
  return NULL;
}

static void caseFinalizeRace(void) {
  for (int round = 0; round < 20; round++) {
    ncclResult_t r;
    void* keep = commInit(0x7000, 0, 2, &r);
    void* victim = commInit(0x7001, 1, 2, &r);
    CHECK(keep && victim, "round %d: inits", round);
    if (!keep || !victim) return;
    atomic_store(&raceStop, 0);
    loopArg a = {victim, 0};
    pthread_t t;
    pthread_create(&t, NULL, proxyLoop, &a);
    while (atomic_load(&a.calls) < 100) usleep(100);
    usleep(500 * (useconds_t)round);
    api->finalize(victim); /* while the loop still runs on it */
    usleep(5000);
    atomic_store(&raceStop, 1);
    pthread_join(t, NULL);
    api->finalize(keep);
  }
  printf("finalize_race: 20 rounds survived\n");
}

/* ---- stale_handles ---- */
static void caseStaleHandles(void) {
  ncclResult_t r;
  void* keep = commInit(0x8000, 0, 2, &r);
  void* gone = commInit(0x8001, 1, 2, &r);
  enum { H = 256 };
  void* hs[H];
  void* op = startOp(gone);
  for (int i = 0; i < H; i++) hs[i] = startStep(gone, op, i);
  api->finalize(gone);
  usleep(300000); /* the writer closes the finalized communicator's open events */
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  for (int i = 0; i < H; i++) {
    api->recordEventState(hs[i], ncclProfilerProxyStepSendWait, &sa);
    api->stopEvent(hs[i]);
  }
  api->stopEvent(op);
  void* h = startStep(gone, NULL, 0); /* a finalized context */
  CHECK(h == NULL, "start on a finalized context returns NULL (%p)", h);
  api->stopEvent(h);
  api->finalize(keep);
  printf("stale_handles: survived\n");
}

/* ---- garbage ---- */
static void caseGarbage(void) {
  ncclResult_t r;
  void* ctx = commInit(0xA000, 0, 1, &r);
  CHECK(ctx != NULL, "init");
  uint8_t* none = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char stackBuf[64];
  void* bad[] = {(void*)1, (void*)8, (void*)0xdeadbeef, none, none + 64, none + 4095, (void*)(stackBuf + 3),
                 (void*)0xffff800000000000ull, (void*)~0ull, (void*)((uintptr_t)ctx + 1), (void*)((uintptr_t)ctx + 64)};
  int nbad = (int)(sizeof bad / sizeof bad[0]);
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  void* good = startColl(ctx, 1);
  for (int i = 0; i < nbad; i++) {
    api->stopEvent(bad[i]);
    api->recordEventState(bad[i], ncclProfilerProxyStepSendWait, &sa);
    api->recordEventState(bad[i], (ncclProfilerEventState_t)12345, NULL);
    void* h = startColl(bad[i], 2); /* garbage context */
    CHECK(h == NULL, "start with garbage context %p returned %p", bad[i], h);
    api->stopEvent(h);
    ncclProfilerEventDescr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = ncclProfileProxyStep;
    d.parentObj = bad[i]; /* garbage parent */
    h = NULL;
    api->startEvent(ctx, &h, &d);
    api->stopEvent(h);
    d.type = 1ull << 40; /* unknown type */
    h = NULL;
    api->startEvent(ctx, &h, &d);
    CHECK(h == NULL, "unknown type returns NULL");
    d.type = ncclProfileProxyOp; /* PXN: foreign pid, context and parent garbage */
    d.proxyOp.pid = getpid() + 1;
    d.parentObj = bad[i];
    h = NULL;
    api->startEvent(bad[i], &h, &d);
    void* child = startStep(bad[i], h, 0);
    api->recordEventState(child, ncclProfilerProxyStepSendWait, &sa);
    api->stopEvent(child);
    api->stopEvent(h);
  }
  api->stopEvent(good);
  api->stopEvent(good); /* double stop */
  api->finalize(ctx);
  munmap(none, 1 << 16);
  printf("garbage: survived %d garbage values\n", nbad);
}

/* ---- hostile_names ---- */
/* Each under 64 bytes: every layer keeps it whole. */
static const char* const hostileComms[] = {
    "<!--<script>x</script>&\"\\\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14"
    "\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f",
    "\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b"
    "\x9c\x9d\x9e\x9f",
    "\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb"
    "\xbc\xbd\xbe\xbf",
    "\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb"
    "\xdc\xdd\xde\xdf",
    "\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb"
    "\xfc\xfd\xfe\xff",
    /* é € U+1F600 U+2028 U+2029, overlong '/', surrogate U+D800, above U+10FFFF, a cut € */
    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x80\xa8\xe2\x80\xa9|\xc0\xaf|\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|"
    "\xe2\x82",
};
enum { HOSTILE_COMMS = sizeof hostileComms / sizeof hostileComms[0] };
static const char hostileFunc[] = "AllReduce\xff<!--<script>\x1b";
static const char hostileType[] = "ncclFloat32\xc0\xaf\"";
static const char hostileAlgo[] = "RING\xed\xa0\x80</script>";
static const char hostileProto[] = "SIMPLE\x7f\xe2\x82";

static void printHex(const char* kind, const char* s) {
  printf("name %s ", kind);
  for (const unsigned char* p = (const unsigned char*)s; *p; p++) printf("%02x", *p);
  printf("\n");
}

static void* startHostileColl(void* ctx, uint64_t seq) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.coll.seqNumber = seq;
  d.coll.func = hostileFunc;
  d.coll.datatype = hostileType;
  d.coll.algo = hostileAlgo;
  d.coll.proto = hostileProto;
  d.coll.count = 1024;
  d.coll.nChannels = 1;
  void* h = NULL;
  api->startEvent(ctx, &h, &d);
  return h;
}

static void caseHostileNames(void) {
  for (int i = 0; i < HOSTILE_COMMS; i++) printHex("comm", hostileComms[i]);
  printHex("func", hostileFunc);
  printHex("dtype", hostileType);
  printHex("algo", hostileAlgo);
  printHex("proto", hostileProto);
  void* ctx[HOSTILE_COMMS];
  for (int i = 0; i < HOSTILE_COMMS; i++) {
    int mask = 0;
    ctx[i] = NULL;
    ncclResult_t r = api->init(&ctx[i], 0xB000 + (uint64_t)i, &mask, hostileComms[i], 1, 1, 0, quietLog);
    CHECK(r == ncclSuccess && ctx[i], "init of communicator %d", i);
    if (!ctx[i]) return;
  }
  for (int i = 0; i < HOSTILE_COMMS; i++)
    for (uint64_t seq = 0; seq < 4; seq++) {
      void* coll = startHostileColl(ctx[i], seq);
      void* op = startOp(ctx[i]);
      for (int s = 0; s < 8; s++) api->stopEvent(startStep(ctx[i], op, s));
      api->stopEvent(op);
      api->stopEvent(coll);
    }
  void* stuck = startHostileColl(ctx[0], 4);
  usleep(1500000); /* past NCCLSCOPE_HANG_TIMEOUT_SEC (faults.py sets 0.2): the flight record is written */
  api->stopEvent(stuck);
  for (int i = 0; i < HOSTILE_COMMS; i++) api->finalize(ctx[i]);
  printf("hostile_names: %d communicators\n", HOSTILE_COMMS);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: fault_driver PLUGIN CASE\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib || !(api = dlsym(lib, "ncclProfiler_v6"))) {
    fprintf(stderr, "fault_driver: cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  if (!strcmp(argv[2], "many_comms")) caseManyComms();
  else if (!strcmp(argv[2], "init_race")) caseInitRace();
  else if (!strcmp(argv[2], "finalize_race")) caseFinalizeRace();
  else if (!strcmp(argv[2], "stale_handles")) caseStaleHandles();
  else if (!strcmp(argv[2], "garbage")) caseGarbage();
  else if (!strcmp(argv[2], "hostile_names")) caseHostileNames();
  else {
    fprintf(stderr, "fault_driver: unknown case %s\n", argv[2]);
    return 2;
  }
  /* After the last finalize every plugin thread is joined: dlclose is safe. */
  int left = ns_plugin_threads_left();
  CHECK(left == 0, "plugin threads after the last finalize: %d (one left running crashes the process after dlclose)",
        left);
  if (left == 0) dlclose(lib);
  printf("%s: %s\n", argv[2], failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
