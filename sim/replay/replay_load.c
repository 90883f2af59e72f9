/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: reading a recording into per-thread call lists.
 *
 * Runs on the main thread before any replay process is forked. Input: one
 * JSON Lines file, or a directory whose *.jsonl files are read in name order,
 * in the export contract or as the per-process JSONL recorders write it:
 * lifecycle lines with recordType "lifecycle", "event" or none at all (type
 * "ProfilerLifecycle" tells them), extra fields ignored, gpuUuid never read,
 * pointers "null" for none, CUPTI kernel records kept as GPU truth
 * (replay_gpu.c). What is valid is kept; every line or reference that cannot
 * be replayed is counted under a reason (simReplaySkipName) and the rest goes on.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <json-c/linkhash.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay/replay_load.h"

const char* simReplaySkipName(int reason) {
  static const char* names[SIM_REPLAY_SKIP_NREASONS] = {"not JSON (torn or damaged line)",
                                                        "unknown recordType",
                                                        "unknown event type",
                                                        "missing or malformed fields",
                                                        "no init record for its communicator",
                                                        "duplicate eventAddr",
                                                        "state of an event not in the recording",
                                                        "parent not in the recording (replayed without parent)",
                                                        "CUPTI activity other than a kernel (not GPU truth)",
                                                        "a timestamp out of range (73 years or more from its clock's "
                                                        "zero)"};
  return reason >= 0 && reason < SIM_REPLAY_SKIP_NREASONS ? names[reason] : "?";
}

/* ---- threads and communicators ---- */

static int threadOf(simReplayLoader* L, int pid, int tid) {
  simReplayRecording* r = L->r;
  static int last = -1;
  if (last >= 0 && last < r->nthreads && r->threads[last].pid == pid && r->threads[last].tid == tid) return last;
  for (int i = 0; i < r->nthreads; i++)
    if (r->threads[i].pid == pid && r->threads[i].tid == tid) return last = i;
  r->threads = simReplayGrow(r->threads, &L->capThreads, r->nthreads + 1, sizeof *r->threads);
  simReplayThread* t = &r->threads[r->nthreads];
  t->pid = pid, t->tid = tid;
  return last = r->nthreads++;
}

static void addCall(simReplayLoader* L, int pid, int tid, int64_t ts, int kind, int index, int order) {
  int ti = threadOf(L, pid, tid); /* may move the array */
  simReplayThread* t = &L->r->threads[ti];
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 64;
    t->calls = realloc(t->calls, (size_t)t->cap * sizeof *t->calls);
    if (!t->calls) {
      SIM_ERR("replay: out of memory");
      exit(2);
    }
  }
  t->calls[t->n++] = (simReplayCall){ts, kind, index, order};
}

/* The communicator of an event. Recordings through ncclProfiler_v1..v3 know
 * no comm id or rank (NCCL passes none at init): several communicators of a
 * process then look alike, and the one initialised on the event's thread, else
 * the earliest one alive at the event's time, is taken. */
static int commOf(const simReplayRecording* r, uint64_t commId, int rank, int pid, int tid, int64_t ts) {
  int first = -1, alive = -1;
  for (int i = 0; i < r->ncomms; i++) {
    const simReplayComm* c = &r->comms[i];
    if (c->commId != commId || c->rank != rank || c->pid != pid) continue;
    if (c->initTid == tid && ts >= c->initTs && (c->finiTs < 0 || ts <= c->finiTs)) return i;
    if (first < 0) first = i;
    if (alive < 0 && ts >= c->initTs && (c->finiTs < 0 || ts <= c->finiTs)) alive = i;
  }
  return alive >= 0 ? alive : first;
}

/* The init record a finalize closes: same identity, not yet finalized, on the same thread if one is. */
static int openCommOf(const simReplayRecording* r, uint64_t commId, int rank, int pid, int tid) {
  int any = -1;
  for (int i = 0; i < r->ncomms; i++) {
    const simReplayComm* c = &r->comms[i];
    if (c->commId != commId || c->rank != rank || c->pid != pid || c->finiTs >= 0) continue;
    if (c->initTid == tid) return i;
    if (any < 0) any = i;
  }
  return any;
}

