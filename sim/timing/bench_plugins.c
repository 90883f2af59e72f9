/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: what --bench-micro and --bench-cadence share: the plugins
 * they compare (the empty one beside the simulator binary, the chosen one,
 * and optionally --bench-baseline's, all through ncclProfiler_v6, dlopened directly: the load rules
 * are not what is measured), the median helpers and the cost of the timing
 * itself (with --bench-nccl and --bench). Main thread only.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sim.h"

static int openOne(simBenchPlugin* p, const char* mode, const char* name, const char* path) {
  p->name = name;
  p->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!p->lib) {
    SIM_ERR("%s: cannot load %s: %s", mode, path, dlerror());
    return -1;
  }
  p->api = dlsym(p->lib, "ncclProfiler_v6");
  if (!p->api) {
    SIM_ERR("%s: %s does not export ncclProfiler_v6", mode, path);
    return -1;
  }
  return 0;
}

int simBenchOpenPlugins(const char* mode, simBenchPlugin out[SIM_BENCH_MAX_PLUGINS], int* n) {
  memset(out, 0, SIM_BENCH_MAX_PLUGINS * sizeof *out);
  *n = simOpt.benchBaseline ? 3 : 2;
  char exe[4096], emptyPath[4200];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[k > 0 ? k : 0] = 0;
  snprintf(emptyPath, sizeof emptyPath, "%s/libnccl-profiler-empty.so", dirname(exe));
  const char* chosen = simOpt.plugin ? simOpt.plugin : getenv("NCCL_PROFILER_PLUGIN");
  if (!chosen || !strcasecmp(chosen, "none")) {
    SIM_ERR("%s needs --plugin PATH", mode);
    return 2;
  }
  if (openOne(&out[0], mode, "empty", emptyPath) || openOne(&out[1], mode, "plugin", chosen)) return 1;
  /* RTLD_LOCAL: a second build of the same plugin keeps its own globals and symbols */
  if (simOpt.benchBaseline && openOne(&out[2], mode, "baseline", simOpt.benchBaseline)) return 1;
  return 0;
}

void simBenchClosePlugins(simBenchPlugin p[SIM_BENCH_MAX_PLUGINS]) {
  for (int c = 0; c < SIM_BENCH_MAX_PLUGINS; c++)
    if (p[c].lib) dlclose(p[c].lib);
}

static int cmpDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

void simBenchSort(double* v, size_t n) { qsort(v, n, sizeof *v, cmpDouble); }

/* The cost of the timing itself: one clock_gettime pair. */
double simBenchClockPairNs(void) {
  double v[15];
  for (int k = 0; k < 15; k++) {
    uint64_t t0 = simNowNs(), sink = 0;
    for (int i = 0; i < 2000; i++) sink += simNowNs();
    uint64_t t1 = simNowNs();
    v[k] = (double)(t1 - t0) / 2000.0 + (double)(sink & 0);
  }
  simBenchSort(v, 15);
  return 2.0 * v[15 / 2];
}
