/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the scenarios (--scenario NAME).
 *
 * simRunScenario runs in each simulator process: it starts one application
 * thread per local rank (more for `threads`), each creating its communicators
 * and issuing the scenario's groups, then joins them. Global rank =
 * process index * ranks-per-proc + local index; every process derives the
 * same commIds from the seed.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim_shared.h"

extern int simProcIndex;

typedef struct {
  int local;   /* local rank index */
  int rank;    /* global rank */
  int thread;  /* app-thread index for `threads` */
  const char* name;
  int rc;
} appArg;

static uint64_t commIdFor(int which) {
  simRng r;
  simRngSeed(&r, simOpt.seed * 977 + (uint64_t)which);
  return simRngNext(&r);
}

static int nRanks(void) { return simOpt.procs * simOpt.ranksPerProc; }

static void initTask(simTask* t, int func, size_t bytes, int peer, int chanBase) {
  memset(t, 0, sizeof *t);
  t->func = func;
  t->bytes = bytes;
  t->count = bytes / 4;
  t->dtype = "ncclFloat32";
  t->peer = peer;
  t->root = 0;
  int ch = (int)(bytes / 65536);
  if (ch < 1) ch = 1;
  if (ch > simOpt.channels) ch = simOpt.channels;
  t->nChannels = ch;
  t->chanBase = chanBase;
}

static int runColl(simComm* c, int func, size_t bytes, bool pxn) {
  simTask t;
  initTask(&t, func, bytes, -1, 0);
  simGroupSpec g = {.nTasks = 1, .tasks = &t, .pxn = pxn};
  return simRunGroup(c, &g);
}

static int runAllToAll(simComm* c, size_t bytes) {
  int n = c->nranks;
  simTask* t = calloc((size_t)(2 * n), sizeof *t);
  int k = 0;
  for (int i = 0; i < n; i++) {
    int peer = (c->rank + i) % n;
    if (peer == c->rank) continue;
    initTask(&t[k++], SIM_FUNC_SEND, bytes / (size_t)n + 1, peer, (2 * i) % simOpt.channels);
    initTask(&t[k++], SIM_FUNC_RECV, bytes / (size_t)n + 1, (c->rank - i + n) % n, (2 * i + 1) % simOpt.channels);
  }
  simGroupSpec g = {.nTasks = k, .tasks = t};
  int rc = k ? simRunGroup(c, &g) : 0;
  free(t);
  return rc;
}

static int runSendRecv(simComm* c, size_t bytes) {
  int n = c->nranks;
  if (n < 2) return 0;
  simTask t[2];
  initTask(&t[0], SIM_FUNC_SEND, bytes, (c->rank + 1) % n, 0);
  initTask(&t[1], SIM_FUNC_RECV, bytes, (c->rank - 1 + n) % n, 1);
  simGroupSpec g = {.nTasks = 2, .tasks = t};
  return simRunGroup(c, &g);
}

static const size_t sweep[] = {1024, 65536, 1 << 20, 4 << 20};
#define NSWEEP (sizeof sweep / sizeof sweep[0])

/* The GPU a rank's kernels run on: its own, or with --timeslice-us one per process, shared by its ranks. */
static int gpuOf(const appArg* a) { return simOpt.timesliceUs > 0 ? simProcIndex : a->rank; }

static void commWorld(simComm* c, appArg* a, const char* name) {
  simCommInit(c, commIdFor(0), name, 0, nRanks(), a->rank, simOpt.nodes, gpuOf(a), NULL);
}

/* How a scenario's communicator ends (--exit): destroyed (default), aborted
 * with work in flight, or left alive for the process to exit without
 * destroying it (exit, sigterm: processes.c ends the process). */
static void endComm(simComm* c) {
  const char* m = simOpt.exitMode ? simOpt.exitMode : "finalize";
  if (!strcmp(m, "abort"))
    simCommAbort(c);
  else if (!strcmp(m, "finalize"))
    simCommFinalize(c);
  else
    simCommDrain(c);
}