static int typeIndexOf(const char* name) {
  if (!name) return -1;
  if (!strncmp(name, "ncclProfile", 11)) name += 11;
  for (int i = 0; i < SIM_NTYPES; i++)
    if (!strcmp(name, simTypeName(i))) return i;
  return -1;
}

static void lifecycle(simReplayLoader* L, json_object* o) {
  simReplayRecording* r = L->r;
  const char* func = simReplayGetStr(L, o, "func");
  uint64_t commId = 0;
  int64_t ts;
  int pid, tid;
  if (!func || !simReplayGetU64(o, "commId", &commId) || !simReplayCallSite(L, o, "start", &ts, &pid, &tid)) {
    simReplaySkipMalformed(L);
    return;
  }
  int rank = simReplayGetInt(o, "rank", -1);
  json_object* det = simReplayGet(o, "details");
  if (!strcmp(func, "ProfilerInit")) {
    r->comms = simReplayGrow(r->comms, &L->capComms, r->ncomms + 1, sizeof *r->comms);
    simReplayComm* c = &r->comms[r->ncomms];
    c->commId = commId, c->rank = rank, c->pid = pid, c->initTs = ts, c->finiTs = -1, c->initTid = tid;
    c->nranks = simReplayGetInt(det, "nranks", -1);
    c->nNodes = simReplayGetInt(det, "nNodes", -1);
    const char* name = simReplayGetStr(L, det, "commName");
    c->name = (char*)name;
    addCall(L, pid, tid, ts, SIM_REPLAY_INIT, r->ncomms, L->fileOrder++);
    r->ncomms++;
  } else if (!strcmp(func, "ProfilerFinalize")) {
    int c = openCommOf(r, commId, rank, pid, tid);
    if (c < 0 || r->comms[c].finiTs >= 0) {
      r->skipped[SIM_REPLAY_SKIP_NO_COMM]++;
      return;
    }
    r->comms[c].finiTs = ts;
    addCall(L, pid, tid, ts, SIM_REPLAY_FINI, c, L->fileOrder++);
  } else {
    r->skipped[SIM_REPLAY_SKIP_UNKNOWN_RECORD]++;
  }
}

static void freeKey(struct lh_entry* e) { free(lh_entry_k(e)); }

static void event(simReplayLoader* L, json_object* o) {
  simReplayRecording* r = L->r;
  int type = typeIndexOf(json_object_get_string(simReplayGet(o, "type")));
  if (type < 0) {
    r->skipped[SIM_REPLAY_SKIP_UNKNOWN_TYPE]++;
    return;
  }
  const char* addr = json_object_get_string(simReplayGet(o, "eventAddr"));
  int64_t ts;
  int pid, tid;
  if (!addr || !simReplayCallSite(L, o, "start", &ts, &pid, &tid)) {
    simReplaySkipMalformed(L);
    return;
  }
  int64_t sts;
  int spid, stid;
  bool stopped =
      !simReplayGetBool(o, "incomplete") && simReplayCallSite(L, o, "stop", &sts, &spid, &stid) && spid == pid;
  if (L->badTime) { /* a stop out of range: the event is not replayed half */
    simReplaySkipMalformed(L);
    return;
  }
  if (lh_table_lookup_entry(L->addrs, addr)) {
    r->skipped[SIM_REPLAY_SKIP_DUP_ADDR]++;
    return;
  }
  bool pxn = simReplayGetBool(o, "isPxn");
  uint64_t commId = 0;
  simReplayGetU64(o, "commId", &commId);
  int rank = simReplayGetInt(o, "rank", -1);
  int comm = -1;
  if (!pxn) {
    comm = commOf(r, commId, rank, pid, tid, ts);
    if (comm < 0) {
      r->skipped[SIM_REPLAY_SKIP_NO_COMM]++;
      return;
    }
  }
  int i = r->nevents;
  r->events = simReplayGrow(r->events, &L->capEvents, i + 1, sizeof *r->events);
  L->refs = simReplayGrow(L->refs, &L->capRefs, i + 1, sizeof *L->refs);
  simReplayEvent* e = &r->events[i];
  e->type = type, e->comm = comm, e->pid = pid, e->startTid = tid, e->startTs = ts, e->stopTs = -1;
  e->pxn = pxn, e->rank = rank, e->parent = -1;
  e->originPid = simReplayGetInt(o, "originPid", pid);
  char* group = NULL;
  simReplayFillDescr(L, e, simReplayGet(o, "details"), &group);
  L->refs[i].group = simReplayNullPtr(group) ? NULL : strdup(group);
  const char* parent = json_object_get_string(simReplayGet(o, "parentObj"));
  L->refs[i].parent = simReplayNullPtr(parent) ? NULL : strdup(parent);
  if (type == 11) simReplayGetU64(o, "extCorrId", &e->extCorrId);
  lh_table_insert(L->addrs, strdup(addr), (void*)(intptr_t)(i + 1));
  r->nevents++;
  addCall(L, pid, tid, ts, SIM_REPLAY_START, i, L->fileOrder++);
  if (stopped) {
    e->stopTs = sts, e->stopTid = stid;
    addCall(L, spid, stid, sts, SIM_REPLAY_STOP, i, L->fileOrder++);
  }
}

