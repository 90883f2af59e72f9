/* SPDX-License-Identifier: Apache-2.0 */
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
#include <stdatomic.h>
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
static int baseFds;
static int errors;
static int loads;
static const char* forcedSpec;
static _Thread_local bool lastHeld; /* the calling thread's last acquire took a reference */
/* NCCL 2.23-2.27 after a failed init: the global plugin pointer is NULL,
 * nothing is profiled any more, and the last unload dereferences it. */
static bool globalNull;
/* NCCL 2.30 after a failed init: the count can reach 0 while contexts are
 * live and NCCL would go on calling into the closed library. The simulator
 * then only marks the plugin unloaded (calls are counted, not made: they
 * would crash) and closes it at process end. */
static bool deferClose;
static _Atomic int unloaded;
static _Atomic int deadCalls; /* calls NCCL would make into an unloaded plugin */

/* Which threads are the plugin's. Every simulator thread registers its
 * kernel tid before simThreadCreate returns and is unregistered once joined;
 * the tids listed in /proc/self/task at load time that are not the
 * simulator's are the baseline. After the last dlclose, a listed tid that is
 * neither is the plugin's. Comparing sets rather than counts keeps a thread
 * that returned but is not joined yet (gone from /proc, still the
 * simulator's) from skewing the baseline. All guarded by threadLock. */
static pthread_mutex_t threadLock = PTHREAD_MUTEX_INITIALIZER;
typedef struct {
  pthread_t th;
  pid_t tid;
} simThreadId;
static simThreadId* simTids;
static size_t nSimTids, capSimTids;
static pid_t* baseTids;
static size_t nBaseTids, capBaseTids;

typedef struct {
  void* (*fn)(void*);
  void* arg;
  _Atomic pid_t tid;
} threadStart;

static void* threadTrampoline(void* p) {
  threadStart* st = p;
  void* (*fn)(void*) = st->fn;
  void* arg = st->arg;
  /* release: the creator's acquire load sees the tid; st is not touched after */
  atomic_store_explicit(&st->tid, simGettid(), memory_order_release);
  return fn(arg);
}

void simThreadCreate(pthread_t* t, void* (*fn)(void*), void* arg) {
  threadStart st = {fn, arg, 0};
  pthread_mutex_lock(&threadLock);
  if (pthread_create(t, NULL, threadTrampoline, &st) != 0) {
    SIM_ERR("pthread_create failed");
    exit(2);
  }
  pid_t tid;
  while ((tid = atomic_load_explicit(&st.tid, memory_order_acquire)) == 0) sched_yield();
  if (nSimTids == capSimTids) {
    capSimTids = capSimTids ? 2 * capSimTids : 64;
    simTids = realloc(simTids, capSimTids * sizeof *simTids);
  }
  simTids[nSimTids++] = (simThreadId){*t, tid};
  pthread_mutex_unlock(&threadLock);
}

void simThreadJoin(pthread_t t) {
  pthread_join(t, NULL);
  pthread_mutex_lock(&threadLock);
  for (size_t i = 0; i < nSimTids; i++)
    if (pthread_equal(simTids[i].th, t)) {
      simTids[i] = simTids[--nSimTids];
      break;
    }
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

/* opendir itself holds one descriptor while counting. */
static int openFds(void) { return countDir("/proc/self/fd") - 1; }

/* Descriptors beyond the baseline, retried for up to 1 s: another thread
 * of the simulator may hold one for a moment (glibc's malloc reads
 * /proc/sys/vm/overcommit_memory when a thread's heap shrinks). */
static int settledExtraFds(void) {
  int extra = 0;
  for (int i = 0; i < 100; i++) {
    extra = openFds() - baseFds;
    if (extra <= 0) return 0;
    usleep(10000);
  }
  return extra;
}

static void listFds(void) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return;
  for (struct dirent* e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char p[300], t[512];
    snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(p, t, sizeof t - 1);
    t[n > 0 ? n : 0] = 0;
    fprintf(stderr, "ncclscope-sim:   fd %s -> %s\n", e->d_name, t);
  }
  closedir(d);
}

static bool isSimTid(pid_t tid) {
  for (size_t i = 0; i < nSimTids; i++)
    if (simTids[i].tid == tid) return true;
  return false;
}

static bool isBaseTid(pid_t tid) {
  for (size_t i = 0; i < nBaseTids; i++)
    if (baseTids[i] == tid) return true;
  return false;
}

/* Linux lists /proc/self/task by walking the thread list and stops early
 * when the thread it stands on exits before it steps on, so one scan can
 * miss every thread behind an exiting one. The baseline is therefore the
 * union of three scans, and "no thread left" needs three empty scans. */
enum { SCANS = 3 };

/* Listed threads that are not the simulator's: added to the baseline
 * (record) or counted beyond it. Call with threadLock held. */