static int doDefault(appArg* a, bool pxn) {
  simComm world, split;
  commWorld(&world, a, "world");
  int n = nRanks();
  bool haveSplit = n >= 2 && n % 2 == 0 && !pxn;
  if (haveSplit)
    simCommInit(&split, commIdFor(1 + a->rank % 2), NULL, 1 + a->rank % 2, n / 2, a->rank / 2, simOpt.nodes,
                gpuOf(a), &world);
  static const int funcs[] = {SIM_FUNC_ALLREDUCE, SIM_FUNC_ALLGATHER, SIM_FUNC_REDUCESCATTER, SIM_FUNC_BROADCAST,
                              SIM_FUNC_REDUCE};
  int rc = 0;
  for (int it = 0; it < simOpt.iters && !rc; it++)
    for (size_t s = 0; s < NSWEEP && !rc; s++) {
      for (size_t f = 0; f < sizeof funcs / sizeof funcs[0] && !rc; f++) rc = runColl(&world, funcs[f], sweep[s], pxn);
      if (pxn) continue;
      if (!rc) rc = runAllToAll(&world, sweep[s]);
      if (!rc) rc = runSendRecv(&world, sweep[s]);
      if (!rc && haveSplit) rc = runColl(&split, SIM_FUNC_ALLREDUCE, sweep[s], false);
    }
  if (haveSplit) endComm(&split);
  endComm(&world);
  return 0;
}

static int doGraph(appArg* a) {
  simComm world;
  commWorld(&world, a, "graph");
  for (int it = 0; it < simOpt.iters; it++) {
    simTask t[2];
    initTask(&t[0], SIM_FUNC_ALLREDUCE, 1 << 20, -1, 0);
    initTask(&t[1], SIM_FUNC_ALLGATHER, 65536, -1, 2);
    simGroupSpec g = {.nTasks = 2, .tasks = t, .graphCaptured = true, .replays = 4};
    if (simRunGroup(&world, &g)) break;
  }
  endComm(&world);
  return 0;
}

static int doCe(appArg* a) {
  simComm world;
  commWorld(&world, a, "ce");
  uint64_t ceSeq = 0;
  for (int it = 0; it < simOpt.iters; it++)
    for (size_t s = 0; s < NSWEEP; s++) {
      simTask t;
      initTask(&t, s % 2 ? SIM_FUNC_ALLTOALL : SIM_FUNC_ALLGATHER, sweep[s], -1, 0);
      t.ceSeq = ceSeq++;
      simGroupSpec g = {.nTasks = 1, .tasks = &t, .ce = true};
      simRunGroup(&world, &g);
      runColl(&world, SIM_FUNC_ALLREDUCE, sweep[s], false); /* kernel path in between */
    }
  endComm(&world);
  return 0;
}

static int doChurn(appArg* a) {
  /* single-rank communicators, init/finalize in a loop: every cycle is a
   * dlclose + dlopen when this is the only rank of the process */
  int slot = 8 + (a->rank % 48);
  for (int it = 0; it < simOpt.iters; it++) {
    simComm c;
    simCommInit(&c, commIdFor(100 + it), it % 3 ? "churn" : NULL, slot, 1, 0, 1, gpuOf(a), NULL);
    if (it % 4 == 0) runColl(&c, SIM_FUNC_ALLREDUCE, 4096, false);
    simCommFinalize(&c);
  }
  return 0;
}

/* straggler: the last rank starts every collective --straggler-us late.
 * waiter: every rank but one (from the seed) does: that one waits for its
 * peers at each collective (the truth's `waiter` line names it). */
static int doStraggler(appArg* a, bool waiter) {
  simComm world;
  commWorld(&world, a, waiter ? "waiter" : "straggler");
  int n = nRanks();
  if (waiter) {
    simRng r;
    simRngSeed(&r, simOpt.seed * 104729 + 3);
    int early = (int)(simRngNext(&r) % (uint64_t)n);
    if (a->rank != early)
      world.straggleNs = (int64_t)simOpt.stragglerUs * 1000;
    else
      simTruthf("\"kind\":\"waiter\",\"comm\":\"0x%016llx\",\"rank\":%d,\"others_delay_ns\":%lld",
                (unsigned long long)world.commId, a->rank, (long long)simOpt.stragglerUs * 1000);
  } else if (a->rank == n - 1) {
    world.straggleNs = (int64_t)simOpt.stragglerUs * 1000;
    simTruthf("\"kind\":\"straggler\",\"comm\":\"0x%016llx\",\"rank\":%d,\"delay_ns\":%lld",
              (unsigned long long)world.commId, a->rank, (long long)world.straggleNs);
  }
  for (int it = 0; it < simOpt.iters; it++)
    for (size_t s = 0; s < NSWEEP; s++) runColl(&world, SIM_FUNC_ALLREDUCE, sweep[s], false);
  endComm(&world);
  return 0;
}

