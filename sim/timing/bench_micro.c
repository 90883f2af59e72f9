/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: --bench-micro, the cost of identical plugin calls in a tight loop.
 *
 * Runs on the main thread plus --bench-threads worker threads. The empty
 * plugin and the chosen plugin (both through ncclProfiler_v6, dlopened
 * directly: load rules are not what is measured) are driven alternately,
 * repetition by repetition, by the same threads. Every thread times batches
 * of --bench-batch identical call sequences with one clock read per batch,
 * so the clock's own cost is amortised:
 *   step_pair     ProxyStep start + stop under a live ProxyOp
 *   step_3states  ProxyStep start, 3 states (8, 20, 9 with transSize), stop
 *   coll_pair     Coll start + stop under a live CollApi (nChannels 0)
 * stop and recordEventState are called for every handle, NULL included, so
 * the empty plugin's numbers are the cost of the calls themselves.
 * Between repetitions the workers sleep (untimed) so that a plugin's
 * background thread can drain its buffers; NULL handles a plugin returned
 * are counted and printed: they mean the drop path was measured.
 * --bench-seq NAME runs only that sequence (e.g. under callgrind).
 * Each thread inits its own communicator, or with --bench-shared-comm all
 * threads share one (initialised by the main thread).
 * Prints a table and one `BENCH_MICRO {json}` line (medians over batches;
 * with --bench-baseline the ratio of added ns to the baseline's, from the
 * medians and from the 10th percentiles, which a loaded machine moves less).
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

enum { SEQ_STEP, SEQ_STEP3, SEQ_COLL, SEQ_N };
static const char* const seqNames[SEQ_N] = {"step_pair", "step_3states", "coll_pair"};
#define MICRO_CFGS SIM_BENCH_MAX_PLUGINS

typedef simBenchPlugin microPlugin;

typedef struct {
  int index;
  int nthreads;
  int ncfg; /* 2, or 3 with --bench-baseline */
  microPlugin* cfg;
  pthread_barrier_t* bar;
  double* samples[MICRO_CFGS][SEQ_N]; /* ns per sequence, one per batch */
  size_t nsamples[MICRO_CFGS][SEQ_N];
  uint64_t nullHandles[MICRO_CFGS];
  uint64_t handles[MICRO_CFGS];
} microThread;

static void microLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static void microSleepMs(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void* microInit(const microPlugin* p, int rank, int nranks) {
  void* ctx = NULL;
  int mask = 0;
  char name[32];
  snprintf(name, sizeof name, "micro%d", rank);
  if (p->api->init(&ctx, 0x6d6963726fULL + (uint64_t)rank, &mask, name, 1, nranks, rank, microLog) != ncclSuccess)
    return NULL;
  return ctx;
}

/* One batch of n sequences of kind `seq`; returns elapsed ns. */
static uint64_t microBatch(const ncclProfiler_v6_t* api, void* ctx, int seq, int n, void* op, void* collApi,
                           uint64_t* nulls) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  sa.proxyStep.transSize = 65536;
  uint64_t missing = 0;
  uint64_t t0 = simNowNs();
  if (seq == SEQ_COLL) {
    d.type = ncclProfileColl;
    d.parentObj = collApi;
    d.coll.func = "AllReduce";
    d.coll.datatype = "ncclFloat32";
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    d.coll.count = 65536;
    d.coll.nWarps = 16;
    for (int i = 0; i < n; i++) {
      void* h = NULL;
      d.coll.seqNumber = (uint64_t)i;
      api->startEvent(ctx, &h, &d);
      missing += h == NULL;
      api->stopEvent(h);
    }
  } else {
    d.type = ncclProfileProxyStep;
    d.parentObj = op;
    for (int i = 0; i < n; i++) {
      void* h = NULL;
      d.proxyStep.step = i;
      api->startEvent(ctx, &h, &d);
      missing += h == NULL;
      if (seq == SEQ_STEP3) {
        api->recordEventState(h, ncclProfilerProxyStepSendGPUWait, &sa);
        api->recordEventState(h, ncclProfilerProxyStepSendPeerWait_v4, &sa);
        api->recordEventState(h, ncclProfilerProxyStepSendWait, &sa);
      }
      api->stopEvent(h);
    }
  }
  uint64_t t = simNowNs() - t0;
  *nulls += missing;
  return t;
}

