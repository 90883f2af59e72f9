/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: --bench-cadence, the cost of a plugin at the cadence NCCL calls it.
 *
 * A tight loop of identical calls (--bench-micro) keeps every line the
 * plugin touches in the calling core's L1. NCCL does not: a collective's
 * events come in a burst, then microseconds to milliseconds of other work
 * evict them, while the plugin's own background thread (if any) reads the
 * same lines on another core. This benchmark replays the sequences NCCL
 * emits, one per collective, with a gap of cache-evicting work between them
 * (--bench-gaps, us; 1 ms and longer gaps sleep), and times only the plugin
 * calls: each burst of calls (the application thread's part, the proxy
 * thread's part) between two clock reads. The empty plugin and the chosen one
 * (ncclProfiler_v6, dlopened directly) are driven alternately, repetition by
 * repetition, by the same threads. Sequences:
 *   net_coll    GroupApi, 23, CollApi, 24, KernelLaunch, Group, Coll; ProxyOp (19),
 *               4 ProxySteps (8, 20, 9), 2 KernelCh (22); stops: 12 events, 32 calls
 *   node_coll8  a single-node collective: API + launch events, 8 KernelCh
 *   node_coll32 the same with 32 KernelCh (a 32-channel AllReduce)
 *   p2p_pair    a Send and a Recv in one group: 2 P2pApi, 2 P2p, 2 ProxyOps with
 *               2 steps each, 2 KernelCh
 * Runs on the main thread plus --bench-threads workers, each with its own
 * communicator. Prints a table and one `BENCH_CADENCE {json}` line: ns per
 * collective and per event, medians over collectives. Drops are the
 * plugin's to count (ncclscope: `ncclscope report` on its trace).
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

enum { CS_NET, CS_NODE8, CS_NODE32, CS_P2P, CS_N };
static const char* const csNames[CS_N] = {"net_coll", "node_coll8", "node_coll32", "p2p_pair"};
static const int csEvents[CS_N] = {12, 13, 37, 15};
#define CAD_CFGS SIM_BENCH_MAX_PLUGINS
#define CAD_MAX_GAPS 8
#define EVICT_BYTES (8u << 20) /* more than this machine's L2 and its share of L3 */

typedef simBenchPlugin cadPlugin;

typedef struct {
  int ncfg; /* 2, or 3 with --bench-baseline */
  int index;
  cadPlugin* cfg;
  pthread_barrier_t* bar;
  int ngaps;
  int gapsUs[CAD_MAX_GAPS];
  double* samples[CAD_CFGS][CAD_MAX_GAPS][CS_N]; /* ns inside plugin calls per collective */
  size_t n[CAD_CFGS][CAD_MAX_GAPS][CS_N];
  unsigned char* evict;
  size_t evictPos;
  uint64_t sink;
} cadThread;

/* The plugins' log lines: with --verbose on stderr (ncclscope says there
 * what its writer thread cost), otherwise dropped. */
static void cadLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)level, (void)flags, (void)file, (void)line;
  if (!simOpt.verbose) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* Other work between collectives: walk a buffer larger than the caches for
 * gapUs; from 1 ms on the thread sleeps (NCCL's threads block between
 * collectives of a slow training step). */
static void gap(cadThread* t, int gapUs) {
  if (gapUs >= 1000) {
    struct timespec ts = {gapUs / 1000000, (long)(gapUs % 1000000) * 1000L};
    nanosleep(&ts, NULL);
    return;
  }
  uint64_t until = simNowNs() + (uint64_t)gapUs * 1000ull;
  do {
    for (int i = 0; i < 64; i++, t->evictPos = (t->evictPos + 64) % EVICT_BYTES) t->sink += t->evict[t->evictPos]++;
  } while (simNowNs() < until);
}

typedef struct {
  const ncclProfiler_v6_t* api;
  void* ctx;
} cadTarget;