/* One rank, chosen from the seed, never posts AllReduce #k (k from the seed
 * too): it stays alive, as a rank stuck elsewhere does, until the others
 * give the collective up after --hang-timeout-ms. The truth's `hang` line
 * names it. */
static int doHang(appArg* a) {
  simComm world;
  commWorld(&world, a, "hang");
  int n = nRanks();
  simRng r;
  simRngSeed(&r, simOpt.seed * 31337 + 5);
  int hangRank = (int)(simRngNext(&r) % (uint64_t)n);
  int hangOp = 1 + (int)(simRngNext(&r) % 6);
  for (int op = 0; op < 7 + simOpt.iters; op++) {
    if (a->rank == hangRank && op == hangOp) {
      simTruthf("\"kind\":\"hang\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%d,\"func\":\"AllReduce\",\"seq\":%llu,"
                "\"timeout_ms\":%d",
                (unsigned long long)world.commId, a->rank, op,
                (unsigned long long)world.seq[SIM_FUNC_ALLREDUCE], simOpt.hangTimeoutMs);
      /* never posts the collective; waits until the others gave it up (at most twice their timeout) */
      uint64_t until = simNowNs() + 2ull * (uint64_t)simOpt.hangTimeoutMs * 1000000ull;
      while (n > 1 && simNowNs() < until &&
             atomic_load_explicit(&simShm->abortedOp[world.slot], memory_order_acquire) == 0) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
      }
      break;
    }
    if (runColl(&world, SIM_FUNC_ALLREDUCE, 65536, false)) break; /* the others give up after the timeout */
  }
  endComm(&world);
  return 0;
}

/* A rank that posts what the others do not, as PyTorch's flight-recorder
 * analyser classifies it: one rank (from the seed) at collective #k (1..6,
 * from the seed) of a run of AllReduces whose sizes cycle through the sweep
 *   mismatch_func   posts AllGather where the others post AllReduce;
 *   mismatch_count  posts the AllReduce with a quarter of the count;
 *   mismatch_dtype  posts it in bf16 (same count);
 *   skip            does not post it: from there it runs one behind, and the
 *                   others wait for it at their last (a hang).
 * The simulated ranks meet at every collective in order (the barrier counts
 * operations, not functions), so only `skip` hangs. The truth's `mismatch`
 * line names the rank and what it and the others posted. */
static int doMismatch(appArg* a, const char* what) {
  simComm world;
  commWorld(&world, a, what);
  int n = nRanks();
  simRng r;
  simRngSeed(&r, simOpt.seed * 7919 + 11);
  int oddRank = (int)(simRngNext(&r) % (uint64_t)n);
  int oddOp = 1 + (int)(simRngNext(&r) % 6);
  bool skip = !strcmp(what, "skip");
  int ops = 7 + simOpt.iters;
  for (int op = 0; op < ops; op++) {
    simTask t;
    initTask(&t, SIM_FUNC_ALLREDUCE, sweep[op % NSWEEP], -1, 0);
    if (a->rank == oddRank && op == oddOp) {
      simTask want = t;
      if (!strcmp(what, "mismatch_func"))
        t.func = SIM_FUNC_ALLGATHER;
      else if (!strcmp(what, "mismatch_count"))
        t.count /= 4, t.bytes /= 4;
      else if (!strcmp(what, "mismatch_dtype"))
        t.dtype = "ncclBfloat16", t.bytes /= 2;
      simTruthf(
          "\"kind\":\"mismatch\",\"what\":\"%s\",\"comm\":\"0x%016llx\",\"rank\":%d,\"op\":%d,"
          "\"posted\":{\"func\":\"%s\",\"seq\":%llu,\"count\":%zu,\"dtype\":\"%s\"},"
          "\"expected\":{\"func\":\"%s\",\"seq\":%llu,\"count\":%zu,\"dtype\":\"%s\"}",
          what, (unsigned long long)world.commId, a->rank, op, skip ? "none" : simFuncName(t.func),
          (unsigned long long)world.seq[t.func], skip ? (size_t)0 : t.count, skip ? "none" : t.dtype,
          simFuncName(want.func), (unsigned long long)world.seq[want.func], want.count, want.dtype);
      if (skip) continue;
    }
    simGroupSpec g = {.nTasks = 1, .tasks = &t};
    if (simRunGroup(&world, &g)) break; /* the others give up after the timeout */
  }
  if (skip && a->rank == oddRank) { /* stays alive until the others gave its missing collective up */
    uint64_t until = simNowNs() + 2ull * (uint64_t)simOpt.hangTimeoutMs * 1000000ull;
    while (n > 1 && simNowNs() < until &&
           atomic_load_explicit(&simShm->abortedOp[world.slot], memory_order_acquire) == 0) {
      struct timespec d = {0, 1000000};
      nanosleep(&d, NULL);
    }
  }
  endComm(&world);
  return 0;
}

