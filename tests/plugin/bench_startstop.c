/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin microbenchmark: ns per startEvent+stopEvent (ProxyStep
 * under a ProxyOp) and per recordEventState on one thread, in steady state
 * (rings and slots already touched). Prints; checks only that nothing was
 * dropped when the writer keeps up. Not a pass/fail performance test. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(void) {
  char dir[128];
  tp_plugin plugin;
  if (tp_start(&plugin, dir, sizeof dir, "bench")) return 2;
  ncclProfiler_v6_t* api = plugin.v6;
  void* ctx;
  int mask;
  api->init(&ctx, 1, &mask, "bench", 1, 1, 0, NULL);
  ncclProfilerEventDescr_v6_t op, st;
  memset(&op, 0, sizeof op);
  op.type = ncclProfileProxyOp;
  op.proxyOp.pid = getpid();
  void* hop;
  api->startEvent(ctx, &hop, &op);
  memset(&st, 0, sizeof st);
  st.type = ncclProfileProxyStep;
  st.parentObj = hop;
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  sa.proxyStep.transSize = 65536;
  enum { BATCH = 2000, ROUNDS = 300 };
  double best_ss = 1e9, best_state = 1e9;
  for (int r = 0; r < ROUNDS; r++) {
    void* h[BATCH];
    uint64_t t0 = now_ns();
    for (int i = 0; i < BATCH; i++) {
      st.proxyStep.step = i;
      api->startEvent(ctx, &h[i], &st);
      api->stopEvent(h[i]);
    }
    uint64_t t1 = now_ns();
    api->startEvent(ctx, &h[0], &st);
    uint64_t t2 = now_ns();
    for (int i = 0; i < BATCH; i++) api->recordEventState(h[0], ncclProfilerProxyStepSendWait, &sa);
    uint64_t t3 = now_ns();
    api->stopEvent(h[0]);
    double ss = (double)(t1 - t0) / BATCH, sr = (double)(t3 - t2) / BATCH;
    if (r > 50 && ss < best_ss) best_ss = ss; /* after warm-up: rings and slots touched */
    if (r > 50 && sr < best_state) best_state = sr;
    usleep(3000); /* the writer drains and recycles between batches */
  }
  api->stopEvent(hop);
  api->finalize(ctx);
  dlclose(plugin.so);
  printf("BENCH start+stop %.1f ns, recordEventState %.1f ns (best batch of %d, one thread)\n", best_ss,
         best_state, BATCH);
  if (tp_remove_dir(dir)) return 3;
  CHECK_DONE();
}