static void* start(const cadTarget* x, ncclProfilerEventDescr_v6_t* d) {
  void* h = NULL;
  x->api->startEvent(x->ctx, &h, d);
  return h;
}

static ncclProfilerEventDescr_v6_t descr(uint64_t type, void* parent) { return simDescr(type, parent, 0); }

/* The application thread's burst: API events, launch, Group and the tasks' start/stop. */
static void appBurst(const cadTarget* x, int seq, uint64_t i, void** tasks, int ntasks) {
  const ncclProfiler_v6_t* api = x->api;
  ncclProfilerEventDescr_v6_t d = descr(ncclProfileGroupApi, NULL);
  d.groupApi.groupDepth = 1;
  void* gapi = start(x, &d);
  api->recordEventState(gapi, ncclProfilerGroupStartApiStop, NULL);
  void* apis[2];
  bool p2p = seq == CS_P2P;
  for (int k = 0; k < ntasks; k++) {
    d = descr(p2p ? ncclProfileP2pApi : ncclProfileCollApi, gapi);
    if (p2p) {
      d.p2pApi.func = k ? "Recv" : "Send", d.p2pApi.count = 65536, d.p2pApi.datatype = "ncclFloat32";
    } else {
      d.collApi.func = "AllReduce", d.collApi.count = 262144, d.collApi.datatype = "ncclFloat32";
    }
    apis[k] = start(x, &d);
    api->stopEvent(apis[k]);
  }
  api->recordEventState(gapi, ncclProfilerGroupEndApiStart, NULL);
  d = descr(ncclProfileKernelLaunch, gapi);
  void* kl = start(x, &d);
  api->stopEvent(kl);
  d = descr(ncclProfileGroup, NULL);
  void* group = start(x, &d);
  int nch = seq == CS_NODE8 ? 8 : seq == CS_NODE32 ? 32 : p2p ? 1 : 2;
  for (int k = 0; k < ntasks; k++) {
    d = descr(p2p ? ncclProfileP2p : ncclProfileColl, apis[k]);
    if (p2p) {
      d.p2p.func = k ? "Recv" : "Send", d.p2p.count = 65536, d.p2p.datatype = "ncclFloat32", d.p2p.peer = 1;
      d.p2p.nChannels = (uint8_t)nch, d.p2p.parentGroup = group;
    } else {
      d.coll.func = "AllReduce", d.coll.seqNumber = i, d.coll.count = 262144, d.coll.datatype = "ncclFloat32";
      d.coll.algo = "RING", d.coll.proto = "SIMPLE", d.coll.nChannels = (uint8_t)nch, d.coll.nWarps = 16;
      d.coll.parentGroup = group;
    }
    tasks[k] = start(x, &d);
  }
  for (int k = 0; k < ntasks; k++) api->stopEvent(tasks[k]);
  api->stopEvent(group);
  api->stopEvent(gapi);
}