static int doReuse(appArg* a) {
  simReuseCheckEnable();
  simComm world;
  commWorld(&world, a, "reuse");
  for (int it = 0; it < simOpt.iters * 50; it++) {
    runColl(&world, it % 2 ? SIM_FUNC_ALLGATHER : SIM_FUNC_ALLREDUCE, (size_t)(64 << (it % 8)), false);
    if (it % 5 == 0) runSendRecv(&world, 128);
  }
  endComm(&world);
  return 0;
}

static int doThreads(appArg* a) {
  simComm c;
  /* app thread `thread` of every rank joins communicator #thread */
  int slot = 16 + a->thread;
  simCommInit(&c, commIdFor(200 + a->thread), "threads", slot, nRanks(), a->rank, simOpt.nodes, gpuOf(a), NULL);
  for (int it = 0; it < simOpt.iters * 4; it++) {
    runColl(&c, SIM_FUNC_ALLREDUCE, (size_t)(1024 << (it % 6)), false);
    runSendRecv(&c, 4096);
  }
  endComm(&c);
  return 0;
}

static int doNasty(appArg* a) {
  simComm world;
  simCommInit(&world, commIdFor(0), NULL, 0, nRanks(), a->rank, simOpt.nodes, gpuOf(a), NULL);
  for (int it = 0; it < simOpt.iters; it++) {
    /* NULL strings (func, datatype, algo, proto) */
    simTask t;
    initTask(&t, SIM_FUNC_ALLREDUCE, 4096, -1, 0);
    t.dtype = NULL;
    simGroupSpec g = {.nTasks = 1, .tasks = &t};
    simRunGroup(&world, &g);
    /* huge count, every channel id up to 63 */
    initTask(&t, SIM_FUNC_ALLGATHER, 1 << 16, -1, 0);
    t.count = (size_t)-1 / 2;
    t.nChannels = 64;
    simRunGroup(&world, &g);
    /* unknown but in-range state ids on a live ProxyCtrl event, NULL-handle stop/update */
    const simPlugin* p = world.plugin;
    if (p && (__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & ncclProfileProxyCtrl)) {
      simEvent ev;
      ncclProfilerEventDescr_v6_t d = simDescr(ncclProfileProxyCtrl, NULL, 0);
      simStart(p, world.ctx, &ev, NULL, &d, false, getpid(), "\"nasty\":true");
      ncclProfilerEventStateArgs_v6_t sa;
      memset(&sa, 0, sizeof sa);
      for (int s = 0; s <= 30; s++) simRecord(p, &ev, s, &sa);
      simStop(p, &ev);
    }
    simNullHandleCalls(p);
  }
  endComm(&world);
  return 0;
}

/* Grouped work that NCCL (2.27+) coalesces into one kernel batch: four
 * AllReduces of one size in a group, and an all-to-all's P2ps. */
static int doBatch(appArg* a) {
  simComm world;
  commWorld(&world, a, "batch");
  for (int it = 0; it < simOpt.iters * 4; it++) {
    simTask t[4];
    size_t bytes = (size_t)(65536 << (it % 4));
    for (int i = 0; i < 4; i++) initTask(&t[i], SIM_FUNC_ALLREDUCE, bytes, -1, 0);
    simGroupSpec g = {.nTasks = 4, .tasks = t};
    if (simRunGroup(&world, &g)) break;
    if (runAllToAll(&world, bytes)) break;
  }
  endComm(&world);
  return 0;
}