static void state(simReplayLoader* L, json_object* o) {
  simReplayRecording* r = L->r;
  const char* addr = json_object_get_string(simReplayGet(o, "eventAddr"));
  int64_t ts;
  int id = simReplayGetInt(o, "id", -1);
  int pid = simReplayGetInt(o, "pid", -1), tid = simReplayGetInt(o, "tid", -1);
  if (!addr || id < 0 || pid < 0 || tid < 0 || !simReplayGetTsNs(L, o, "ts", NULL, &ts)) {
    simReplaySkipMalformed(L);
    return;
  }
  /* "repeats": n: the plugin folded n more identical reports of this state
   * into this line (they happened by ts); NCCL made each call: replay them. */
  uint64_t repeats = 0;
  if (!simReplayGetU64(o, "repeats", &repeats)) repeats = 1;
  if (repeats > 1000000) repeats = 1000000;
  for (uint64_t k = 0; k < repeats; k++) {
    int i = r->nstates;
    r->states = simReplayGrow(r->states, &L->capStates, i + 1, sizeof *r->states);
    L->stateAddr = simReplayGrow(L->stateAddr, &L->capStateAddr, i + 1, sizeof *L->stateAddr);
    simReplayState* s = &r->states[i];
    memset(s, 0, sizeof *s);
    s->event = -1, s->state = id, s->ts = ts, s->pid = pid, s->tid = tid;
    static const char* argKeys[] = {"transSize", "appendedProxyOps", "pTimer", "data"};
    for (size_t a = 0; a < sizeof argKeys / sizeof argKeys[0] && !s->hasArg; a++)
      s->hasArg = simReplayGetU64(o, argKeys[a], &s->arg);
    L->stateAddr[i] = strdup(addr);
    r->nstates++;
  }
}

