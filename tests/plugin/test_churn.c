/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: lifecycle churn. 2,000 cycles of dlopen, init,
 * a few events, finalize, dlclose (as NCCL does after the last
 * communicator); every 100th cycle four threads init at once and the main
 * thread finalizes them. No thread or file descriptor may leak, every cycle
 * leaves a complete trace file, and a failing dump dir makes init fail.
 * Threads are counted by name (plugin_threads.h): a sanitizer's runtime
 * starts its own (TSan's background thread appears at the first
 * pthread_create, inside the plugin's init). The writer must be visible by
 * that name while a session is open, so a renamed or unnamed plugin thread
 * fails here instead of escaping the count.
 * Threads: main, and four init threads every 100th cycle. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "plugin_threads.h"

static int count_dir(const char* path) {
  DIR* d = opendir(path);
  if (!d) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* Trace files only: the per-process summary files sit beside them. */
static int count_traces(const char* path) {
  DIR* d = opendir(path);
  if (!d) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len > 8 && strcmp(e->d_name + len - 8, ".nstrace") == 0) n++;
  }
  closedir(d);
  return n;
}

static ncclProfiler_v6_t* api;
static void* ctxs[4];
static pid_t init_tids[4];

static void events(void* ctx) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.coll.func = "AllReduce";
  void *hc, *ho;
  api->startEvent(ctx, &hc, &d);
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyOp;
  d.parentObj = hc;
  d.proxyOp.pid = getpid();
  api->startEvent(ctx, &ho, &d);
  api->stopEvent(hc);
  api->stopEvent(ho);
}

static void* init_thread(void* arg) {
  int i = (int)(intptr_t)arg;
  init_tids[i] = (pid_t)syscall(SYS_gettid);
  int mask;
  CHECK_U64(api->init(&ctxs[i], 100 + (uint64_t)i, &mask, "t", 1, 4, i, NULL), ncclSuccess);
  events(ctxs[i]);
  return NULL;
}

int main(void) {
  char dir[128];
  if (tp_dump_dir(dir, sizeof dir, "test-churn")) return 2;
  setenv("NCCLSCOPE_RING_KB", "64", 1);
  setenv("NCCLSCOPE_SLAB_EVENTS", "1024", 1);
  int fds0 = count_dir("/proc/self/fd");
  CHECK_U64(ns_scan_plugin_threads(), 0);
  enum { CYCLES = 2000 };
  for (int c = 0; c < CYCLES; c++) {
    void* so = dlopen(NS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 2;
    }
    api = dlsym(so, "ncclProfiler_v6");
    if (c % 100 == 99) {
      CHECK_U64(ns_plugin_threads_left(), 0); /* the last cycle's writer is gone before we count ours */
      pthread_t th[4];
      for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, init_thread, (void*)(intptr_t)i);
      for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
      for (int i = 0; i < 4; i++) CHECK_U64(ns_wait_task_gone(init_tids[i]), 0); /* an exact count from here */
      CHECK_U64(ns_scan_plugin_threads(), 1); /* one writer per process, however many contexts */
      for (int i = 0; i < 4; i++) CHECK_U64(api->finalize(ctxs[i]), ncclSuccess);
    } else {
      void* ctx;
      int mask;
      CHECK_U64(api->init(&ctx, (uint64_t)c, &mask, NULL, 1, 1, 0, NULL), ncclSuccess);
      events(ctx);
      if (c % 500 == 0) CHECK_U64(ns_scan_plugin_threads(), 1);
      CHECK_U64(api->finalize(ctx), ncclSuccess);
    }
    dlclose(so);
    if (c % 500 == 0 || c % 100 == 99) {
      CHECK_U64(ns_plugin_threads_left(), 0);
      CHECK_U64(count_dir("/proc/self/fd"), fds0);
    }
    if (check_failures) break;
  }
  CHECK_U64(count_traces(dir), CYCLES);

  /* A dump dir that cannot be created: init succeeds all the same (NCCL
   * must never see a failed init) with a context that records nothing and
   * NCCL's mask 0; finalize succeeds; nothing leaks. */
  setenv("NCCLSCOPE_DUMP_DIR", "/proc/ncclscope-cannot-exist/x", 1);
  void* so = dlopen(NS_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  api = dlsym(so, "ncclProfiler_v6");
  void* ctx = NULL;
  int mask = -1;
  CHECK_U64(api->init(&ctx, 1, &mask, NULL, 1, 1, 0, NULL), ncclSuccess);
  CHECK_TRUE(ctx != NULL);
  CHECK_U64(mask, 0);
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  void* h = (void*)1;
  CHECK_U64(api->startEvent(ctx, &h, &d), ncclSuccess);
  CHECK_TRUE(h == NULL);
  CHECK_U64(api->finalize(ctx), ncclSuccess);
  dlclose(so);
  CHECK_U64(ns_plugin_threads_left(), 0);
  CHECK_U64(count_dir("/proc/self/fd"), fds0);

  if (tp_remove_dir(dir)) return 3;
  CHECK_DONE();
}
