/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope bench: a paced flood of proxy events, for the background
 * thread's CPU cost, memory over run length and bytes on disk.
 *
 * ns-bench-rate --plugin PATH [--records N] [--rate R] [--threads T] [--milestones a,b,c]
 *
 * dlopens the plugin (ncclProfiler_v6), inits one communicator per producer
 * thread, and has every producer emit ProxyStep events under one ProxyOp:
 * start, states 8, 20, 9 (with transSize), stop = 5 profiler calls, each one
 * trace record. --rate is in records per second for the whole process (0:
 * as fast as the producers go). At each milestone (records emitted) the
 * main thread samples VmRSS; at the end it prints one `RATE {json}` line
 * with the wall time, the CPU time of the plugin's own threads (every
 * thread that appeared after the first init, from /proc/self/task/<tid>/
 * schedstat, in ns), the process VmHWM, and the NULL handles returned.
 * Threads: main (sampling), T producers, and whatever the plugin starts.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"

#define MAX_TIDS 512
#define MAX_MILESTONES 16

static const ncclProfiler_v6_t* api;
static uint64_t optRecords = 10000000, optRate = 1000000;
static int optThreads = 1;
static _Atomic uint64_t emitted;
static _Atomic uint64_t nullHandles;
static _Atomic int producersReady;