static void* microWorker(void* arg) {
  microThread* t = arg;
  int batch = simOpt.benchBatch, batches = simOpt.benchBatches;
  void* ctx[MICRO_CFGS] = {0};
  int ncfg = t->ncfg;
  for (int c = 0; c < ncfg; c++)
    ctx[c] = simOpt.benchShared ? t->cfg[c].sharedCtx : microInit(&t->cfg[c], t->index, t->nthreads);
  for (int rep = 0; rep < simOpt.benchReps; rep++) {
    for (int k = 0; k < ncfg; k++) {
      int c = (rep & 1) ? ncfg - 1 - k : k; /* alternate the order: no config always runs first */
      const ncclProfiler_v6_t* api = t->cfg[c].api;
      ncclProfilerEventDescr_v6_t d;
      memset(&d, 0, sizeof d);
      void *op = NULL, *collApi = NULL;
      d.type = ncclProfileProxyOp;
      d.proxyOp.pid = getpid();
      d.proxyOp.channelId = (uint8_t)(t->index % 64);
      d.proxyOp.peer = 1;
      d.proxyOp.nSteps = batch;
      d.proxyOp.chunkSize = 65536;
      d.proxyOp.isSend = 1;
      api->startEvent(ctx[c], &op, &d);
      memset(&d, 0, sizeof d);
      d.type = ncclProfileCollApi;
      d.collApi.func = "AllReduce";
      d.collApi.datatype = "ncclFloat32";
      d.collApi.count = 65536;
      api->startEvent(ctx[c], &collApi, &d);
      t->handles[c] += 2;
      t->nullHandles[c] += (op == NULL) + (collApi == NULL);
      pthread_barrier_wait(t->bar);
      for (int s = 0; s < SEQ_N; s++)
        for (int b = 0; b < batches && (simOpt.benchSeqMask >> s & 1); b++) {
          uint64_t ns = microBatch(api, ctx[c], s, batch, op, collApi, &t->nullHandles[c]);
          t->handles[c] += (uint64_t)batch;
          t->samples[c][s][t->nsamples[c][s]++] = (double)ns / batch;
        }
      api->stopEvent(collApi);
      api->stopEvent(op);
      pthread_barrier_wait(t->bar);
      microSleepMs(simOpt.benchSettleMs); /* untimed: the plugin's writer drains and recycles */
    }
  }
  if (!simOpt.benchShared)
    for (int c = 0; c < ncfg; c++)
      if (ctx[c]) t->cfg[c].api->finalize(ctx[c]);
  return NULL;
}

/* --bench-seq: "all" or one sequence name; 0 if unknown. */
unsigned simBenchSeqMask(const char* name) {
  if (!strcmp(name, "all")) return (1u << SEQ_N) - 1;
  for (int s = 0; s < SEQ_N; s++)
    if (!strcmp(name, seqNames[s])) return 1u << s;
  return 0;
}

