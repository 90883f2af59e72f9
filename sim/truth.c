/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim: the ground-truth record (--truth FILE, JSON Lines).
 *
 * Every simulator thread owns a buffer (thread-local) and call counters; the
 * hot path only appends to its own buffer (under the buffer's own lock, which
 * only the final write contends). At thread end the buffer and the counters
 * move to a process list under truthLock. The process writes its list once
 * at exit, and the buffers of threads still running then (a process that
 * exits with its communicators alive); with several processes each child
 * writes FILE.<pid>.part and the parent appends them to FILE after waitpid,
 * so the result is one file.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

typedef struct simTls {
  char* buf;
  size_t len, cap;
  pid_t tid;
  const char* role;
  /* [type][0]=starts called, [1]=starts withheld by the adapter, [2]=stops, [3]=stop withheld,
   * [4 + state]=records called */
  uint64_t counts[SIM_NTYPES][4 + SIM_NSTATES];
  uint64_t dropped[SIM_NTYPES][SIM_NSTATES];
  pthread_mutex_t lock; /* the owner's appends and counts vs. the final write */
  struct simTls *next, *liveNext, *livePrev;
} simTls;

static _Thread_local simTls* tls;
static pthread_mutex_t truthLock = PTHREAD_MUTEX_INITIALIZER;
static simTls* done;
static simTls* live; /* threads whose buffer has not moved to done, under truthLock */
static bool enabled;

void simTruthInit(void) { enabled = simOpt.truthPath != NULL; }

int simTruthRole(void) {
  static const char* roles[] = {"app", "proxy", "net", "cuda_cb"};
  if (!tls) return 4;
  for (int i = 0; i < 4; i++)
    if (!strcmp(tls->role, roles[i])) return i;
  return 4;
}

void simTruthThreadBegin(const char* role) {
  if (tls) return;
  tls = calloc(1, sizeof *tls);
  tls->tid = simGettid();
  tls->role = role;
  pthread_mutex_init(&tls->lock, NULL);
  pthread_mutex_lock(&truthLock);
  tls->liveNext = live;
  if (live) live->livePrev = tls;
  live = tls;
  pthread_mutex_unlock(&truthLock);
}

/* Appends to t's buffer; t->lock held. */
static void appendRaw(simTls* t, const char* s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 65536;
    while (nc < t->len + n + 1) nc *= 2;
    t->buf = realloc(t->buf, nc);
    t->cap = nc;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
}

/* One truth line into t's buffer; t->lock held. */
static void vtruthTo(simTls* t, const char* fmt, va_list ap) {
  char line[2048];
  int n = snprintf(line, sizeof line, "{\"pid\":%d,\"tid\":%d,", (int)getpid(), (int)t->tid);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 2, fmt, ap);
  if (m < 0) return;
  if ((size_t)(n + m) > sizeof line - 3) m = (int)(sizeof line - 3 - (size_t)n);
  n += m;
  line[n++] = '}';
  line[n++] = '\n';
  appendRaw(t, line, (size_t)n);
}

static void truthTo(simTls* t, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vtruthTo(t, fmt, ap);
  va_end(ap);
}

void simTruthf(const char* fmt, ...) {
  if (!enabled) return;
  if (!tls) simTruthThreadBegin("other");
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&tls->lock);
  vtruthTo(tls, fmt, ap);
  pthread_mutex_unlock(&tls->lock);
  va_end(ap);
}

void simTruthCountStart(int type, bool called) {
  if (!tls) simTruthThreadBegin("other");
  pthread_mutex_lock(&tls->lock);
  tls->counts[type][called ? 0 : 1]++;
  pthread_mutex_unlock(&tls->lock);
}
void simTruthCountStop(int type, bool called) {
  if (!tls) simTruthThreadBegin("other");
  pthread_mutex_lock(&tls->lock);
  tls->counts[type][called ? 2 : 3]++;
  pthread_mutex_unlock(&tls->lock);
}
void simTruthCountRecord(int type, int state, bool called) {
  if (!tls) simTruthThreadBegin("other");
  if (state < 0 || state >= SIM_NSTATES) return;
  pthread_mutex_lock(&tls->lock);
  if (called)
    tls->counts[type][4 + state]++;
  else
    tls->dropped[type][state]++;
  pthread_mutex_unlock(&tls->lock);
}