static int foreignThreads(bool record) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return 0;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    pid_t tid = (pid_t)atoi(e->d_name);
    if (isSimTid(tid)) continue;
    if (record) {
      if (isBaseTid(tid)) continue;
      if (nBaseTids == capBaseTids) {
        capBaseTids = capBaseTids ? 2 * capBaseTids : 16;
        baseTids = realloc(baseTids, capBaseTids * sizeof *baseTids);
      }
      baseTids[nBaseTids++] = tid;
    } else if (!isBaseTid(tid)) {
      n++;
    }
  }
  closedir(d);
  return n;
}

static void recordBaseline(void) {
  pthread_mutex_lock(&threadLock);
  nBaseTids = 0;
  for (int i = 0; i < SCANS; i++) foreignThreads(true);
  pthread_mutex_unlock(&threadLock);
}

/* The plugin's threads: 0 once SCANS scans in a row find none, otherwise
 * the count after 1 s (a thread stays listed in /proc/self/task for a
 * moment after pthread_join returned: the kernel wakes the joiner before it
 * reaps the task). */
static int settledExtraThreads(void) {
  int extra = 0, empty = 0;
  for (int tries = 0; tries < 1000 && empty < SCANS; tries++) {
    pthread_mutex_lock(&threadLock);
    int n = foreignThreads(false);
    pthread_mutex_unlock(&threadLock);
    if (n <= 0) {
      empty++;
      continue;
    }
    empty = 0;
    extra = n;
    usleep(1000);
  }
  return empty >= SCANS ? 0 : extra;
}

void simLoaderForceSpec(const char* spec) { forcedSpec = spec; loadFailed = 0; }
int simPluginLoads(void) { return loads; }
int simPluginErrors(void) { return errors; }

/* "lib...so": a library's file name, which 2.28+ never prefixes again */
static bool isLibFileName(const char* s) {
  size_t n = strlen(s);
  return n >= 3 && strncmp(s, "lib", 3) == 0 && strcmp(s + n - 3, ".so") == 0;
}

static void* openByNcclRules(void) {
  const char* spec = forcedSpec ? forcedSpec : simOpt.plugin ? simOpt.plugin : getenv("NCCL_PROFILER_PLUGIN");
  if (spec && !*spec) spec = NULL; /* every release reads an empty value as unset */
  if (spec && strcasecmp(spec, "none") == 0) return NULL;
  if (spec == NULL) {
    void* h = dlopen("libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      /* NCCL goes on without a profiler here, silently; a simulator run with nothing to drive is a mistake */
      SIM_ERR("no profiler plugin loaded: neither --plugin nor NCCL_PROFILER_PLUGIN is given and "
              "libnccl-profiler.so is not on the library path (%s); name one with --plugin PATH, or run "
              "without one on purpose with NCCL_PROFILER_PLUGIN=none",
              dlerror());
      errors++;
    }
    return h;
  }
  void* h = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
  if (h) return h;
  if (simNcclCur.minor <= 25) {
    /* 2.23-2.25 retry the same name: no libnccl-profiler-<value>.so */
    SIM_ERR("cannot load profiler plugin '%s': %s", spec, dlerror());
    errors++;
    return NULL;
  }
  char first[512];
  snprintf(first, sizeof first, "%s", dlerror());
  if (simNcclCur.minor >= 28 && (strchr(spec, '/') || isLibFileName(spec))) {
    /* 2.28+ (2.27.5+) build libnccl-profiler-<value>.so only from a bare name:
     * no slash (a path), not itself a lib*.so file name */
    SIM_ERR("cannot load profiler plugin '%s': %s", spec, first);
    errors++;
    return NULL;
  }
  char name[1024];
  snprintf(name, sizeof name, "libnccl-profiler-%s.so", spec);
  h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    /* NCCL would go on without a profiler; a test bench asked for a plugin
     * must not pass silently when it cannot load it (a typo in a CI script) */
    SIM_ERR("cannot load profiler plugin '%s': %s", spec, first);
    errors++;
  }
  return h;
}