int simRunBenchMicro(void) {
  microPlugin cfg[MICRO_CFGS];
  int ncfg = 0;
  int rc = simBenchOpenPlugins("--bench-micro", cfg, &ncfg);
  if (rc) return rc;
  int n = simOpt.benchThreads < 1 ? 1 : simOpt.benchThreads;
  if (simOpt.benchShared)
    for (int c = 0; c < ncfg; c++) cfg[c].sharedCtx = microInit(&cfg[c], 0, 1);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)n);
  microThread* th = calloc((size_t)n, sizeof *th);
  pthread_t* tid = calloc((size_t)n, sizeof *tid);
  size_t per = (size_t)simOpt.benchReps * (size_t)simOpt.benchBatches;
  for (int i = 0; i < n; i++) {
    th[i].index = i, th[i].nthreads = n, th[i].ncfg = ncfg, th[i].cfg = cfg, th[i].bar = &bar;
    for (int c = 0; c < ncfg; c++)
      for (int s = 0; s < SEQ_N; s++) th[i].samples[c][s] = calloc(per, sizeof(double));
  }
  for (int i = 0; i < n; i++) pthread_create(&tid[i], NULL, microWorker, &th[i]);
  for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&bar);

  /* Medians over every batch of every thread and repetition. */
  double med[MICRO_CFGS][SEQ_N] = {{0}}, p10[MICRO_CFGS][SEQ_N] = {{0}}, p90[MICRO_CFGS][SEQ_N] = {{0}};
  double* all = calloc(per * (size_t)n, sizeof(double));
  uint64_t nulls[MICRO_CFGS] = {0}, handles[MICRO_CFGS] = {0};
  for (int c = 0; c < ncfg; c++) {
    for (int i = 0; i < n; i++) nulls[c] += th[i].nullHandles[c], handles[c] += th[i].handles[c];
    for (int s = 0; s < SEQ_N; s++) {
      size_t m = 0;
      for (int i = 0; i < n; i++) {
        memcpy(all + m, th[i].samples[c][s], th[i].nsamples[c][s] * sizeof(double));
        m += th[i].nsamples[c][s];
      }
      simBenchSort(all, m);
      med[c][s] = m ? all[m / 2] : 0;
      p10[c][s] = m ? all[m / 10] : 0;
      p90[c][s] = m ? all[m * 9 / 10] : 0;
    }
  }
  printf("micro: %d thread(s), %s communicator%s, %d reps x %d batches x %d sequences, ns per sequence\n", n,
         simOpt.benchShared ? "one shared" : "own", simOpt.benchShared ? "" : " each", simOpt.benchReps,
         simOpt.benchBatches, simOpt.benchBatch);
  printf("%-14s %10s %10s %10s %10s %10s %8s", "sequence", "empty", "plugin", "added", "p10", "p90", "ratio");
  if (ncfg == 3) printf(" %10s %10s %12s %14s", "baseline", "base_added", "added/base", "p10 added/base");
  printf("\n");
  char json[4096];
  size_t jl = (size_t)snprintf(json, sizeof json,
                               "{\"threads\":%d,\"shared_comm\":%s,\"reps\":%d,\"batches\":%d,\"batch\":%d,"
                               "\"null_handles\":%llu,\"handles\":%llu,\"seqs\":{",
                               n, simOpt.benchShared ? "true" : "false", simOpt.benchReps, simOpt.benchBatches,
                               simOpt.benchBatch, (unsigned long long)nulls[1], (unsigned long long)handles[1]);
  for (int s = 0; s < SEQ_N; s++) {
    double added = med[1][s] - med[0][s], ratio = med[0][s] > 0 ? med[1][s] / med[0][s] : 0;
    printf("%-14s %10.1f %10.1f %10.1f %10.1f %10.1f %8.2f", seqNames[s], med[0][s], med[1][s], added, p10[1][s],
           p90[1][s], ratio);
    double base_added = med[2][s] - med[0][s];
    /* the same ratio from the 10th percentiles: the batches least disturbed by the rest of the machine */
    double p10_added = p10[1][s] - p10[0][s], p10_base_added = p10[2][s] - p10[0][s];
    if (ncfg == 3)
      printf(" %10.1f %10.1f %12.2f %14.2f", med[2][s], base_added, base_added > 0 ? added / base_added : 0,
             p10_base_added > 0 ? p10_added / p10_base_added : 0);
    printf("\n");
    jl += (size_t)snprintf(json + jl, sizeof json - jl,
                           "%s\"%s\":{\"empty_ns\":%.2f,\"plugin_ns\":%.2f,\"added_ns\":%.2f,\"plugin_p10_ns\":%.2f,"
                           "\"plugin_p90_ns\":%.2f,\"empty_p10_ns\":%.2f,\"empty_p90_ns\":%.2f,\"baseline_ns\":%.2f,"
                           "\"baseline_p10_ns\":%.2f}",
                           s ? "," : "", seqNames[s], med[0][s], med[1][s], added, p10[1][s], p90[1][s], p10[0][s],
                           p90[0][s], ncfg == 3 ? med[2][s] : 0.0, ncfg == 3 ? p10[2][s] : 0.0);
  }
  snprintf(json + jl, sizeof json - jl, "}}");
  if (nulls[1])
    printf("warning: the plugin returned %llu NULL handle(s) of %llu: part of the drop path was measured\n",
           (unsigned long long)nulls[1], (unsigned long long)handles[1]);
  printf("BENCH_MICRO %s\n", json);
  fflush(stdout);

  for (int c = 0; c < ncfg; c++)
    if (cfg[c].sharedCtx) cfg[c].api->finalize(cfg[c].sharedCtx);
  simBenchClosePlugins(cfg);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < ncfg; c++)
      for (int s = 0; s < SEQ_N; s++) free(th[i].samples[c][s]);
  free(all);
  free(th);
  free(tid);
  return 0;
}
