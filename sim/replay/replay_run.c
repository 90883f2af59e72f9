/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: running a recording against a plugin.
 *
 * The main thread loads the recording (replay_load.c) and forks one process
 * per recorded pid (the first pid stays in this process). In each process,
 * one thread per recorded thread makes that thread's calls in order, each at
 * its recorded time (scaled by --speed) from a start instant all processes
 * share. Handles are mapped: a recorded parent is passed as the handle the
 * plugin returned for it; a call whose event, parent or communicator has not
 * been made yet (by another thread) waits for it, boundedly. PXN events use
 * the originating process's context and pid, published in a shared area.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "replay/replay.h"

#define SIM_REPLAY_MAX_PROCS 256
/* How long a call waits for a call of another thread it depends on (a parent's
 * start, its event's start, its communicator's init) before it goes on
 * without it: recorded times are causal, so only a damaged recording waits. */
#define SIM_REPLAY_WAIT_NS 5000000000ull

typedef struct {
  int nprocs;
  int recPid[SIM_REPLAY_MAX_PROCS];
  _Atomic int replayPid[SIM_REPLAY_MAX_PROCS];
  _Atomic uint64_t ctx[SIM_REPLAY_MAX_PROCS]; /* one context of that process, for PXN events of others */
  uint64_t startAt;                   /* CLOCK_MONOTONIC ns at which recording time t0 is due */
  _Atomic uint64_t waitTimeouts, calls, waits, waitNs;
} simReplayShared;

static simReplayRecording rec;
static simReplayShared* shm;
static int myProc; /* index into shm->recPid */

static int procOf(int recPid) {
  for (int i = 0; i < shm->nprocs; i++)
    if (shm->recPid[i] == recPid) return i;
  return -1;
}

static uint64_t dueAt(int64_t ts) {
  if (simOpt.replaySpeed <= 0) return 0;
  /* ts - t0 < 2^62 (SIM_REPLAY_TS_LIMIT_NS); divided by a slow speed it may pass
   * 2^62 ns (146 years): as good as never, and clamped there so that the
   * conversion and the sum stay in range */
  double off = (double)(ts - rec.t0) / simOpt.replaySpeed;
  double never = (double)(2 * SIM_REPLAY_TS_LIMIT_NS);
  return shm->startAt + (uint64_t)(off > 0 ? (off < never ? off : never) : 0);
}

/* Wait for a call's time without spinning: on a machine with fewer cores
 * than replay threads, a spinning thread takes the core from the thread that
 * is due (measured: lateness spikes of 1-3 ms). A timed sleep wakes 30-90 us
 * late, so a call due within SIM_REPLAY_EARLY_NS is made at once, and a longer wait
 * sleeps until SIM_REPLAY_EARLY_NS before its time: calls run at most that much early
 * and, on an idle core, about as much late. */
