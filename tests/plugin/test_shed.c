/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: a writer that falls behind sheds the analysis of
 * ProxySteps, never their records.
 *
 * test_plugin_shed FILL: NCCLSCOPE_SHED_FILL=FILL, a writer that polls once
 * a second, and a burst of NSTEPS ProxySteps (SendWait with a size, then
 * stop) under one net-send ProxyOp of an AllReduce: about 13 % of the
 * 4 MiB ring, drained at finalize.
 * - Every step is in the trace, whole, and nothing was dropped.
 * - FILL 10 (below the burst's fill): at least half the steps skip the
 *   analysis. The trace's stepsNotAnalysed, the summary's and the metric
 *   ncclscope_steps_unanalysed_total (the last line of windows.jsonl)
 *   agree, and the summary's link rows count exactly the other steps.
 * - FILL 0 (never): no step skips it, the metric is not exported, and the
 *   link rows count them all. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

#define NSTEPS 4000

/* The file `prefix`*`suffix` the plugin wrote in dir, read whole into buf (NULL if none). */
static char* read_file(const char* dir, const char* prefix, const char* suffix, char* buf, size_t cap) {
  DIR* d = opendir(dir);
  if (!d) return NULL;
  char path[512] = "";
  for (struct dirent* e; (e = readdir(d));)
    if (!strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, suffix))
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
  closedir(d);
  FILE* f = path[0] ? fopen(path, "r") : NULL;
  if (!f) return NULL;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The number after the first `pattern` in s (UINT64_MAX if none). */
static uint64_t number_after(const char* s, const char* pattern) {
  const char* p = s ? strstr(s, pattern) : NULL;
  return p ? strtoull(p + strlen(pattern), NULL, 10) : UINT64_MAX;
}

/* The sum of the numbers that follow each `pattern` in json. */
static uint64_t sum_after(const char* json, const char* pattern) {
  uint64_t s = 0;
  for (const char* p = json; (p = strstr(p, pattern)); p += strlen(pattern)) s += strtoull(p + strlen(pattern), NULL, 10);
  return s;
}

int main(int argc, char** argv) {
  const char* fill = argc > 1 ? argv[1] : "10";
  int shedding = atoi(fill) != 0;
  const char* settings[] = {"NCCLSCOPE_SHED_FILL", fill, "NCCLSCOPE_POLL_MS", "1000", NULL, NULL};
  char dir[128];
  tp_plugin plugin;
  void* ctx = tp_start_v6(&plugin, dir, sizeof dir, "test-shed", settings, 0x5ed, 2);
  if (!ctx) return 1;
  ncclProfiler_v6_t* p = plugin.v6;
  /* an AllReduce whose one ProxyOp moves the steps: its window carries the metric */
  ncclProfilerEventDescr_v6_t cd = {.type = ncclProfileColl};
  cd.coll.func = "AllReduce";
  cd.coll.datatype = "ncclFloat32";
  cd.coll.count = 1 << 20;
  cd.coll.nChannels = 1;
  void* coll = NULL;
  p->startEvent(ctx, &coll, &cd);
  p->stopEvent(coll);
  ncclProfilerEventDescr_v6_t od = {.type = ncclProfileProxyOp, .parentObj = coll};
  od.proxyOp.pid = getpid();
  od.proxyOp.isSend = 1;
  od.proxyOp.peer = 1;
  od.proxyOp.nSteps = NSTEPS;
  void* op = NULL;
  p->startEvent(ctx, &op, &od);
  CHECK_TRUE(op != NULL);
  for (int i = 0; i < NSTEPS; i++) {
    ncclProfilerEventDescr_v6_t d = {.type = ncclProfileProxyStep, .parentObj = op};
    d.proxyStep.step = i;
    void* h = NULL;
    p->startEvent(ctx, &h, &d);
    ncclProfilerEventStateArgs_v6_t a;
    memset(&a, 0, sizeof a);
    a.proxyStep.transSize = (size_t)4096 << (i % 8);
    p->recordEventState(h, ncclProfilerProxyStepSendWait, &a);
    p->stopEvent(h);
  }
  p->stopEvent(op);
  CHECK_U64(p->finalize(ctx), ncclSuccess);

  tl_trace t = {0};
  CHECK_TRUE(tl_load_dir(&t, dir) == 1);
  CHECK_U64(tl_count(&t, NS_REC_START, NS_EV_PROXY_STEP), NSTEPS);
  CHECK_U64(tl_count(&t, NS_REC_STATE, NS_EV_PROXY_STEP), NSTEPS);
  CHECK_U64(tl_count(&t, NS_REC_STOP, NS_EV_PROXY_STEP), NSTEPS);
  CHECK_TRUE(t.have_counters);
  uint64_t shed = t.counters.u[NS_P_STEPS_UNANALYSED];
  CHECK_U64(t.counters.u[NS_P_DROPPED], 0);
  if (shedding)
    CHECK_TRUE(shed >= NSTEPS / 2 && shed <= NSTEPS);
  else
    CHECK_U64(shed, 0);
  static char json[1 << 20], windows[1 << 20];
  CHECK_TRUE(read_file(dir, "summary-", ".json", json, sizeof json) != NULL);
  /* the metric, in the last window (line): exported once a step was shed */
  CHECK_TRUE(read_file(dir, "windows-", ".jsonl", windows, sizeof windows) != NULL);
  const char* last = windows;
  for (const char* nl = strstr(windows, "\n{"); nl; nl = strstr(nl + 1, "\n{")) last = nl + 1;
  CHECK_TRUE(strstr(last, "\"ncclscope_ops_total\"") != NULL); /* the AllReduce's window */
  const char* metric = strstr(last, "\"ncclscope_steps_unanalysed_total\"");
  if (shedding)
    CHECK_U64(number_after(metric, "\"value\":"), shed);
  else
    CHECK_TRUE(metric == NULL);
  CHECK_U64(sum_after(json, "\"stepsNotAnalysed\":"), shed);
  /* the send link of channel 0 (a row "all channels" of the peer repeats it) */
  CHECK_U64(sum_after(json, "\"channel\":0,\"steps\":"), NSTEPS - shed);
  tl_free(&t);
  tp_remove_dir(dir);
  CHECK_DONE();
}