/* The proxy thread's burst: ProxyOps and steps (networked), KernelCh. */
static void proxyBurst(const cadTarget* x, int seq, void** tasks, int ntasks) {
  const ncclProfiler_v6_t* api = x->api;
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  sa.proxyStep.transSize = 131072;
  int nsteps = seq == CS_NET ? 4 : seq == CS_P2P ? 2 : 0;
  for (int k = 0; k < ntasks && nsteps; k++) {
    ncclProfilerEventDescr_v6_t d = descr(ncclProfileProxyOp, tasks[k]);
    d.proxyOp.pid = getpid(), d.proxyOp.channelId = 0, d.proxyOp.peer = 1, d.proxyOp.nSteps = nsteps;
    d.proxyOp.chunkSize = 131072, d.proxyOp.isSend = seq == CS_P2P ? k == 0 : 1;
    void* op = start(x, &d);
    api->recordEventState(op, ncclProfilerProxyOpInProgress_v4, &sa);
    for (int s = 0; s < nsteps; s++) {
      d = descr(ncclProfileProxyStep, op);
      d.proxyStep.step = s;
      void* st = start(x, &d);
      api->recordEventState(st, ncclProfilerProxyStepSendGPUWait, &sa);
      api->recordEventState(st, ncclProfilerProxyStepSendPeerWait_v4, &sa);
      api->recordEventState(st, ncclProfilerProxyStepSendWait, &sa);
      api->stopEvent(st);
    }
    api->stopEvent(op);
  }
  int nkch = seq == CS_NODE8 ? 8 : seq == CS_NODE32 ? 32 : 2;
  for (int c = 0; c < nkch; c++) {
    ncclProfilerEventDescr_v6_t d = descr(ncclProfileKernelCh, tasks[seq == CS_P2P ? c % 2 : 0]);
    d.kernelCh.channelId = (uint8_t)c;
    d.kernelCh.pTimer = 1795452499384635392ull + (uint64_t)c * 2048;
    void* kc = start(x, &d);
    ncclProfilerEventStateArgs_v6_t ka;
    memset(&ka, 0, sizeof ka);
    ka.kernelCh.pTimer = d.kernelCh.pTimer + 65536;
    api->recordEventState(kc, ncclProfilerKernelChStop, &ka);
    api->stopEvent(kc);
  }
}

static void* cadWorker(void* arg) {
  cadThread* t = arg;
  t->evict = calloc(EVICT_BYTES, 1);
  void* ctx[CAD_CFGS] = {0};
  int ncfg = t->ncfg;
  for (int c = 0; c < ncfg; c++) {
    int mask = 0;
    ctx[c] = NULL;
    t->cfg[c].api->init(&ctx[c], 0xCADE0000ull + (uint64_t)t->index, &mask, "cadence", 2, 2, t->index % 2, cadLog);
  }
  for (int rep = 0; rep < simOpt.benchReps; rep++)
    for (int k = 0; k < ncfg; k++) {
      int c = (rep & 1) ? ncfg - 1 - k : k; /* alternate the order */
      cadTarget x = {t->cfg[c].api, ctx[c]};
      pthread_barrier_wait(t->bar);
      for (int g = 0; g < t->ngaps; g++)
        for (int s = 0; s < CS_N; s++) {
          /* about 20 ms of gaps per (gap, sequence), at least 20 collectives */
          int colls = 20000 / (t->gapsUs[g] + 5);
          if (colls < 20) colls = 20;
          if (colls > 4000) colls = 4000;
          for (int i = 0; i < colls; i++) {
            void* tasks[2];
            int ntasks = s == CS_P2P ? 2 : 1;
            gap(t, t->gapsUs[g]);
            uint64_t a0 = simNowNs();
            appBurst(&x, s, (uint64_t)i, tasks, ntasks);
            uint64_t a1 = simNowNs();
            gap(t, t->gapsUs[g] / 4); /* the proxy's part comes later, after other work */
            uint64_t p0 = simNowNs();
            proxyBurst(&x, s, tasks, ntasks);
            uint64_t p1 = simNowNs();
            size_t* n = &t->n[c][g][s];
            t->samples[c][g][s][(*n)++] = (double)((a1 - a0) + (p1 - p0));
          }
        }
      pthread_barrier_wait(t->bar);
    }
  for (int c = 0; c < ncfg; c++)
    if (ctx[c]) t->cfg[c].api->finalize(ctx[c]);
  free(t->evict);
  return NULL;
}