/* Operations that emit no Coll: symmetric-memory AllReduces (2.28+),
 * Broadcasts run as AllGatherV (2.29+), copy-engine AllGathers, and an
 * all-to-all that includes a self send/recv; ordinary AllReduces between
 * them show what the others did to the KernelCh counters. */
static int doNoColl(appArg* a) {
  simComm world;
  commWorld(&world, a, "nocoll");
  int n = nRanks();
  uint64_t ceSeq = 0;
  for (int it = 0; it < simOpt.iters * 2; it++) {
    simTask t;
    initTask(&t, SIM_FUNC_ALLREDUCE, 1 << 20, -1, 0);
    t.sym = true;
    simGroupSpec g = {.nTasks = 1, .tasks = &t};
    if (simRunGroup(&world, &g)) break;
    runColl(&world, SIM_FUNC_ALLREDUCE, 1 << 20, false);
    runColl(&world, SIM_FUNC_BROADCAST, 1 << 20, false);
    runColl(&world, SIM_FUNC_ALLREDUCE, 1 << 20, false);
    initTask(&t, SIM_FUNC_ALLGATHER, 1 << 20, -1, 0);
    t.ceSeq = ceSeq, ceSeq += 2;
    g = (simGroupSpec){.nTasks = 1, .tasks = &t, .ce = true};
    simRunGroup(&world, &g);
    /* all-to-all with the self pair, as PyTorch's all_to_all_single posts it */
    simTask p2p[2 * SIM_MAX_RANKS / 4];
    int k = 0;
    for (int i = 0; i < n && k + 2 <= (int)(sizeof p2p / sizeof p2p[0]); i++) {
      initTask(&p2p[k++], SIM_FUNC_SEND, 65536, (world.rank + i) % n, (2 * i) % simOpt.channels);
      initTask(&p2p[k++], SIM_FUNC_RECV, 65536, (world.rank - i + n) % n, (2 * i + 1) % simOpt.channels);
    }
    g = (simGroupSpec){.nTasks = k, .tasks = p2p};
    simRunGroup(&world, &g);
    runColl(&world, SIM_FUNC_ALLREDUCE, 1 << 20, false);
  }
  endComm(&world);
  return 0;
}

/* Many small collectives launched back to back (the app does not wait):
 * with a slow proxy the GPU runs 64 works ahead of the KernelCh ring. */
static int doOverrun(appArg* a) {
  simComm world;
  commWorld(&world, a, "overrun");
  for (int it = 0; it < simOpt.iters * 100; it++)
    if (runColl(&world, SIM_FUNC_ALLREDUCE, 4096, false)) break;
  endComm(&world);
  return 0;
}

/* What leaks events: intra-node peers through a copy proxy (ProxyOps NCCL
 * 2.27+ never stops), receive steps started again until their post
 * succeeds, senders waiting for their receivers. */
static int doLeaks(appArg* a) {
  simComm world;
  commWorld(&world, a, "leaks");
  for (int it = 0; it < simOpt.iters * 4; it++)
    for (size_t s = 0; s < NSWEEP; s++) {
      runColl(&world, SIM_FUNC_ALLREDUCE, sweep[s], false);
      runSendRecv(&world, sweep[s]);
    }
  endComm(&world);
  return 0;
}

/* A split communicator shares the world's proxy and outlives it: the world
 * is finalized first, the proxy goes on serving the split (its ProxyCtrl
 * events keep the world's finalized context). */
static int doSplit(appArg* a) {
  simComm world, split;
  commWorld(&world, a, "split-world");
  int n = nRanks();
  simCommInit(&split, commIdFor(1 + a->rank % 2), "split", 1 + a->rank % 2, n > 1 ? n / 2 : 1, a->rank / 2,
              simOpt.nodes, gpuOf(a), &world);
  for (int it = 0; it < simOpt.iters; it++) runColl(&world, SIM_FUNC_ALLREDUCE, 65536, false);
  endComm(&world);
  for (int it = 0; it < simOpt.iters * 4; it++) runColl(&split, SIM_FUNC_ALLREDUCE, 65536, false);
  endComm(&split);
  return 0;
}

static const char* curScenario;