/* A recordType not replayed, counted by name. */
static void unknownRecord(simReplayRecording* r, const char* rt) {
  r->skipped[SIM_REPLAY_SKIP_UNKNOWN_RECORD]++;
  char name[32];
  snprintf(name, sizeof name, "%s", rt ? rt : "(none)");
  for (char* q = name; *q; q++)
    if (*q == '"' || *q == '\\' || (unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e) *q = '_';
  for (int k = 0; k < SIM_REPLAY_MAX_UNKNOWN_NAMES; k++) {
    if (!r->unknownName[k][0]) snprintf(r->unknownName[k], sizeof r->unknownName[k], "%s", name);
    if (!strcmp(r->unknownName[k], name)) {
      r->unknownCount[k]++;
      return;
    }
  }
}

enum { RK_LIFECYCLE, RK_EVENT, RK_STATE, RK_CUPTI, RK_UNKNOWN };

/* What a line is. A lifecycle line is told by its type ("ProfilerLifecycle")
 * whatever its recordType says ("lifecycle", "event" or nothing). */
static int recordKind(json_object* o, const char** rt) {
  *rt = json_object_get_string(simReplayGet(o, "recordType"));
  const char* type = json_object_get_string(simReplayGet(o, "type"));
  if ((type && !strcmp(type, "ProfilerLifecycle")) || (*rt && !strcmp(*rt, "lifecycle"))) return RK_LIFECYCLE;
  if (!*rt) return RK_UNKNOWN;
  if (!strcmp(*rt, "event")) return RK_EVENT;
  if (!strcmp(*rt, "state")) return RK_STATE;
  if (!strcmp(*rt, "cuptiActivity")) return RK_CUPTI;
  return RK_UNKNOWN;
}

/* Pass 1 reads the lifecycle records (communicators), pass 2 the events,
 * states and CUPTI records, so a file's order does not matter: times decide. */
static void line(simReplayLoader* L, int pass, char* text, size_t len) {
  simReplayRecording* r = L->r;
  while (len && (text[len - 1] == '\n' || text[len - 1] == '\r')) text[--len] = 0;
  if (!len) return;
  /* cheap: only lines that may be lifecycle records are parsed in pass 1 */
  if (pass == 1 && !strstr(text, "ifecycle")) return;
  if (pass == 2) r->lines++;
  json_tokener* tok = json_tokener_new();
  json_object* o = json_tokener_parse_ex(tok, text, (int)len);
  bool complete = json_tokener_get_error(tok) == json_tokener_success;
  json_tokener_free(tok);
  if (!o || !complete || json_object_get_type(o) != json_type_object) {
    if (pass == 2) {
      r->skipped[SIM_REPLAY_SKIP_BAD_JSON]++, r->badLines++;
      if (!r->firstBad[0]) snprintf(r->firstBad, sizeof r->firstBad, "%s:%llu", L->path, (unsigned long long)L->lineNo);
    }
    if (o) json_object_put(o);
    return;
  }
  const char* rt;
  int kind = recordKind(o, &rt);
  L->badTime = false;
  if ((kind == RK_LIFECYCLE) != (pass == 1)) {
    json_object_put(o);
    return;
  }
  switch (kind) {
  case RK_LIFECYCLE: lifecycle(L, o); break;
  case RK_EVENT: event(L, o); break;
  case RK_STATE: state(L, o); break;
  case RK_CUPTI: simReplayCuptiRecord(L, o); break;
  default: unknownRecord(r, rt); break;
  }
  json_object_put(o);
}

static int loadFile(simReplayLoader* L, int pass, const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) {
    if (pass == 1) SIM_ERR("replay: cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  char* buf = NULL;
  size_t cap = 0;
  ssize_t n;
  L->path = path, L->lineNo = 0;
  while ((n = getline(&buf, &cap, f)) > 0) L->lineNo++, line(L, pass, buf, (size_t)n);
  free(buf);
  fclose(f);
  return 0;
}

static int byName(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int loadPath(simReplayLoader* L, const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    SIM_ERR("replay: %s: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) return loadFile(L, 1, path) || loadFile(L, 2, path) ? -1 : 0;
  DIR* d = opendir(path);
  if (!d) {
    SIM_ERR("replay: cannot read directory %s", path);
    return -1;
  }
  char** names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent* de; (de = readdir(d));) {
    size_t l = strlen(de->d_name);
    if (l > 5 && !strcmp(de->d_name + l - 5, ".json")) {
      char full[4096];
      snprintf(full, sizeof full, "%s/%s", path, de->d_name);
      simReplayChromeTraceFile(L->r, full);
      continue;
    }
    if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl")) continue;
    if (n == cap) names = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *names);
    names[n++] = strdup(de->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, byName);
  int ok = n ? 0 : -1;
  if (!n) SIM_ERR("replay: no *.jsonl file in %s", path);
  for (int pass = 1; pass <= 2; pass++)
    for (size_t i = 0; i < n; i++) {
      char full[4096];
      snprintf(full, sizeof full, "%s/%s", path, names[i]);
      if (loadFile(L, pass, full)) ok = -1;
    }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return ok;
}

static int lookupAddr(simReplayLoader* L, const char* addr) {
  if (!addr) return -1;
  struct lh_entry* e = lh_table_lookup_entry(L->addrs, addr);
  return e ? (int)(intptr_t)lh_entry_v(e) - 1 : -1;
}

/* Depth in the hierarchy: a start at the same time as its parent's goes after it. */
static int depthOf(const simReplayRecording* r, int i) {
  int d = 0;
  for (int p = r->events[i].parent; p >= 0 && d < 16; p = r->events[p].parent) d++;
  return d;
}

static void resolve(simReplayLoader* L) {
  simReplayRecording* r = L->r;
  for (int i = 0; i < r->nevents; i++) {
    simReplayEvent* e = &r->events[i];
    if (L->refs[i].parent) {
      int p = lookupAddr(L, L->refs[i].parent);
      if (p >= 0 && p != i) {
        e->parent = p;
      } else if (e->pxn) {
        e->parent = -2; /* the originating process's pointer, as NCCL passed it */
        e->rawParent = strtoull(L->refs[i].parent, NULL, 16);
      } else {
        r->skipped[SIM_REPLAY_PARENT_MISSING]++;
      }
    }
    /* a Coll/P2p's parentGroup travels in the descriptor as event index + 1
     * (0: none) until run time maps it to the plugin's Group handle; a
     * recording through v1..v4 has the Group as the parent itself */
    int g = lookupAddr(L, L->refs[i].group);
    if (g < 0 && e->parent >= 0 && r->events[e->parent].type == 0) g = e->parent;
    intptr_t group = g + 1;
    if (e->type == 1) e->d.coll.parentGroup = (void*)group;
    if (e->type == 2) e->d.p2p.parentGroup = (void*)group;
    free(L->refs[i].parent);
    free(L->refs[i].group);
  }
  for (int i = 0; i < r->nstates; i++) {
    int ev = lookupAddr(L, L->stateAddr[i]);
    free(L->stateAddr[i]);
    simReplayState* s = &r->states[i];
    if (ev < 0) {
      r->skipped[SIM_REPLAY_SKIP_ORPHAN_STATE]++;
      continue;
    }
    s->event = ev;
    addCall(L, s->pid, s->tid, s->ts, SIM_REPLAY_STATE, i, 0);
  }
  /* Order within a thread: time; at equal times start (parents first), then
   * states, then stop; then file order. */
  for (int t = 0; t < r->nthreads; t++) {
    simReplayThread* th = &r->threads[t];
    for (int k = 0; k < th->n; k++) {
      simReplayCall* c = &th->calls[k];
      int rank = c->kind == SIM_REPLAY_INIT    ? 0
                 : c->kind == SIM_REPLAY_START ? 1 + depthOf(r, c->index)
                 : c->kind == SIM_REPLAY_STATE ? 40
                 : c->kind == SIM_REPLAY_STOP  ? 41
                                               : 42;
      c->order = rank;
    }
  }
}

static int byTime(const void* a, const void* b) {
  const simReplayCall *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->order != y->order) return x->order < y->order ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

int simReplayLoad(const char* path, simReplayRecording* r) {
  memset(r, 0, sizeof *r);
  simReplayLoader L = {.r = r};
  L.addrs = lh_kchar_table_new(1 << 16, freeKey);
  L.strings = lh_kchar_table_new(256, freeKey);
  int rc = loadPath(&L, path);
  resolve(&L);
  simReplayFitGpuClock(r);
  r->t0 = INT64_MAX;
  for (int t = 0; t < r->nthreads; t++) {
    simReplayThread* th = &r->threads[t];
    if (th->n) qsort(th->calls, (size_t)th->n, sizeof *th->calls, byTime);
    if (th->n && th->calls[0].ts < r->t0) r->t0 = th->calls[0].ts;
  }
  free(L.refs);
  free(L.stateAddr);
  lh_table_free(L.addrs);
  r->strings = L.strings; /* descriptors point into the interned strings */
  if (rc != 0 && r->nevents == 0 && r->ncomms == 0) return -1;
  return r->ncomms ? 0 : -1;
}

void simReplayFree(simReplayRecording* r) {
  for (int t = 0; t < r->nthreads; t++) free(r->threads[t].calls);
  for (int i = 0; i < r->nevents; i++) free(r->events[i].net);
  free(r->threads);
  free(r->events);
  free(r->states);
  free(r->comms);
  free(r->gpuTruth);
  free(r->kernels);
  free(r->gpuFits);
  if (r->strings) lh_table_free(r->strings);
  memset(r, 0, sizeof *r);
}