int simRunBenchCadence(void) {
  cadPlugin cfg[CAD_CFGS];
  int ncfg = 0;
  int rc = simBenchOpenPlugins("--bench-cadence", cfg, &ncfg);
  if (rc) return rc;
  int gaps[CAD_MAX_GAPS], ngaps = 0;
  char* spec = strdup(simOpt.benchGaps ? simOpt.benchGaps : "1,10,100,1000");
  for (char* tok = strtok(spec, ","); tok && ngaps < CAD_MAX_GAPS; tok = strtok(NULL, ",")) gaps[ngaps++] = atoi(tok);
  free(spec);
  int n = simOpt.benchThreads < 1 ? 1 : simOpt.benchThreads;
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)n);
  cadThread* th = calloc((size_t)n, sizeof *th);
  pthread_t* tid = calloc((size_t)n, sizeof *tid);
  size_t per = (size_t)simOpt.benchReps * 4000;
  for (int i = 0; i < n; i++) {
    th[i].index = i, th[i].ncfg = ncfg, th[i].cfg = cfg, th[i].bar = &bar, th[i].ngaps = ngaps;
    memcpy(th[i].gapsUs, gaps, sizeof gaps);
    for (int c = 0; c < ncfg; c++)
      for (int g = 0; g < ngaps; g++)
        for (int s = 0; s < CS_N; s++) th[i].samples[c][g][s] = calloc(per, sizeof(double));
  }
  for (int i = 0; i < n; i++) pthread_create(&tid[i], NULL, cadWorker, &th[i]);
  for (int i = 0; i < n; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&bar);

  printf("cadence: %d thread(s), own communicators, %d reps; ns inside the plugin calls per collective "
         "(medians), gap of cache-evicting work between collectives\n", n, simOpt.benchReps);
  printf("%-12s %8s %10s %10s %10s %12s %10s", "sequence", "gap_us", "empty", "plugin", "added", "added/event",
         "p90_added");
  if (ncfg == 3) printf(" %10s %14s", "baseline", "base_add/event");
  printf("\n");
  char json[16384];
  size_t jl = (size_t)snprintf(json, sizeof json, "{\"threads\":%d,\"reps\":%d,\"rows\":[", n, simOpt.benchReps);
  double* all = calloc(per * (size_t)n, sizeof(double));
  int rows = 0;
  for (int g = 0; g < ngaps; g++)
    for (int s = 0; s < CS_N; s++) {
      double med[CAD_CFGS] = {0}, p90[CAD_CFGS] = {0};
      for (int c = 0; c < ncfg; c++) {
        size_t m = 0;
        for (int i = 0; i < n; i++) {
          memcpy(all + m, th[i].samples[c][g][s], th[i].n[c][g][s] * sizeof(double));
          m += th[i].n[c][g][s];
        }
        simBenchSort(all, m);
        med[c] = m ? all[m / 2] : 0;
        p90[c] = m ? all[m * 9 / 10] : 0;
      }
      double added = med[1] - med[0];
      printf("%-12s %8d %10.1f %10.1f %10.1f %12.1f %10.1f", csNames[s], gaps[g], med[0], med[1], added,
             added / csEvents[s], p90[1] - p90[0]);
      if (ncfg == 3) printf(" %10.1f %14.1f", med[2], (med[2] - med[0]) / csEvents[s]);
      printf("\n");
      jl += (size_t)snprintf(json + jl, sizeof json - jl,
                             "%s{\"seq\":\"%s\",\"gap_us\":%d,\"events\":%d,\"empty_ns\":%.1f,\"plugin_ns\":%.1f,"
                             "\"added_ns\":%.1f,\"added_per_event_ns\":%.2f,\"p90_added_ns\":%.1f,"
                             "\"baseline_ns\":%.1f}",
                             rows++ ? "," : "", csNames[s], gaps[g], csEvents[s], med[0], med[1], added,
                             added / csEvents[s], p90[1] - p90[0], med[2]);
    }
  snprintf(json + jl, sizeof json - jl, "]}");
  printf("BENCH_CADENCE %s\n", json);
  fflush(stdout);
  simBenchClosePlugins(cfg);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < ncfg; c++)
      for (int g = 0; g < ngaps; g++)
        for (int s = 0; s < CS_N; s++) free(th[i].samples[c][g][s]);
  free(all);
  free(th);
  free(tid);
  return 0;
}