const simPlugin* simPluginAcquire(void) {
  const simPlugin* ret = NULL;
  pthread_mutex_lock(&loadLock);
  lastHeld = false;
  if (loadFailed) goto out;
  if (refCount < 0) {
    /* after NCCL 2.30's double unload the count is one short: this load only
     * brings it back to 0 and nothing is loaded for this communicator */
    refCount++;
    lastHeld = true;
    goto out;
  }
  if (refCount > 0) {
    refCount++;
    lastHeld = true;
    ret = globalNull ? NULL : &plugin;
    goto out;
  }
  recordBaseline();
  baseFds = openFds();
  lib = openByNcclRules();
  if (!lib) {
    loadFailed = 1;
    goto out;
  }
  /* the newest version this release knows first: 2.23 looks up only v1; 2.31+ v7 first
   * (src/plugin/profiler.cc, ncclProfilerPluginLoad: getNcclProfiler_v7, then v6 .. v1) */
  static const char* syms[] = {"ncclProfiler_v7", "ncclProfiler_v6", "ncclProfiler_v5", "ncclProfiler_v4",
                               "ncclProfiler_v3", "ncclProfiler_v2", "ncclProfiler_v1"};
  for (int i = 7 - simNcclCur.nativeAbi; i < 7; i++) {
    void* s = dlsym(lib, syms[i]);
    if (s) {
      /* A load after NCCL 2.30's double unload finds the library still mapped
       * (it is marked unloaded, never closed) while other communicators read
       * these fields without the lock: write them only if they change. */
      if (plugin.version != 7 - i) plugin.version = 7 - i;
      __atomic_store_n(&plugin.api, s, __ATOMIC_RELEASE);
      /* name is the first member of every version's struct */
      const char* name = *(const char* const*)s;
      if (plugin.name != name) plugin.name = name;
      break;
    }
  }
  if (!plugin.api) {
    SIM_ERR("profiler plugin %s exports no ncclProfiler_v%d..v1 symbol (NCCL %s looks up no newer one)",
            forcedSpec ? forcedSpec : simOpt.plugin ? simOpt.plugin : "libnccl-profiler.so", simNcclCur.nativeAbi,
            simNcclCur.name);
    errors++;
    dlclose(lib);
    lib = NULL;
    loadFailed = 1;
    goto out;
  }
  loads++;
  refCount = 1;
  lastHeld = true;
  ret = &plugin;
  SIM_INFO("loaded profiler plugin %s (v%d)", plugin.name ? plugin.name : "(null)", plugin.version);
out:
  pthread_mutex_unlock(&loadLock);
  return ret;
}

bool simPluginHeld(void) { return lastHeld; }
void simPluginCrash(void) {
  pthread_mutex_lock(&loadLock);
  errors++;
  pthread_mutex_unlock(&loadLock);
}

void simPluginMarkGlobalNull(void) {
  pthread_mutex_lock(&loadLock);
  globalNull = true;
  pthread_mutex_unlock(&loadLock);
}

void simPluginDeferClose(void) {
  pthread_mutex_lock(&loadLock);
  deferClose = true;
  pthread_mutex_unlock(&loadLock);
}

bool simPluginLive(const simPlugin* p) {
  if (p && !atomic_load_explicit(&unloaded, memory_order_acquire) && __atomic_load_n(&p->api, __ATOMIC_ACQUIRE))
    return true;
  if (p) atomic_fetch_add_explicit(&deadCalls, 1, memory_order_relaxed);
  return false;
}

int simPluginDeadCalls(void) { return atomic_load(&deadCalls); }

void simPluginRelease(void) {
  pthread_mutex_lock(&loadLock);
  if (refCount <= 0) {
    /* NCCL 2.30 after a failed init: it unloaded at once and unloads again at finalize */
    SIM_ERR("plugin reference count underflow: NCCL %s unloads the plugin twice for a communicator whose init "
            "failed (the library may be closed under other communicators)", simNcclCur.name);
    errors++;
    refCount--;
    pthread_mutex_unlock(&loadLock);
    return;
  }
  if (--refCount == 0 && globalNull) {
    SIM_ERR("NCCL %s would crash here: after a failed init its global plugin pointer is NULL and the last "
            "unload dereferences it", simNcclCur.name);
    errors++;
    globalNull = false;
  }
  if (refCount == 0 && deferClose) {
    atomic_store_explicit(&unloaded, 1, memory_order_release);
    pthread_mutex_unlock(&loadLock);
    return;
  }
  if (refCount == 0) {
    /* A thread the plugin joined may still be listed for a moment: the
     * count is retried for up to 1 s before the plugin is blamed. The first
     * wait comes before dlclose, so that a leaked thread that had not run yet
     * does so (and parks in libc) while its code is still mapped, instead of
     * crashing the process before the leak is reported; the count that
     * decides comes after. */
    settledExtraThreads();
    dlclose(lib);
    lib = NULL;
    /* release: a thread that still holds a pointer to this struct sees api NULL (simPluginLive) */
    __atomic_store_n(&plugin.api, NULL, __ATOMIC_RELEASE);
    int extra = settledExtraThreads();
    int fds = settledExtraFds();
    if (extra > 0) {
      SIM_ERR("plugin left %d thread(s) running after its last finalize and dlclose (NCCL would crash here)", extra);
      errors++;
    }
    if (fds > 0) {
      SIM_ERR("plugin left %d file descriptor(s) open after its last finalize and dlclose", fds);
      listFds();
      errors++;
    }
  }
  pthread_mutex_unlock(&loadLock);
}