static void* appMain(void* arg) {
  appArg* a = arg;
  simTruthThreadBegin("app");
  const char* s = curScenario;
  if (!strcmp(s, "default")) a->rc = doDefault(a, false);
  else if (!strcmp(s, "pxn")) a->rc = doDefault(a, true);
  else if (!strcmp(s, "graph")) a->rc = doGraph(a);
  else if (!strcmp(s, "ce")) a->rc = doCe(a);
  else if (!strcmp(s, "churn")) a->rc = doChurn(a);
  else if (!strcmp(s, "straggler"))
    a->rc = doStraggler(a, false);
  else if (!strcmp(s, "waiter"))
    a->rc = doStraggler(a, true);
  else if (!strcmp(s, "hang")) a->rc = doHang(a);
  else if (!strcmp(s, "reuse")) a->rc = doReuse(a);
  else if (!strcmp(s, "threads")) a->rc = doThreads(a);
  else if (!strcmp(s, "nasty")) a->rc = doNasty(a);
  else if (!strcmp(s, "batch")) a->rc = doBatch(a);
  else if (!strcmp(s, "nocoll")) a->rc = doNoColl(a);
  else if (!strcmp(s, "overrun")) a->rc = doOverrun(a);
  else if (!strcmp(s, "leaks")) a->rc = doLeaks(a);
  else if (!strcmp(s, "split")) a->rc = doSplit(a);
  else if (!strncmp(s, "mismatch_", 9) || !strcmp(s, "skip"))
    a->rc = doMismatch(a, s);
  simTruthThreadEnd();
  return NULL;
}

void simScenarioPresets(const char* name) {
  if (!strcmp(name, "overrun") && simOpt.asyncDepth == 0) simOpt.asyncDepth = 256; /* the app does not wait */
  if (!strcmp(name, "leaks")) simOpt.copyProxy = true; /* intra-node peers through a copy proxy */
  /* Ranks give a collective up after this without the others (the sim's hang model). In `hang` it is the
   * scenario, and outlasts a plugin watchdog of a few seconds (README: 1.5 s) on a loaded machine, so the
   * stuck ranks are still stuck when it fires; elsewhere it only guards against a broken run, and must
   * outlast a slow start on a loaded machine: a second process 1 s late gave every collective of a
   * `straggler` run up (all aborted). */
  if (simOpt.hangTimeoutMs == 0)
    simOpt.hangTimeoutMs = !strcmp(name, "hang") ? 5000 : !strcmp(name, "skip") ? 3000 : 30000;
}

int simRunScenario(const char* name) {
  static const char* known[] = {"default",        "pxn",
                                "graph",          "ce",
                                "churn",          "straggler",
                                "hang",           "reuse",
                                "threads",        "nasty",
                                "batch",          "nocoll",
                                "overrun",        "leaks",
                                "split",          "mismatch_func",
                                "mismatch_count", "mismatch_dtype",
                                "skip",           "waiter"};
  bool ok = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok = ok || !strcmp(name, known[i]);
  if (!ok) {
    SIM_ERR("unknown scenario '%s'", name);
    return 2;
  }
  curScenario = name;
  int perRank = !strcmp(name, "threads") ? 4 : 1;
  int nt = simOpt.ranksPerProc * perRank;
  appArg* args = calloc((size_t)nt, sizeof *args);
  pthread_t* th = calloc((size_t)nt, sizeof *th);
  for (int i = 0; i < nt; i++) {
    args[i].local = i / perRank;
    args[i].thread = i % perRank;
    args[i].rank = simProcIndex * simOpt.ranksPerProc + args[i].local;
    int n = nRanks();
    if (args[i].local == 0 || 1) {
      simGpuClock g;
      int gpu = gpuOf(&args[i]);
      simGpuClockInit(&g, gpu, simOpt.seed);
      if (args[i].thread == 0)
        simTruthf("\"kind\":\"gpu_clock\",\"rank\":%d,\"gpu\":%d,\"offset_ns\":%lld,\"drift_ppm\":%.6f,"
                  "\"gran_ns\":%d,\"skew_ns\":%lld,\"node\":%d",
                  args[i].rank, gpu, (long long)g.offsetNs, g.driftPpm, g.granNs, (long long)g.skewNs,
                  args[i].rank / ((n + simOpt.nodes - 1) / simOpt.nodes));
    }
    simThreadCreate(&th[i], appMain, &args[i]);
  }
  int rc = 0;
  for (int i = 0; i < nt; i++) {
    simThreadJoin(th[i]);
    rc |= args[i].rc;
  }
  free(args);
  free(th);
  return rc;
}
