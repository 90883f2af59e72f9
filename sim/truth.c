/* ncclscope-sim: the ground-truth record (--truth FILE, JSON Lines).
 *
 * Every simulator thread owns a buffer (thread-local) and call counters; the
 * hot path only appends to its own buffer. At thread end the buffer and the
 * counters move to a process list under truthLock. The process writes its
 * list once at exit; with several processes each child writes FILE.<pid>.part
 * and the parent appends them to FILE after waitpid, so the result is one file.
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
  struct simTls* next;
} simTls;

static _Thread_local simTls* tls;
static pthread_mutex_t truthLock = PTHREAD_MUTEX_INITIALIZER;
static simTls* done;
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
}

static void appendRaw(const char* s, size_t n) {
  if (!tls) simTruthThreadBegin("other");
  if (tls->len + n + 1 > tls->cap) {
    size_t nc = tls->cap ? tls->cap * 2 : 65536;
    while (nc < tls->len + n + 1) nc *= 2;
    tls->buf = realloc(tls->buf, nc);
    tls->cap = nc;
  }
  memcpy(tls->buf + tls->len, s, n);
  tls->len += n;
}

void simTruthf(const char* fmt, ...) {
  if (!enabled) return;
  char line[2048];
  int n = snprintf(line, sizeof line, "{\"pid\":%d,\"tid\":%d,", (int)getpid(), (int)(tls ? tls->tid : simGettid()));
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 2, fmt, ap);
  va_end(ap);
  if (m < 0) return;
  if ((size_t)(n + m) > sizeof line - 3) m = (int)(sizeof line - 3 - (size_t)n);
  n += m;
  line[n++] = '}';
  line[n++] = '\n';
  appendRaw(line, (size_t)n);
}

void simTruthCountStart(int type, bool called) {
  if (!tls) simTruthThreadBegin("other");
  tls->counts[type][called ? 0 : 1]++;
}
void simTruthCountStop(int type, bool called) {
  if (!tls) simTruthThreadBegin("other");
  tls->counts[type][called ? 2 : 3]++;
}
void simTruthCountRecord(int type, int state, bool called) {
  if (!tls) simTruthThreadBegin("other");
  if (state < 0 || state >= SIM_NSTATES) return;
  if (called)
    tls->counts[type][4 + state]++;
  else
    tls->dropped[type][state]++;
}

static void flushCounts(simTls* t) {
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
    simTruthf("\"kind\":\"counts\",\"role\":\"%s\",\"type\":\"%s\",\"starts\":%llu,\"starts_withheld\":%llu,"
              "\"stops\":%llu,\"stops_skipped\":%llu,\"states\":{%s},\"states_withheld\":{%s}",
              t->role, simTypeName(ty), (unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2],
              (unsigned long long)c[3], st, dr);
  }
}

void simTruthThreadEnd(void) {
  if (!tls) return;
  simTruthf("\"kind\":\"thread\",\"role\":\"%s\"", tls->role);
  flushCounts(tls);
  pthread_mutex_lock(&truthLock);
  tls->next = done;
  done = tls;
  pthread_mutex_unlock(&truthLock);
  tls = NULL;
}

void simTruthForkChild(void) {
  /* the parent owns what was recorded before fork */
  if (tls) tls->len = 0, memset(tls->counts, 0, sizeof tls->counts), memset(tls->dropped, 0, sizeof tls->dropped);
  done = NULL;
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
    free(t->buf);
    free(t);
    t = n;
  }
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
