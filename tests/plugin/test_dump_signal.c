/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope plugin test: the watchdog and the dump signal, through the real
 * .so. A collective whose KernelCh never stops gives one flight record
 * (reason "hang") within the timeout plus a second; the dump signal gives
 * one on demand (reason "signal") and is chained: the application's handler
 * still runs, a default action is replaced only while a session lives, an
 * ignored signal stays ignored, NCCLSCOPE_DUMP_SIGNAL=0 installs nothing;
 * every handler is put back when the session ends.
 * Threads: main (NCCL's calls) and the plugin's writer. */
#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi/nccl_profiler.h"
#include "check.h"
#include "plugin_open.h"

static _Atomic int app_calls;
static void app_handler(int sig) {
  (void)sig;
  atomic_fetch_add(&app_calls, 1);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The flight record of this process, once it exists and names `reason`:
 * waits at most `wait_s`. Returns the seconds waited, or -1. */
static double wait_record(const char* dir, const char* reason, double wait_s) {
  char host[256], path[1024];
  gethostname(host, sizeof host);
  snprintf(path, sizeof path, "%s/flightrec-%s-%d.json", dir, host, (int)getpid());
  char want[64];
  snprintf(want, sizeof want, "\"reason\":\"%s\"", reason);
  double t0 = now_s();
  while (now_s() - t0 < wait_s) {
    FILE* f = fopen(path, "r");
    if (f) {
      static char buf[1 << 16];
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      buf[n] = 0;
      if (strstr(buf, want)) return now_s() - t0;
    }
    struct timespec d = {0, 10000000};
    nanosleep(&d, NULL);
  }
  return -1;
}

static void handler_now(struct sigaction* sa) { sigaction(SIGUSR1, NULL, sa); }

/* One session: dlopen, init, (work), finalize, dlclose. */
typedef struct {
  tp_plugin p;
  void* ctx;
  char dir[128];
} session;

static int open_session(session* s, const char* name) {
  if (tp_dump_dir(s->dir, sizeof s->dir, name) != 0 || tp_open(&s->p) != 0) return -1;
  int mask = 0;
  return s->p.v6->init(&s->ctx, 0xABCD, &mask, "world", 1, 2, 0, NULL) == ncclSuccess ? 0 : -1;
}

static void close_session(session* s) {
  s->p.v6->finalize(s->ctx);
  dlclose(s->p.so);
}

/* A collective on 2 channels whose kernel never ends on channel 1. */
static void stuck_collective(session* s) {
  ncclProfilerEventDescr_v6_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.coll.func = "AllReduce";
  d.coll.seqNumber = 41;
  d.coll.count = 256;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 2;
  void *hc, *k0, *k1;
  s->p.v6->startEvent(s->ctx, &hc, &d);
  s->p.v6->stopEvent(hc);
  for (int ch = 0; ch < 2; ch++) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelCh;
    d.parentObj = hc;
    d.kernelCh.channelId = (uint8_t)ch;
    s->p.v6->startEvent(s->ctx, ch ? &k1 : &k0, &d);
  }
  s->p.v6->stopEvent(k0);
}

int main(void) {
  setenv("NCCLSCOPE_HANG_TIMEOUT_SEC", "0.3", 1);
  session s;

  /* 1. the watchdog, then the signal with the application's own handler */
  struct sigaction app, cur;
  memset(&app, 0, sizeof app);
  app.sa_handler = app_handler;
  sigemptyset(&app.sa_mask);
  sigaction(SIGUSR1, &app, NULL);
  if (open_session(&s, "dumpsig") != 0) return 1;
  double t0 = now_s();
  stuck_collective(&s);
  double waited = wait_record(s.dir, "hang", 5.0);
  CHECK_TRUE(waited >= 0);
  fprintf(stderr, "hang record after %.2f s (timeout 0.3 s)\n", now_s() - t0);
  CHECK_TRUE(waited >= 0 && now_s() - t0 < 0.3 + 1.0);
  handler_now(&cur);
  CHECK_TRUE(cur.sa_handler != app_handler); /* ours, chained */
  raise(SIGUSR1);
  CHECK_U64(atomic_load(&app_calls), 1);
  CHECK_TRUE(wait_record(s.dir, "signal", 5.0) >= 0);
  close_session(&s);
  handler_now(&cur);
  CHECK_TRUE(!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == app_handler); /* put back */

  /* 2. the default action: replaced while the session lives (the process survives), then back */
  signal(SIGUSR1, SIG_DFL);
  unsetenv("NCCLSCOPE_HANG_TIMEOUT_SEC");
  if (open_session(&s, "dumpsig") != 0) return 1;
  raise(SIGUSR1);
  CHECK_TRUE(wait_record(s.dir, "signal", 5.0) >= 0);
  close_session(&s);
  handler_now(&cur);
  CHECK_TRUE(!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL);

  /* 3. an ignored signal stays ignored */
  signal(SIGUSR1, SIG_IGN);
  if (open_session(&s, "dumpsig") != 0) return 1;
  handler_now(&cur);
  CHECK_TRUE(!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN);
  close_session(&s);

  /* 4. NCCLSCOPE_DUMP_SIGNAL=0: nothing installed; SIGUSR2 chosen: that one */
  signal(SIGUSR1, SIG_DFL);
  setenv("NCCLSCOPE_DUMP_SIGNAL", "0", 1);
  if (open_session(&s, "dumpsig") != 0) return 1;
  handler_now(&cur);
  CHECK_TRUE(!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL);
  close_session(&s);
  setenv("NCCLSCOPE_DUMP_SIGNAL", "SIGUSR2", 1);
  if (open_session(&s, "dumpsig") != 0) return 1;
  raise(SIGUSR2);
  CHECK_TRUE(wait_record(s.dir, "signal", 5.0) >= 0);
  close_session(&s);
  CHECK_DONE();
}
