/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: --bench, the cost of a plugin's calls per thread kind.
 *
 * Runs on the main thread: for each configuration (no plugin, the empty
 * plugin, the chosen plugin) it loads the library, runs the same --fast
 * workload on --bench-threads ranks (at least 2, on 2 nodes, so that proxy
 * and network events exist), and reports ns per start/stop/record per thread
 * kind and ns per whole collective on the app thread. With --bench-reps R
 * the configurations are run R times, interleaved (rep 1: none, empty,
 * plugin; rep 2: plugin, empty, none; ...) and the medians are reported.
 * Timing includes one clock_gettime pair per call (measured and printed as
 * clock_pair_ns); calls.c accumulates per thread, so threads never wait on
 * each other to record a timing. Prints a table and one `BENCH {json}` line.
 */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_shared.h"

extern int simProcIndex;

#define BENCH_CFGS 3
#define BENCH_ROLES 5
#define BENCH_MAX_REPS 1000

typedef struct {
  int rank, n;
  uint64_t ns, groups;
} benchArg;

/* One configuration's result in one repetition. */
typedef struct {
  double collNs;
  double callNs[BENCH_ROLES][3];
  uint64_t calls[BENCH_ROLES][3];
} benchRun;

static void* benchApp(void* arg) {
  benchArg* a = arg;
  simTruthThreadBegin("app");
  simComm c;
  simCommInit(&c, 0xbe9c4, "bench", 60, a->n, a->rank, 2, a->rank, NULL);
  uint64_t t0 = simNowNs();
  int iters = simOpt.iters > 0 ? simOpt.iters * 100 : 100;
  for (int i = 0; i < iters; i++) {
    simTask t;
    memset(&t, 0, sizeof t);
    t.func = SIM_FUNC_ALLREDUCE;
    t.bytes = 262144;
    t.count = t.bytes / 4;
    t.dtype = "ncclFloat32";
    t.nChannels = 2;
    simGroupSpec g = {.nTasks = 1, .tasks = &t};
    simRunGroup(&c, &g);
  }
  a->ns = simNowNs() - t0;
  a->groups = (uint64_t)iters;
  simCommFinalize(&c);
  simTruthThreadEnd();
  return NULL;
}

static void benchOnce(const char* spec, int n, benchRun* out) {
  simLoaderForceSpec(spec);
  memset(simShm, 0, sizeof *simShm);
  benchArg* a = calloc((size_t)n, sizeof *a);
  pthread_t* th = calloc((size_t)n, sizeof *th);
  for (int i = 0; i < n; i++) {
    a[i].rank = i, a[i].n = n;
    simThreadCreate(&th[i], benchApp, &a[i]);
  }
  uint64_t ns = 0, groups = 0;
  for (int i = 0; i < n; i++) {
    simThreadJoin(th[i]);
    ns += a[i].ns, groups += a[i].groups;
  }
  simBenchAcc acc[BENCH_ROLES];
  simBenchTake(acc);
  out->collNs = groups ? (double)ns / (double)groups : 0;
  for (int r = 0; r < BENCH_ROLES; r++)
    for (int q = 0; q < 3; q++) {
      out->calls[r][q] = acc[r].n[q];
      out->callNs[r][q] = acc[r].n[q] ? (double)acc[r].ns[q] / (double)acc[r].n[q] : 0;
    }
  free(a);
  free(th);
}

static int cmpDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpDouble);
  return n ? v[n / 2] : 0;
}

