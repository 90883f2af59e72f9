/* ncclscope-sim: --bench, the cost of a plugin's calls per thread kind.
 *
 * Runs on the main thread: for each configuration (no plugin, the empty
 * plugin, the chosen plugin) it loads the library, runs the same --fast
 * workload on --bench-threads ranks (at least 2, on 2 nodes, so that proxy
 * and network events exist), and reports ns per start/stop/record per thread
 * kind and ns per whole collective on the app thread. Timing includes one
 * clock_gettime pair per call. Prints a table and one `BENCH {json}` line.
 */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_shared.h"

extern int simProcIndex;

typedef struct {
  simComm* c;
  int rank, n;
  uint64_t ns, groups;
} benchArg;

static void* benchApp(void* arg) {
  benchArg* a = arg;
  simTruthThreadBegin("app");
  simComm c;
  simCommInit(&c, 0xbe9c4, "bench", 60, a->n, a->rank, 2, NULL);
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

int simRunBench(void) {
  char exe[4096], emptyPath[4200];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  snprintf(emptyPath, sizeof emptyPath, "%s/libnccl-profiler-empty.so", dirname(exe));
  const char* chosen = simOpt.plugin ? simOpt.plugin : getenv("NCCL_PROFILER_PLUGIN");
  const char* names[3] = {"none", "empty", "plugin"};
  const char* specs[3] = {"none", emptyPath, chosen};
  int ncfg = chosen && strcasecmp(chosen, "none") ? 3 : 2;
  static const char* roles[5] = {"app", "proxy", "net", "cuda_cb", "other"};
  simSharedInit(1);
  simBenchOn = true;
  int n = simOpt.benchThreads < 2 ? 2 : simOpt.benchThreads;
  char json[8192];
  size_t jl = (size_t)snprintf(json, sizeof json, "{\"threads\":%d,\"configs\":[", n);
  printf("%-8s %-6s %12s %12s %12s %10s %10s %10s\n", "config", "thread", "start_ns", "stop_ns", "record_ns", "starts",
         "stops", "records");
  for (int cfg = 0; cfg < ncfg; cfg++) {
    simLoaderForceSpec(specs[cfg]);
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
    simBenchAcc acc[5];
    simBenchTake(acc);
    double collNs = groups ? (double)ns / (double)groups : 0;
    jl += (size_t)snprintf(json + jl, sizeof json - jl, "%s{\"name\":\"%s\",\"coll_ns\":%.1f,\"roles\":{",
                           cfg ? "," : "", names[cfg], collNs);
    int first = 1;
    for (int r = 0; r < 5; r++) {
      if (!acc[r].n[0] && !acc[r].n[1] && !acc[r].n[2]) continue;
      double v[3];
      for (int q = 0; q < 3; q++) v[q] = acc[r].n[q] ? (double)acc[r].ns[q] / (double)acc[r].n[q] : 0;
      printf("%-8s %-6s %12.1f %12.1f %12.1f %10llu %10llu %10llu\n", names[cfg], roles[r], v[0], v[1], v[2],
             (unsigned long long)acc[r].n[0], (unsigned long long)acc[r].n[1], (unsigned long long)acc[r].n[2]);
      jl += (size_t)snprintf(json + jl, sizeof json - jl,
                             "%s\"%s\":{\"start_ns\":%.1f,\"stop_ns\":%.1f,\"record_ns\":%.1f,\"starts\":%llu,"
                             "\"stops\":%llu,\"records\":%llu}",
                             first ? "" : ",", roles[r], v[0], v[1], v[2], (unsigned long long)acc[r].n[0],
                             (unsigned long long)acc[r].n[1], (unsigned long long)acc[r].n[2]);
      first = 0;
    }
    jl += (size_t)snprintf(json + jl, sizeof json - jl, "}}");
    printf("%-8s %-6s per collective (app thread, whole group): %.1f ns\n", names[cfg], "app", collNs);
    free(a);
    free(th);
  }
  snprintf(json + jl, sizeof json - jl, "]}");
  printf("BENCH %s\n", json);
  return simPluginErrors() ? 1 : 0;
}
