/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: a process killed mid-run (SIGKILL, no finalize)
 * leaves a readable trace up to the last flush (NCCLSCOPE_FLUSH_MS). */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"
#include "trace_load.h"

static void child(void) {
  tp_plugin plugin;
  if (tp_open(&plugin)) _exit(2);
  ncclProfiler_v6_t* api = plugin.v6;
  void* ctx;
  int mask;
  api->init(&ctx, 42, &mask, "killed", 1, 1, 0, NULL);
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyCtrl;
  for (int i = 0; i < 1000; i++) {
    void* h;
    api->startEvent(ctx, &h, &d);
    api->stopEvent(h);
  }
  usleep(400000); /* > NCCLSCOPE_FLUSH_MS: flushed */
  for (int i = 0; i < 500; i++) { /* not flushed: lost with the process */
    void* h;
    api->startEvent(ctx, &h, &d);
    api->stopEvent(h);
  }
  kill(getpid(), SIGKILL);
}

int main(void) {
  char dir[128];
  if (tp_dump_dir(dir, sizeof dir, "test-killed")) return 2;
  setenv("NCCLSCOPE_EVENT_MASK", "all", 1);
  setenv("NCCLSCOPE_FLUSH_MS", "100", 1);
  pid_t p = fork();
  if (p == 0) child();
  int st;
  waitpid(p, &st, 0);
  CHECK_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  tl_trace t;
  memset(&t, 0, sizeof t);
  CHECK_U64(tl_load_dir(&t, dir), 1);
  CHECK_TRUE(!t.clean_end);
  CHECK_U64(t.ncomms, 1);
  size_t starts = tl_count(&t, NS_REC_START, NS_EV_PROXY_CTRL);
  CHECK_TRUE(starts >= 1000);
  CHECK_TRUE(starts <= 1500);
  CHECK_U64(t.seq_gaps, 0);
  printf("killed process: %zu of 1500 starts readable\n", starts);
  tl_free(&t);
  if (tp_remove_dir(dir)) return 3;
  CHECK_DONE();
}
