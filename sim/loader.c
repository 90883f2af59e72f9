/* ncclscope-sim: loading the profiler plugin the way NCCL does.
 *
 * Called from whichever thread initializes or finalizes a communicator.
 * One load per process with a reference count per communicator; the library
 * is dlclosed when the last communicator is finalized and reopened by the
 * next one. After each dlclose the process must have no thread and no file
 * descriptor more than before the dlopen: a plugin that leaves a thread
 * running would crash a real NCCL process, here it is reported as an error.
 *
 * As in NCCL, a failed load (library missing, no symbol) is sticky for the
 * rest of the process: later communicators do not retry.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sim.h"

int simEventMask;

static pthread_mutex_t loadLock = PTHREAD_MUTEX_INITIALIZER;
static int refCount;
static int loadFailed;
static void* lib;
static simPlugin plugin;
static int baseThreads, baseFds;
static int errors;
static int loads;
static const char* forcedSpec;

/* Threads the simulator itself owns; guarded by threadLock so that a count of
 * /proc/self/task taken under the lock can be compared with it. */
static pthread_mutex_t threadLock = PTHREAD_MUTEX_INITIALIZER;
static int simThreads = 1; /* the main thread */

void simThreadCreate(pthread_t* t, void* (*fn)(void*), void* arg) {
  pthread_mutex_lock(&threadLock);
  if (pthread_create(t, NULL, fn, arg) != 0) {
    SIM_ERR("pthread_create failed");
    exit(2);
  }
  simThreads++;
  pthread_mutex_unlock(&threadLock);
}

void simThreadJoin(pthread_t t) {
  pthread_join(t, NULL);
  pthread_mutex_lock(&threadLock);
  simThreads--;
  pthread_mutex_unlock(&threadLock);
}

static int countDir(const char* path) {
  DIR* d = opendir(path);
  if (!d) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* Returns extra threads beyond the simulator's own; call with threadLock held. */
static int extraThreads(void) { return countDir("/proc/self/task") - simThreads; }
/* opendir itself holds one descriptor while counting. */
static int openFds(void) { return countDir("/proc/self/fd") - 1; }

void simLoaderForceSpec(const char* spec) { forcedSpec = spec; loadFailed = 0; }
int simPluginLoads(void) { return loads; }
int simPluginErrors(void) { return errors; }

static void* openByNcclRules(void) {
  const char* spec = forcedSpec ? forcedSpec : simOpt.plugin ? simOpt.plugin : getenv("NCCL_PROFILER_PLUGIN");
  if (spec && strcasecmp(spec, "none") == 0) return NULL;
  if (spec == NULL) return dlopen("libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
  void* h = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
  if (h) return h;
  char name[1024];
  snprintf(name, sizeof name, "libnccl-profiler-%s.so", spec);
  h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) SIM_INFO("could not load profiler plugin '%s': %s", spec, dlerror());
  return h;
}

const simPlugin* simPluginAcquire(void) {
  const simPlugin* ret = NULL;
  pthread_mutex_lock(&loadLock);
  if (loadFailed) goto out;
  if (refCount > 0) {
    refCount++;
    ret = &plugin;
    goto out;
  }
  pthread_mutex_lock(&threadLock);
  baseThreads = extraThreads();
  pthread_mutex_unlock(&threadLock);
  baseFds = openFds();
  lib = openByNcclRules();
  if (!lib) {
    loadFailed = 1;
    goto out;
  }
  static const char* syms[] = {"ncclProfiler_v6", "ncclProfiler_v5", "ncclProfiler_v4",
                               "ncclProfiler_v3", "ncclProfiler_v2", "ncclProfiler_v1"};
  for (int i = 0; i < 6; i++) {
    void* s = dlsym(lib, syms[i]);
    if (s) {
      plugin.version = 6 - i;
      plugin.api = s;
      /* name is the first member of every version's struct */
      plugin.name = *(const char* const*)s;
      break;
    }
  }
  if (!plugin.api) {
    SIM_ERR("profiler plugin exports no ncclProfiler_v6..v1 symbol");
    dlclose(lib);
    lib = NULL;
    loadFailed = 1;
    goto out;
  }
  loads++;
  refCount = 1;
  ret = &plugin;
  SIM_INFO("loaded profiler plugin %s (v%d)", plugin.name ? plugin.name : "(null)", plugin.version);
out:
  pthread_mutex_unlock(&loadLock);
  return ret;
}

void simPluginRelease(void) {
  pthread_mutex_lock(&loadLock);
  if (refCount > 0 && --refCount == 0) {
    dlclose(lib);
    lib = NULL;
    memset(&plugin, 0, sizeof plugin);
    /* A thread stays listed in /proc/self/task for a moment after
     * pthread_join returned (the kernel wakes the joiner before it reaps the
     * task), whether the plugin joined it or the simulator (a proxy or network
     * thread of the communicator just destroyed): recount for up to 1 s
     * before blaming the plugin. A thread still there after that is a leak. */
    int extra = 0;
    for (int tries = 0; tries < 1000; tries++) {
      pthread_mutex_lock(&threadLock);
      extra = extraThreads() - baseThreads;
      pthread_mutex_unlock(&threadLock);
      if (extra <= 0) break;
      usleep(1000);
    }
    int fds = openFds() - baseFds;
    if (extra > 0) {
      SIM_ERR("plugin left %d thread(s) running after its last finalize and dlclose (NCCL would crash here)", extra);
      errors++;
    }
    if (fds > 0) {
      SIM_ERR("plugin left %d file descriptor(s) open after its last finalize and dlclose", fds);
      errors++;
    }
  }
  pthread_mutex_unlock(&loadLock);
}