int simRunBench(void) {
  if (simOpt.benchMicro) return simRunBenchMicro();
  if (simOpt.benchCadence) return simRunBenchCadence();
  if (simOpt.benchNccl) return simRunBenchNccl();
  char exe[4096], emptyPath[4200];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  snprintf(emptyPath, sizeof emptyPath, "%s/libnccl-profiler-empty.so", dirname(exe));
  const char* chosen = simOpt.plugin ? simOpt.plugin : getenv("NCCL_PROFILER_PLUGIN");
  const char* names[BENCH_CFGS] = {"none", "empty", "plugin"};
  const char* specs[BENCH_CFGS] = {"none", emptyPath, chosen};
  int ncfg = chosen && strcasecmp(chosen, "none") ? 3 : 2;
  static const char* roles[BENCH_ROLES] = {"app", "proxy", "net", "cuda_cb", "other"};
  static const char* kinds[3] = {"start", "stop", "record"};
  int reps = simOpt.benchReps < 1 ? 1 : simOpt.benchReps > BENCH_MAX_REPS ? BENCH_MAX_REPS : simOpt.benchReps;
  simSharedInit(1);
  simBenchOn = true;
  int n = simOpt.benchThreads < 2 ? 2 : simOpt.benchThreads;
  double clockNs = simBenchClockPairNs();

  benchRun* runs = calloc((size_t)reps * BENCH_CFGS, sizeof *runs);
  for (int rep = 0; rep < reps; rep++)
    for (int j = 0; j < ncfg; j++) {
      int cfg = (rep & 1) ? ncfg - 1 - j : j; /* alternate the order between repetitions */
      benchOnce(specs[cfg], n, &runs[rep * BENCH_CFGS + cfg]);
    }

  /* Medians over repetitions. */
  benchRun med[BENCH_CFGS];
  memset(med, 0, sizeof med);
  double* v = calloc((size_t)reps, sizeof *v);
  for (int cfg = 0; cfg < ncfg; cfg++) {
    for (int rep = 0; rep < reps; rep++) v[rep] = runs[rep * BENCH_CFGS + cfg].collNs;
    med[cfg].collNs = median(v, reps);
    for (int r = 0; r < BENCH_ROLES; r++)
      for (int q = 0; q < 3; q++) {
        for (int rep = 0; rep < reps; rep++) {
          v[rep] = runs[rep * BENCH_CFGS + cfg].callNs[r][q];
          med[cfg].calls[r][q] += runs[rep * BENCH_CFGS + cfg].calls[r][q];
        }
        med[cfg].callNs[r][q] = median(v, reps);
      }
  }
  free(v);
  free(runs);

  printf("bench: %d rank(s), %d repetition(s), medians; each call timing includes one clock pair (%.1f ns)\n", n,
         reps, clockNs);
  printf("%-8s %-6s %12s %12s %12s %10s %10s %10s\n", "config", "thread", "start_ns", "stop_ns", "record_ns", "starts",
         "stops", "records");
  char json[8192];
  size_t jl = (size_t)snprintf(json, sizeof json, "{\"threads\":%d,\"reps\":%d,\"clock_pair_ns\":%.1f,\"configs\":[",
                               n, reps, clockNs);
  for (int cfg = 0; cfg < ncfg; cfg++) {
    jl += (size_t)snprintf(json + jl, sizeof json - jl, "%s{\"name\":\"%s\",\"coll_ns\":%.1f,\"roles\":{",
                           cfg ? "," : "", names[cfg], med[cfg].collNs);
    int first = 1;
    for (int r = 0; r < BENCH_ROLES; r++) {
      const uint64_t* c = med[cfg].calls[r];
      const double* x = med[cfg].callNs[r];
      if (!c[0] && !c[1] && !c[2]) continue;
      printf("%-8s %-6s %12.1f %12.1f %12.1f %10llu %10llu %10llu\n", names[cfg], roles[r], x[0], x[1], x[2],
             (unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2]);
      jl += (size_t)snprintf(json + jl, sizeof json - jl,
                             "%s\"%s\":{\"start_ns\":%.1f,\"stop_ns\":%.1f,\"record_ns\":%.1f,\"starts\":%llu,"
                             "\"stops\":%llu,\"records\":%llu}",
                             first ? "" : ",", roles[r], x[0], x[1], x[2], (unsigned long long)c[0],
                             (unsigned long long)c[1], (unsigned long long)c[2]);
      first = 0;
    }
    jl += (size_t)snprintf(json + jl, sizeof json - jl, "}}");
    printf("%-8s %-6s per collective (app thread, whole group): %.1f ns\n", names[cfg], "app", med[cfg].collNs);
  }
  if (ncfg == 3) {
    printf("plugin / empty (medians):");
    for (int r = 0; r < BENCH_ROLES; r++)
      for (int q = 0; q < 3; q++)
        if (med[1].calls[r][q] && med[2].calls[r][q] && med[1].callNs[r][q] > 0)
          printf(" %s.%s %.2f", roles[r], kinds[q], med[2].callNs[r][q] / med[1].callNs[r][q]);
    printf("; per collective %.2f\n", med[1].collNs > 0 ? med[2].collNs / med[1].collNs : 0);
  }
  snprintf(json + jl, sizeof json - jl, "]}");
  printf("BENCH %s\n", json);
  return simPluginErrors() ? 1 : 0;
}