/* The thread line and its counters, into t's own buffer; t->lock held. */
static void flushCounts(simTls* t) {
  truthTo(t, "\"kind\":\"thread\",\"role\":\"%s\"", t->role);
  for (int ty = 0; ty < SIM_NTYPES; ty++) {
    uint64_t* c = t->counts[ty];
    bool any = c[0] || c[1] || c[2] || c[3];
    for (int s = 0; s < SIM_NSTATES; s++) any = any || c[4 + s] || t->dropped[ty][s];
    if (!any) continue;
    char st[1024] = "", dr[1024] = "";
    size_t a = 0, b = 0;
    for (int s = 0; s < SIM_NSTATES; s++) {
      if (c[4 + s]) a += (size_t)snprintf(st + a, sizeof st - a, "%s\"%d\":%llu", a ? "," : "", s, (unsigned long long)c[4 + s]);
      if (t->dropped[ty][s])
        b += (size_t)snprintf(dr + b, sizeof dr - b, "%s\"%d\":%llu", b ? "," : "", s,
                              (unsigned long long)t->dropped[ty][s]);
    }
    truthTo(t, "\"kind\":\"counts\",\"role\":\"%s\",\"type\":\"%s\",\"starts\":%llu,\"starts_withheld\":%llu,"
              "\"stops\":%llu,\"stops_skipped\":%llu,\"states\":{%s},\"states_withheld\":{%s}",
              t->role, simTypeName(ty), (unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2],
              (unsigned long long)c[3], st, dr);
  }
}

static void unlinkLive(simTls* t) {
  if (t->livePrev) t->livePrev->liveNext = t->liveNext;
  else if (live == t) live = t->liveNext;
  if (t->liveNext) t->liveNext->livePrev = t->livePrev;
  t->liveNext = t->livePrev = NULL;
}

void simTruthThreadEnd(void) {
  if (!tls) return;
  pthread_mutex_lock(&tls->lock);
  flushCounts(tls);
  pthread_mutex_unlock(&tls->lock);
  pthread_mutex_lock(&truthLock);
  unlinkLive(tls);
  tls->next = done;
  done = tls;
  pthread_mutex_unlock(&truthLock);
  tls = NULL;
}

void simTruthForkChild(void) {
  /* the parent owns what was recorded before fork; only the forking thread exists here */
  if (tls) {
    tls->len = 0, memset(tls->counts, 0, sizeof tls->counts), memset(tls->dropped, 0, sizeof tls->dropped);
    pthread_mutex_init(&tls->lock, NULL);
    tls->liveNext = tls->livePrev = NULL;
  }
  pthread_mutex_init(&truthLock, NULL);
  done = NULL;
  live = tls;
}

void simTruthWrite(const char* path, bool childPart) {
  simTruthThreadEnd(); /* the calling (main) thread */
  if (!enabled) return;
  char name[4096];
  if (childPart)
    snprintf(name, sizeof name, "%s.%d.part", path, (int)getpid());
  else
    snprintf(name, sizeof name, "%s", path);
  FILE* f = fopen(name, childPart ? "w" : "a");
  if (!f) {
    SIM_ERR("cannot write truth file %s", name);
    return;
  }
  pthread_mutex_lock(&truthLock);
  /* oldest thread first: reverse the list */
  simTls* rev = NULL;
  while (done) {
    simTls* n = done->next;
    done->next = rev;
    rev = done;
    done = n;
  }
  for (simTls* t = rev; t;) {
    if (t->len) fwrite(t->buf, 1, t->len, f);
    simTls* n = t->next;
    pthread_mutex_destroy(&t->lock);
    free(t->buf);
    free(t);
    t = n;
  }
  /* Threads still running (the process exits with its communicators
   * alive): what they recorded so far, and their counters; they keep their
   * buffers, emptied, for anything they record until the process is gone. */
  for (simTls* t = live; t; t = t->liveNext) {
    pthread_mutex_lock(&t->lock);
    flushCounts(t);
    if (t->len) fwrite(t->buf, 1, t->len, f);
    t->len = 0;
    memset(t->counts, 0, sizeof t->counts);
    memset(t->dropped, 0, sizeof t->dropped);
    pthread_mutex_unlock(&t->lock);
  }
  pthread_mutex_unlock(&truthLock);
  fclose(f);
}

void simTruthMerge(const char* path, const pid_t* kids, int n) {
  FILE* out = fopen(path, "a");
  if (!out) return;
  for (int i = 0; i < n; i++) {
    char name[4096];
    snprintf(name, sizeof name, "%s.%d.part", path, (int)kids[i]);
    FILE* in = fopen(name, "r");
    if (!in) continue;
    char buf[65536];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, r, out);
    fclose(in);
    unlink(name);
  }
  fclose(out);
}