#define SIM_REPLAY_EARLY_NS 100000ull
static void sleepUntil(uint64_t t) {
  uint64_t now = simNowNs();
  if (t <= now + SIM_REPLAY_EARLY_NS) return;
  uint64_t wake = t - SIM_REPLAY_EARLY_NS;
  struct timespec ts = {(time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* Wait until *flag != 0; false after SIM_REPLAY_WAIT_NS (counted). */
static bool waitFlag(_Atomic int* flag) {
  /* acquire pairs with the release store that set the flag: what the other
   * thread wrote before (the handle, the context) is visible */
  if (atomic_load_explicit(flag, memory_order_acquire)) return true;
  uint64_t t0 = simNowNs(), deadline = t0 + SIM_REPLAY_WAIT_NS;
  while (!atomic_load_explicit(flag, memory_order_acquire)) {
    if (simNowNs() > deadline) {
      atomic_fetch_add_explicit(&shm->waitTimeouts, 1, memory_order_relaxed);
      return false;
    }
    sched_yield();
  }
  atomic_fetch_add_explicit(&shm->waits, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&shm->waitNs, simNowNs() - t0, memory_order_relaxed);
  return true;
}

/* Every other thread of this process has passed ts (NCCL finalizes a
 * communicator only after its proxy and launches are done). */
static void waitOthersPast(int self, int64_t ts) {
  uint64_t deadline = simNowNs() + SIM_REPLAY_WAIT_NS;
  for (int t = 0; t < rec.nthreads; t++) {
    if (t == self || rec.threads[t].pid != shm->recPid[myProc]) continue;
    while (atomic_load_explicit(&rec.threads[t].nextTs, memory_order_acquire) <= ts) {
      if (simNowNs() > deadline) {
        atomic_fetch_add_explicit(&shm->waitTimeouts, 1, memory_order_relaxed);
        return;
      }
      sched_yield();
    }
  }
}

static void doInit(simReplayComm* c) {
  c->plugin = simProfilerInit(&c->ctx, c->commId, c->name, c->nNodes, c->nranks, c->rank, &c->holdsRef);
  if (c->plugin && c->ctx) {
    uint64_t expected = 0;
    atomic_compare_exchange_strong(&shm->ctx[myProc], &expected, (uint64_t)(uintptr_t)c->ctx);
  }
  /* release: ctx and plugin are visible to whoever acquires state */
  atomic_store_explicit(&c->state, c->plugin ? 1 : 2, memory_order_release);
}

static void doFini(int self, simReplayComm* c, int64_t ts) {
  int st = atomic_load_explicit(&c->state, memory_order_acquire);
  if (st != 1 && !(st == 2 && c->holdsRef)) return;
  waitOthersPast(self, ts);
  simProfilerFinalize(c->plugin, c->ctx, c->commId, c->rank, c->holdsRef);
  atomic_store_explicit(&c->state, 3, memory_order_release);
}

static void* unmappedAddress(void) {
  static void* page;
  if (!page) page = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return (char*)page + 64;
}

static void doStart(int self, int i) {
  simReplayEvent* e = &rec.events[i];
  int started = 2;
  const simPlugin* p = NULL;
  void* ctx = NULL;
  pid_t origin = getpid();
  if (e->pxn) {
    int op = procOf(e->originPid);
    int mine = op >= 0 && op == myProc;
    /* the originator's context and pid: addresses of another process */
    uint64_t octx = op >= 0 ? atomic_load_explicit(&shm->ctx[op], memory_order_acquire) : 0;
    ctx = octx && !mine ? (void*)(uintptr_t)octx : unmappedAddress();
    int opid = op >= 0 ? atomic_load_explicit(&shm->replayPid[op], memory_order_acquire) : 0;
    origin = opid > 0 && opid != getpid() ? opid : getppid();
    /* any live communicator of this process gives the plugin */
    for (int k = 0; k < rec.ncomms && !p; k++)
      if (rec.comms[k].pid == shm->recPid[myProc] && atomic_load_explicit(&rec.comms[k].state, memory_order_acquire) == 1)
        p = rec.comms[k].plugin;
  } else {
    simReplayComm* c = &rec.comms[e->comm];
    if (waitFlag(&c->state) && atomic_load_explicit(&c->state, memory_order_acquire) == 1) p = c->plugin, ctx = c->ctx;
  }
  if (!p) goto out;
  /* NCCL calls startEvent only when the event or one of its descendants is in the mask */
  if (!(__atomic_load_n(&simEventMask, __ATOMIC_RELAXED) & simTypeGate(e->type))) goto out;
  ncclProfilerEventDescr_v6_t d = e->d;
  const simEvent* parent = NULL;
  d.parentObj = NULL;
  if (e->parent >= 0) {
    simReplayEvent* pe = &rec.events[e->parent];
    /* a parent recorded later on this same thread cannot be waited for */
    bool sameThread = pe->startTid == rec.threads[self].tid && pe->pid == rec.threads[self].pid;
    if ((sameThread ? atomic_load_explicit(&pe->started, memory_order_acquire) != 0 : waitFlag(&pe->started)) &&
        pe->ev.serial) {
      parent = &pe->ev;
      d.parentObj = pe->ev.h;
    }
  } else if (e->parent == -2) {
    d.parentObj = (void*)(uintptr_t)e->rawParent;
  }
  if (e->type == 1 || e->type == 2) {
    intptr_t g = (intptr_t)(e->type == 1 ? d.coll.parentGroup : d.p2p.parentGroup) - 1;
    void* gh = NULL;
    if (g >= 0 && waitFlag(&rec.events[g].started)) gh = rec.events[g].ev.h;
    if (e->type == 1) d.coll.parentGroup = gh;
    else d.p2p.parentGroup = gh;
    /* for v4 and older NCCL passes the Group as the parent */
    if (p->version <= 4) parent = g >= 0 && rec.events[g].ev.serial ? &rec.events[g].ev : NULL;
  }
  if (e->type == 3) d.proxyOp.pid = e->pxn ? origin : getpid();
  if (e->type == 7) d.netPlugin.data = e->net;
  char key[64];
  snprintf(key, sizeof key, "\"rec\":%d", i);
  simStart(p, ctx, &e->ev, parent, &d, e->pxn, e->pxn ? origin : getpid(), key);
  started = 1;
out:
  /* release: ev is visible to the threads that acquire started */
  atomic_store_explicit(&e->started, started, memory_order_release);
}

static bool eventReady(simReplayEvent* e) {
  return waitFlag(&e->started) && atomic_load_explicit(&e->started, memory_order_acquire) == 1 && e->ev.h;
}

static const simPlugin* pluginOf(const simReplayEvent* e) {
  if (e->comm >= 0) return rec.comms[e->comm].plugin;
  for (int k = 0; k < rec.ncomms; k++)
    if (rec.comms[k].pid == shm->recPid[myProc] && rec.comms[k].plugin) return rec.comms[k].plugin;
  return NULL;
}

static void doState(const simReplayState* s) {
  simReplayEvent* e = &rec.events[s->event];
  if (!eventReady(e)) return;
  ncclProfilerEventStateArgs_v6_t a;
  memset(&a, 0, sizeof a);
  ncclProfilerEventStateArgs_v6_t* args = &a;
  switch (e->type) {
  case 4: a.proxyStep.transSize = (size_t)s->arg; break;
  case 5: a.proxyCtrl.appendedProxyOps = (int)s->arg; break;
  case 6: a.kernelCh.pTimer = s->arg; break;
  case 7: a.netPlugin.data = e->net; break;
  case 8: args = NULL; break; /* GroupApi states carry no arguments */
  default: break;
  }
  simRecord(pluginOf(e), &e->ev, s->state, args);
}

static void doStop(simReplayEvent* e) {
  if (!eventReady(e)) return;
  simStop(pluginOf(e), &e->ev);
}

static const char* roleOf(const simReplayThread* t) {
  for (int k = 0; k < t->n; k++) {
    if (t->calls[k].kind != SIM_REPLAY_START) continue;
    int ty = rec.events[t->calls[k].index].type;
    if (ty == 3 || ty == 4 || ty == 5 || ty == 6) return "proxy";
    if (ty == 7) return "net";
    return "app";
  }
  return "other";
}

static void* threadMain(void* arg) {
  int self = (int)(intptr_t)arg;
  simReplayThread* t = &rec.threads[self];
  simTruthThreadBegin(roleOf(t));
  /* timed waits sleep with 1 ns timer slack (default 50 us), spinning only their last stretch */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  simTruthf("\"kind\":\"replay_thread\",\"rec_pid\":%d,\"rec_tid\":%d,\"calls\":%d", t->pid, t->tid, t->n);
  uint64_t maxLate = 0, lateOver100us = 0;
  int worst = -1;
  for (int k = 0; k < t->n; k++) {
    const simReplayCall* c = &t->calls[k];
    /* release: a finalizing thread that acquires this sees our earlier calls done */
    atomic_store_explicit(&t->nextTs, c->ts, memory_order_release);
    /* A recording stamps init at one instant, but the call takes time (a
     * plugin's first init may calibrate clocks and start threads: ms). A
     * thread's first init is therefore made at once, before the schedule
     * starts (startAt leaves 50 ms for it), not at its time. */
    uint64_t due = k == 0 && c->kind == SIM_REPLAY_INIT ? 0 : dueAt(c->ts);
    if (due) {
      sleepUntil(due);
      uint64_t now = simNowNs();
      uint64_t late = now > due ? now - due : 0;
      if (late > maxLate) maxLate = late, worst = k;
      if (late > 100000) lateOver100us++;
    }
    switch (c->kind) {
    case SIM_REPLAY_INIT: doInit(&rec.comms[c->index]); break;
    case SIM_REPLAY_START: doStart(self, c->index); break;
    case SIM_REPLAY_STATE: doState(&rec.states[c->index]); break;
    case SIM_REPLAY_STOP: doStop(&rec.events[c->index]); break;
    case SIM_REPLAY_FINI: doFini(self, &rec.comms[c->index], c->ts); break;
    }
    atomic_fetch_add_explicit(&shm->calls, 1, memory_order_relaxed);
  }
  atomic_store_explicit(&t->nextTs, INT64_MAX, memory_order_release);
  /* how late the calls were made (before the call itself), against the recording's times */
  simTruthf("\"kind\":\"replay_lateness\",\"rec_tid\":%d,\"calls\":%d,\"max_late_ns\":%llu,\"worst_call\":%d,"
            "\"late_over_100us\":%llu",
            t->tid, t->n, (unsigned long long)maxLate, worst, (unsigned long long)lateOver100us);
  simTruthThreadEnd();
  return NULL;
}

static int replayProcess(int procIndex) {
  myProc = procIndex;
  atomic_store_explicit(&shm->replayPid[myProc], (int)getpid(), memory_order_release);
  int n = 0;
  pthread_t* th = calloc((size_t)rec.nthreads, sizeof *th);
  int* idx = calloc((size_t)rec.nthreads, sizeof *idx);
  for (int t = 0; t < rec.nthreads; t++) {
    if (rec.threads[t].pid != shm->recPid[myProc]) continue;
    atomic_store(&rec.threads[t].nextTs, rec.threads[t].n ? rec.threads[t].calls[0].ts : INT64_MAX);
  }
  for (int t = 0; t < rec.nthreads; t++) {
    if (rec.threads[t].pid != shm->recPid[myProc]) continue;
    idx[n] = t;
    simThreadCreate(&th[n++], threadMain, (void*)(intptr_t)t);
  }
  for (int k = 0; k < n; k++) simThreadJoin(th[k]);
  free(th);
  free(idx);
  /* Communicators the recording never finalized stay so: the process ends
   * without destroying them, as the recorded one did. */
  int unfinalized = 0;
  for (int k = 0; k < rec.ncomms; k++)
    if (rec.comms[k].pid == shm->recPid[myProc] && atomic_load(&rec.comms[k].state) == 1) unfinalized++;
  if (unfinalized)
    simTruthf("\"kind\":\"replay_exit_without_finalize\",\"rec_pid\":%d,\"comms\":%d", shm->recPid[myProc],
              unfinalized);
  return 0;
}

int simRunReplay(const char* path) {
  if (simReplayLoad(path, &rec) != 0) {
    SIM_ERR("replay: nothing to replay in %s (no communicator init record could be read)", path);
    return 1;
  }
  uint64_t skippedAll = 0;
  char skipJson[1024] = "";
  size_t sj = 0;
  for (int k = 0; k < SIM_REPLAY_SKIP_NREASONS; k++) {
    if (!rec.skipped[k]) continue;
    skippedAll += rec.skipped[k];
    fprintf(stderr, "ncclscope-sim: replay: skipped %llu: %s", (unsigned long long)rec.skipped[k],
            simReplaySkipName(k));
    if (k == SIM_REPLAY_SKIP_UNKNOWN_RECORD)
      for (int u = 0; u < SIM_REPLAY_MAX_UNKNOWN_NAMES && rec.unknownName[u][0]; u++)
        fprintf(stderr, "%s%s: %llu", u ? ", " : " (", rec.unknownName[u], (unsigned long long)rec.unknownCount[u]);
    if (k == SIM_REPLAY_SKIP_UNKNOWN_RECORD && rec.unknownName[0][0]) fputc(')', stderr);
    if (k == SIM_REPLAY_SKIP_BAD_JSON && rec.firstBad[0])
      fprintf(stderr, "; the first at %s, the lines after it are read", rec.firstBad);
    if (k == SIM_REPLAY_SKIP_BAD_TIME && rec.firstBadTime[0]) fprintf(stderr, "; the first at %s", rec.firstBadTime);
    fputc('\n', stderr);
    sj += (size_t)snprintf(skipJson + sj, sizeof skipJson - sj, "%s\"%s\":%llu", sj ? "," : "", simReplaySkipName(k),
                           (unsigned long long)rec.skipped[k]);
  }
  shm = mmap(NULL, sizeof *shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) {
    SIM_ERR("replay: mmap of the shared area failed");
    return 2;
  }
  memset(shm, 0, sizeof *shm);
  for (int t = 0; t < rec.nthreads; t++) {
    int pid = rec.threads[t].pid;
    bool known = false;
    for (int i = 0; i < shm->nprocs; i++) known = known || shm->recPid[i] == pid;
    if (known) continue;
    if (shm->nprocs == SIM_REPLAY_MAX_PROCS) {
      SIM_ERR("replay: more than %d recorded processes; the rest are not replayed", SIM_REPLAY_MAX_PROCS);
      break;
    }
    shm->recPid[shm->nprocs++] = pid;
  }
  char source[1024];
  snprintf(source, sizeof source, "%s", path);
  for (char* q = source; *q; q++)
    if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20) *q = '_'; /* a JSON string as is */
  /* 50 ms for every process to be forked and ready */
  shm->startAt = simNowNs() + 50000000ull;
  simTruthf(
      "\"kind\":\"replay\",\"source\":\"%s\",\"lines\":%llu,\"comms\":%d,\"events\":%d,\"states\":%d,"
      "\"threads\":%d,\"procs\":%d,\"speed\":%.3f,\"skipped\":{%s},\"t0_ns\":%lld,\"start_at_ns\":%llu,"
      "\"early_ns\":%llu,\"cupti_kernels\":%d",
      source, (unsigned long long)rec.lines, rec.ncomms, rec.nevents, rec.nstates, rec.nthreads, shm->nprocs,
      simOpt.replaySpeed, skipJson, (long long)rec.t0, (unsigned long long)shm->startAt, SIM_REPLAY_EARLY_NS,
      rec.nkernels);
  simReplayWriteGpuTruth(&rec, shm->startAt, simOpt.replaySpeed);
  fflush(NULL);
  int rc = simRunProcesses(shm->nprocs, replayProcess);
  uint64_t calls = atomic_load(&shm->calls);
  fprintf(stderr,
          "ncclscope-sim: replay: %llu calls in %d process(es), %d thread(s); %llu skipped; %llu call(s) waited "
          "%.3f ms in all for another thread's call, %llu gave up after %.0f s\n",
          (unsigned long long)calls, shm->nprocs, rec.nthreads, (unsigned long long)skippedAll,
          (unsigned long long)atomic_load(&shm->waits), (double)atomic_load(&shm->waitNs) / 1e6,
          (unsigned long long)atomic_load(&shm->waitTimeouts), SIM_REPLAY_WAIT_NS / 1e9);
  if (calls == 0) {
    SIM_ERR("replay: no call could be replayed");
    rc = 1;
  }
  simReplayFree(&rec);
  return rc;
}