static uint64_t nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleepNs(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

static void quietLog(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

/* Kernel tids of this process. */
static int listTids(int* out, int max) {
  DIR* d = opendir("/proc/self/task");
  int n = 0;
  if (!d) return 0;
  for (struct dirent* e; (e = readdir(d)) && n < max;)
    if (e->d_name[0] != '.') out[n++] = atoi(e->d_name);
  closedir(d);
  return n;
}

/* CPU time of thread `tid` in ns (schedstat), 0 if gone. */
static uint64_t threadCpuNs(int tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
  FILE* f = fopen(path, "re");
  if (!f) return 0;
  unsigned long long ns = 0;
  if (fscanf(f, "%llu", &ns) != 1) ns = 0;
  fclose(f);
  return ns;
}

static long statusKb(const char* key) {
  FILE* f = fopen("/proc/self/status", "re");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t kl = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == ':') {
      v = atol(line + kl + 1);
      break;
    }
  fclose(f);
  return v;
}

typedef struct {
  int index;
  void* ctx;
} producer;

static void* produce(void* arg) {
  producer* p = arg;
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyOp;
  d.proxyOp.pid = getpid();
  d.proxyOp.channelId = (uint8_t)p->index;
  d.proxyOp.peer = 1;
  d.proxyOp.nSteps = 1 << 30;
  d.proxyOp.chunkSize = 524288;
  d.proxyOp.isSend = 1;
  void* op = NULL;
  ncclProfilerEventStateArgs_v6_t sa;
  memset(&sa, 0, sizeof sa);
  sa.proxyStep.transSize = 524288;
  uint64_t share = optRecords / (uint64_t)optThreads, done = 0, nulls = 0;
  /* Each producer paces itself at rate/threads; 5 records per step. */
  double nsPerStep = optRate ? 5e9 * optThreads / (double)optRate : 0;
  atomic_fetch_add(&producersReady, 1);
  uint64_t t0 = nowNs();
  uint64_t step = 0;
  api->startEvent(p->ctx, &op, &d);
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyStep;
  d.parentObj = op;
  while (done < share) {
    for (int i = 0; i < 64 && done < share; i++, step++) {
      void* h = NULL;
      d.proxyStep.step = (int)step;
      api->startEvent(p->ctx, &h, &d);
      nulls += h == NULL;
      api->recordEventState(h, ncclProfilerProxyStepSendGPUWait, &sa);
      api->recordEventState(h, ncclProfilerProxyStepSendPeerWait_v4, &sa);
      api->recordEventState(h, ncclProfilerProxyStepSendWait, &sa);
      api->stopEvent(h);
      done += 5;
    }
    atomic_fetch_add_explicit(&emitted, 64 * 5, memory_order_relaxed);
    if (nsPerStep > 0) {
      uint64_t due = t0 + (uint64_t)(nsPerStep * (double)step), now = nowNs();
      if (due > now + 20000) sleepNs(due - now);
    }
  }
  api->stopEvent(op);
  atomic_fetch_add(&nullHandles, nulls);
  return NULL;
}

static int parseMilestones(const char* s, uint64_t* out) {
  int n = 0;
  for (const char* p = s; *p && n < MAX_MILESTONES;) {
    char* end;
    out[n++] = strtoull(p, &end, 0);
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return n;
}

int main(int argc, char** argv) {
  const char* plugin = NULL;
  uint64_t milestones[MAX_MILESTONES];
  int nm = 0;
  static const struct option opts[] = {{"plugin", required_argument, 0, 'p'},   {"records", required_argument, 0, 'n'},
                                       {"rate", required_argument, 0, 'r'},     {"threads", required_argument, 0, 't'},
                                       {"milestones", required_argument, 0, 'm'}, {0, 0, 0, 0}};
  for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    switch (o) {
      case 'p': plugin = optarg; break;
      case 'n': optRecords = strtoull(optarg, NULL, 0); break;
      case 'r': optRate = strtoull(optarg, NULL, 0); break;
      case 't': optThreads = atoi(optarg); break;
      case 'm': nm = parseMilestones(optarg, milestones); break;
      default: return 2;
    }
  }
  if (!plugin || optThreads < 1 || optThreads > 64) {
    fprintf(stderr, "usage: ns-bench-rate --plugin PATH [--records N] [--rate R] [--threads T] [--milestones a,b]\n");
    return 2;
  }
  int before[MAX_TIDS], nb = listTids(before, MAX_TIDS);
  void* lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (!lib || !(api = dlsym(lib, "ncclProfiler_v6"))) {
    fprintf(stderr, "ns-bench-rate: cannot load ncclProfiler_v6 from %s: %s\n", plugin, dlerror());
    return 1;
  }
  producer prod[64];
  for (int i = 0; i < optThreads; i++) {
    int mask = 0;
    prod[i].index = i;
    prod[i].ctx = NULL;
    if (api->init(&prod[i].ctx, 0x7261746500ull + (uint64_t)i, &mask, "rate", 1, optThreads, i, quietLog) !=
        ncclSuccess) {
      fprintf(stderr, "ns-bench-rate: init failed\n");
      return 1;
    }
  }
  /* The plugin's threads: every tid that appeared with the first init. */
  int after[MAX_TIDS], na = listTids(after, MAX_TIDS), plugTids[MAX_TIDS], np = 0;
  for (int i = 0; i < na; i++) {
    int old = 0;
    for (int j = 0; j < nb; j++) old |= after[i] == before[j];
    if (!old) plugTids[np++] = after[i];
  }
  uint64_t cpu0 = 0;
  for (int i = 0; i < np; i++) cpu0 += threadCpuNs(plugTids[i]);
  pthread_t th[64];
  uint64_t t0 = nowNs();
  for (int i = 0; i < optThreads; i++) pthread_create(&th[i], NULL, produce, &prod[i]);
  long rssAt[MAX_MILESTONES];
  uint64_t tAt[MAX_MILESTONES];
  for (int m = 0; m < nm; m++) {
    while (atomic_load_explicit(&emitted, memory_order_relaxed) < milestones[m] &&
           atomic_load_explicit(&emitted, memory_order_relaxed) < optRecords - (uint64_t)optThreads * 320)
      sleepNs(2000000);
    rssAt[m] = statusKb("VmRSS");
    tAt[m] = nowNs() - t0;
  }
  for (int i = 0; i < optThreads; i++) pthread_join(th[i], NULL);
  uint64_t tProduced = nowNs() - t0;
  uint64_t cpu1 = 0;
  for (int i = 0; i < np; i++) cpu1 += threadCpuNs(plugTids[i]);
  long hwmBeforeFini = statusKb("VmHWM"), rssBeforeFini = statusKb("VmRSS");
  uint64_t tf0 = nowNs();
  for (int i = 0; i < optThreads; i++) api->finalize(prod[i].ctx);
  uint64_t finiNs = nowNs() - tf0;
  dlclose(lib);
  printf("RATE {\"records\":%llu,\"target_rate\":%llu,\"threads\":%d,\"wall_s\":%.3f,\"achieved_rate\":%.0f,"
         "\"plugin_threads\":%d,\"plugin_cpu_s\":%.3f,\"plugin_cpu_pct\":%.2f,\"finalize_s\":%.3f,"
         "\"vmhwm_kb\":%ld,\"vmrss_kb\":%ld,\"null_handles\":%llu,\"milestones\":[",
         (unsigned long long)atomic_load(&emitted), (unsigned long long)optRate, optThreads, (double)tProduced / 1e9,
         (double)atomic_load(&emitted) / ((double)tProduced / 1e9), np, (double)(cpu1 - cpu0) / 1e9,
         100.0 * (double)(cpu1 - cpu0) / (double)tProduced, (double)finiNs / 1e9, hwmBeforeFini, rssBeforeFini,
         (unsigned long long)atomic_load(&nullHandles));
  for (int m = 0; m < nm; m++)
    printf("%s{\"records\":%llu,\"t_s\":%.3f,\"vmrss_kb\":%ld}", m ? "," : "", (unsigned long long)milestones[m],
           (double)tAt[m] / 1e9, rssAt[m]);
  printf("]}\n");
  return 0;
}
