/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope-sim --replay: reading a recording into per-thread call lists.
 *
 * Runs on the main thread before any replay process is forked. Input: one
 * JSON Lines file in the export contract, or a directory whose *.jsonl files
 * are read in name order. What is valid is kept; every line or reference
 * that cannot be replayed is counted under a reason (rpSkipName) and the
 * rest goes on. JSON is parsed with json-c: it keeps 64-bit ids exact and
 * the original text of numbers, so microsecond timestamps with three
 * decimals become exact nanoseconds.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <json-c/linkhash.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay.h"

const char* rpSkipName(int reason) {
  static const char* names[RP_SKIP_NREASONS] = {
      "not JSON (torn or damaged line)", "unknown recordType", "unknown event type",
      "missing or malformed fields",     "no init record for its communicator", "duplicate eventAddr",
      "state of an event not in the recording", "parent not in the recording (replayed without parent)"};
  return reason >= 0 && reason < RP_SKIP_NREASONS ? names[reason] : "?";
}

typedef struct {
  rpRecording* r;
  lh_table* addrs;   /* eventAddr string -> event index + 1 */
  lh_table* strings; /* interned descriptor strings */
  /* per event until references are resolved: the parent's and the
   * parentGroup's addresses as recorded */
  struct eventRefs {
    char* parent;
    char* group;
  } * refs;
  char** stateAddr; /* per state: its event's address */
  int capEvents, capRefs, capStates, capStateAddr, capComms, capThreads;
  int fileOrder;
} loader;

static void freeKey(struct lh_entry* e) { free(lh_entry_k(e)); }

static const char* intern(loader* L, const char* s) {
  if (!s) return NULL;
  struct lh_entry* e = lh_table_lookup_entry(L->strings, s);
  if (e) return lh_entry_k(e);
  char* k = strdup(s);
  lh_table_insert(L->strings, k, NULL);
  return k;
}

static void* grow(void* p, int* cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int nc = *cap ? *cap * 2 : 256;
  while (nc < need) nc *= 2;
  void* q = realloc(p, (size_t)nc * elem);
  if (!q) {
    SIM_ERR("replay: out of memory");
    exit(2);
  }
  memset((char*)q + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
  *cap = nc;
  return q;
}

/* ---- field access: every accessor accepts what a reasonable writer may have used ---- */

static json_object* get(json_object* o, const char* k) {
  json_object* v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static bool getU64(json_object* o, const char* k, uint64_t* out) {
  json_object* v = get(o, k);
  if (!v) return false;
  switch (json_object_get_type(v)) {
  case json_type_int:
    /* json-c keeps integers above INT64_MAX as unsigned */
    *out = json_object_get_uint64(v);
    return true;
  case json_type_double:
    *out = (uint64_t)json_object_get_double(v);
    return true;
  case json_type_boolean:
    *out = json_object_get_boolean(v) ? 1 : 0;
    return true;
  case json_type_string: {
    const char* s = json_object_get_string(v);
    char* end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s) return false;
    *out = x;
    return true;
  }
  default:
    return false;
  }
}

static bool getI64(json_object* o, const char* k, int64_t* out) {
  json_object* v = get(o, k);
  if (!v) return false;
  if (json_object_get_type(v) == json_type_int) {
    *out = json_object_get_int64(v);
    return true;
  }
  uint64_t u;
  if (!getU64(o, k, &u)) return false;
  *out = (int64_t)u;
  return true;
}

static int getInt(json_object* o, const char* k, int dflt) {
  int64_t x;
  return getI64(o, k, &x) ? (int)x : dflt;
}

static const char* getStr(loader* L, json_object* o, const char* k) {
  json_object* v = get(o, k);
  return v && json_object_get_type(v) == json_type_string ? intern(L, json_object_get_string(v)) : NULL;
}

/* Microseconds as written (a JSON number with decimals) -> exact ns, from the number's own text. */
static bool getTsNs(json_object* o, const char* k, int64_t* out) {
  json_object* v = get(o, k);
  if (!v) return false;
  enum json_type t = json_object_get_type(v);
  if (t == json_type_int) {
    *out = json_object_get_int64(v) * 1000;
    return true;
  }
  if (t != json_type_double) return false;
  const char* s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
  bool neg = *s == '-';
  if (neg) s++;
  int64_t whole = 0, frac = 0;
  int digits = 0;
  for (; *s >= '0' && *s <= '9'; s++) whole = whole * 10 + (*s - '0');
  if (*s == '.') {
    for (s++; *s >= '0' && *s <= '9'; s++) {
      if (digits < 3) frac = frac * 10 + (*s - '0'), digits++;
      else if (digits == 3) {
        if (*s >= '5') frac++; /* round at the 4th decimal */
        digits++;
      }
    }
  }
  if (*s == 'e' || *s == 'E') { /* exponent form: fall back to the double */
    double d = json_object_get_double(v);
    *out = (int64_t)(d * 1000.0 + (d >= 0 ? 0.5 : -0.5));
    return true;
  }
  while (digits < 3 && digits >= 0) frac *= 10, digits++;
  int64_t ns = whole * 1000 + frac;
  *out = neg ? -ns : ns;
  return true;
}

static bool getBool(json_object* o, const char* k) {
  uint64_t x;
  return getU64(o, k, &x) && x != 0;
}

static void* getPtr(json_object* o, const char* k) {
  uint64_t x = 0;
  getU64(o, k, &x);
  return (void*)(uintptr_t)x;
}

/* ---- threads and communicators ---- */

static int threadOf(loader* L, int pid, int tid) {
  rpRecording* r = L->r;
  static int last = -1;
  if (last >= 0 && last < r->nthreads && r->threads[last].pid == pid && r->threads[last].tid == tid) return last;
  for (int i = 0; i < r->nthreads; i++)
    if (r->threads[i].pid == pid && r->threads[i].tid == tid) return last = i;
  r->threads = grow(r->threads, &L->capThreads, r->nthreads + 1, sizeof *r->threads);
  rpThread* t = &r->threads[r->nthreads];
  t->pid = pid, t->tid = tid;
  return last = r->nthreads++;
}

static void addCall(loader* L, int pid, int tid, int64_t ts, int kind, int index, int order) {
  int ti = threadOf(L, pid, tid); /* may move the array */
  rpThread* t = &L->r->threads[ti];
  if (t->n == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 64;
    t->calls = realloc(t->calls, (size_t)t->cap * sizeof *t->calls);
    if (!t->calls) {
      SIM_ERR("replay: out of memory");
      exit(2);
    }
  }
  t->calls[t->n++] = (rpCall){ts, kind, index, order};
}

/* The communicator of an event. Recordings through ncclProfiler_v1..v3 know
 * no comm id or rank (NCCL passes none at init): several communicators of a
 * process then look alike, and the one initialised on the event's thread, else
 * the earliest one alive at the event's time, is taken. */
static int commOf(const rpRecording* r, uint64_t commId, int rank, int pid, int tid, int64_t ts) {
  int first = -1, alive = -1;
  for (int i = 0; i < r->ncomms; i++) {
    const rpComm* c = &r->comms[i];
    if (c->commId != commId || c->rank != rank || c->pid != pid) continue;
    if (c->initTid == tid && ts >= c->initTs && (c->finiTs < 0 || ts <= c->finiTs)) return i;
    if (first < 0) first = i;
    if (alive < 0 && ts >= c->initTs && (c->finiTs < 0 || ts <= c->finiTs)) alive = i;
  }
  return alive >= 0 ? alive : first;
}

/* The init record a finalize closes: same identity, not yet finalized, on the same thread if one is. */
static int openCommOf(const rpRecording* r, uint64_t commId, int rank, int pid, int tid) {
  int any = -1;
  for (int i = 0; i < r->ncomms; i++) {
    const rpComm* c = &r->comms[i];
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

static bool callSite(json_object* o, const char* k, int64_t* ts, int* pid, int* tid) {
  json_object* s = get(o, k);
  if (!s || json_object_get_type(s) != json_type_object) return false;
  if (!getTsNs(s, "ts", ts)) return false;
  *pid = getInt(s, "pid", -1);
  *tid = getInt(s, "tid", -1);
  return *pid >= 0 && *tid >= 0;
}

static void lifecycle(loader* L, json_object* o) {
  rpRecording* r = L->r;
  const char* func = getStr(L, o, "func");
  uint64_t commId = 0;
  int64_t ts;
  int pid, tid;
  if (!func || !getU64(o, "commId", &commId) || !callSite(o, "start", &ts, &pid, &tid)) {
    r->skipped[RP_SKIP_BAD_FIELDS]++;
    return;
  }
  int rank = getInt(o, "rank", -1);
  json_object* det = get(o, "details");
  if (!strcmp(func, "ProfilerInit")) {
    r->comms = grow(r->comms, &L->capComms, r->ncomms + 1, sizeof *r->comms);
    rpComm* c = &r->comms[r->ncomms];
    c->commId = commId, c->rank = rank, c->pid = pid, c->initTs = ts, c->finiTs = -1, c->initTid = tid;
    c->nranks = getInt(det, "nranks", -1);
    c->nNodes = getInt(det, "nNodes", -1);
    const char* name = getStr(L, det, "commName");
    c->name = (char*)name;
    addCall(L, pid, tid, ts, RP_INIT, r->ncomms, L->fileOrder++);
    r->ncomms++;
  } else if (!strcmp(func, "ProfilerFinalize")) {
    int c = openCommOf(r, commId, rank, pid, tid);
    if (c < 0 || r->comms[c].finiTs >= 0) {
      r->skipped[RP_SKIP_NO_COMM]++;
      return;
    }
    r->comms[c].finiTs = ts;
    addCall(L, pid, tid, ts, RP_FINI, c, L->fileOrder++);
  } else {
    r->skipped[RP_SKIP_UNKNOWN_RECORD]++;
  }
}

/* The NetPlugin descriptor from its decoded fields (the contract exports them, not the bytes). */
static rpNetData* netData(json_object* det) {
  const char* t = json_object_get_string(get(det, "netType"));
  if (!t) return NULL;
  rpNetData* n = calloc(1, sizeof *n);
  if (!strcmp(t, "ib")) {
    n->ib.type = ncclProfileQp;
    n->ib.qp.device = getInt(det, "device", 0);
    uint64_t x = 0;
    getU64(det, "wr_id", &x), n->ib.qp.wr_id = x;
    n->ib.qp.opcode = getInt(det, "opcode", 0);
    n->ib.qp.qpNum = getInt(det, "qpNum", 0);
    x = 0, getU64(det, "length", &x), n->ib.qp.length = (size_t)x;
  } else if (!strcmp(t, "socket")) {
    n->sock.type = ncclProfileSocket;
    n->sock.sock.fd = getInt(det, "fd", 0);
    n->sock.sock.op = getInt(det, "op", 0);
    uint64_t x = 0;
    getU64(det, "length", &x), n->sock.sock.length = (size_t)x;
  } else {
    free(n);
    return NULL;
  }
  return n;
}

/* The descriptor fields of one event from its `details` (inverse of the exporter's details). */
static void fillDescr(loader* L, rpEvent* e, json_object* det, char** group) {
  ncclProfilerEventDescr_v6_t* d = &e->d;
  d->type = 1ull << e->type;
  d->rank = e->rank;
  uint64_t u = 0;
  switch (e->type) {
  case 8: /* GroupApi */
    d->groupApi.groupDepth = getInt(det, "depth", 0);
    d->groupApi.graphCaptured = getBool(det, "graphCaptured");
    break;
  case 9: /* CollApi */
    d->collApi.func = getStr(L, det, "func");
    getU64(det, "count", &u), d->collApi.count = (size_t)u;
    d->collApi.datatype = getStr(L, det, "dtype");
    d->collApi.root = getInt(det, "root", 0);
    d->collApi.stream = getPtr(det, "stream");
    d->collApi.graphCaptured = getBool(det, "graphCaptured");
    break;
  case 10: /* P2pApi */
    d->p2pApi.func = getStr(L, det, "func");
    getU64(det, "count", &u), d->p2pApi.count = (size_t)u;
    d->p2pApi.datatype = getStr(L, det, "dtype");
    d->p2pApi.stream = getPtr(det, "stream");
    d->p2pApi.graphCaptured = getBool(det, "graphCaptured");
    break;
  case 11: /* KernelLaunch */
    d->kernelLaunch.stream = getPtr(det, "stream");
    break;
  case 1: /* Coll */
    getU64(det, "seq", &d->coll.seqNumber);
    d->coll.func = getStr(L, det, "func");
    d->coll.sendBuff = getPtr(det, "sendBuff");
    d->coll.recvBuff = getPtr(det, "recvBuff");
    u = 0, getU64(det, "count", &u), d->coll.count = (size_t)u;
    d->coll.root = getInt(det, "root", 0);
    d->coll.datatype = getStr(L, det, "dtype");
    d->coll.nChannels = (uint8_t)getInt(det, "channels", 0);
    d->coll.nWarps = (uint8_t)getInt(det, "warps", 0);
    d->coll.algo = getStr(L, det, "algo");
    d->coll.proto = getStr(L, det, "proto");
    *group = (char*)json_object_get_string(get(det, "parentGroup"));
    break;
  case 2: /* P2p */
    d->p2p.func = getStr(L, det, "func");
    d->p2p.buff = getPtr(det, "buff");
    d->p2p.datatype = getStr(L, det, "dtype");
    u = 0, getU64(det, "count", &u), d->p2p.count = (size_t)u;
    d->p2p.peer = getInt(det, "peer", 0);
    d->p2p.nChannels = (uint8_t)getInt(det, "channels", 0);
    *group = (char*)json_object_get_string(get(det, "parentGroup"));
    break;
  case 3: /* ProxyOp */
    d->proxyOp.channelId = (uint8_t)getInt(det, "channel", 0);
    d->proxyOp.peer = getInt(det, "peer", 0);
    d->proxyOp.nSteps = getInt(det, "steps", 0);
    d->proxyOp.chunkSize = getInt(det, "chunkSize", 0);
    d->proxyOp.isSend = getInt(det, "isSend", 0);
    d->proxyOp.pid = getInt(det, "eventPid", e->pid);
    break;
  case 4: /* ProxyStep */
    d->proxyStep.step = getInt(det, "step", 0);
    break;
  case 6: /* KernelCh */
    d->kernelCh.channelId = (uint8_t)getInt(det, "channel", 0);
    getU64(det, "pTimer", &d->kernelCh.pTimer);
    break;
  case 7: /* NetPlugin */
    getI64(det, "id", &d->netPlugin.id);
    e->net = netData(det);
    break;
  case 12: /* CeColl */
    getU64(det, "seq", &d->ceColl.seqNumber);
    d->ceColl.func = getStr(L, det, "func");
    u = 0, getU64(det, "count", &u), d->ceColl.count = (size_t)u;
    d->ceColl.datatype = getStr(L, det, "dtype");
    d->ceColl.root = getInt(det, "root", 0);
    d->ceColl.syncStrategy = getStr(L, det, "syncStrategy");
    d->ceColl.stream = getPtr(det, "stream");
    d->ceColl.sendBuff = getPtr(det, "sendBuff");
    d->ceColl.recvBuff = getPtr(det, "recvBuff");
    d->ceColl.intraBatchSync = getBool(det, "intraBatchSync");
    d->ceColl.batchSize = (uint32_t)getInt(det, "batchSize", 0);
    d->ceColl.numBatches = (uint32_t)getInt(det, "numBatches", 0);
    d->ceColl.ceSeqNum = (uint32_t)getInt(det, "ceSeqNum", 0);
    break;
  case 13: /* CeSync */
    d->ceCollSync.isComplete = getBool(det, "isComplete");
    d->ceCollSync.nRanks = getInt(det, "nRanks", 0);
    break;
  case 14: /* CeBatch */
    d->ceCollBatch.numOps = getInt(det, "numOps", 0);
    u = 0, getU64(det, "totalBytes", &u), d->ceCollBatch.totalBytes = (size_t)u;
    d->ceCollBatch.useIntraSync = getBool(det, "useIntraSync");
    break;
  default: /* Group, ProxyCtrl */
    break;
  }
}

static char* dupOrNull(const char* s) { return s ? strdup(s) : NULL; }

static void event(loader* L, json_object* o) {
  rpRecording* r = L->r;
  int type = typeIndexOf(json_object_get_string(get(o, "type")));
  if (type < 0) {
    r->skipped[RP_SKIP_UNKNOWN_TYPE]++;
    return;
  }
  const char* addr = json_object_get_string(get(o, "eventAddr"));
  int64_t ts;
  int pid, tid;
  if (!addr || !callSite(o, "start", &ts, &pid, &tid)) {
    r->skipped[RP_SKIP_BAD_FIELDS]++;
    return;
  }
  if (lh_table_lookup_entry(L->addrs, addr)) {
    r->skipped[RP_SKIP_DUP_ADDR]++;
    return;
  }
  bool pxn = getBool(o, "isPxn");
  uint64_t commId = 0;
  getU64(o, "commId", &commId);
  int rank = getInt(o, "rank", -1);
  int comm = -1;
  if (!pxn) {
    comm = commOf(r, commId, rank, pid, tid, ts);
    if (comm < 0) {
      r->skipped[RP_SKIP_NO_COMM]++;
      return;
    }
  }
  int i = r->nevents;
  r->events = grow(r->events, &L->capEvents, i + 1, sizeof *r->events);
  L->refs = grow(L->refs, &L->capRefs, i + 1, sizeof *L->refs);
  rpEvent* e = &r->events[i];
  e->type = type, e->comm = comm, e->pid = pid, e->startTid = tid, e->startTs = ts, e->stopTs = -1;
  e->pxn = pxn, e->rank = rank, e->parent = -1;
  e->originPid = getInt(o, "originPid", pid);
  char* group = NULL;
  fillDescr(L, e, get(o, "details"), &group);
  L->refs[i].group = dupOrNull(group);
  L->refs[i].parent = dupOrNull(json_object_get_string(get(o, "parentObj")));
  lh_table_insert(L->addrs, strdup(addr), (void*)(intptr_t)(i + 1));
  r->nevents++;
  addCall(L, pid, tid, ts, RP_START, i, L->fileOrder++);
  int64_t sts;
  int spid, stid;
  if (!getBool(o, "incomplete") && callSite(o, "stop", &sts, &spid, &stid) && spid == pid) {
    e->stopTs = sts, e->stopTid = stid;
    addCall(L, spid, stid, sts, RP_STOP, i, L->fileOrder++);
  }
}

static void state(loader* L, json_object* o) {
  rpRecording* r = L->r;
  const char* addr = json_object_get_string(get(o, "eventAddr"));
  int64_t ts;
  int id = getInt(o, "id", -1);
  int pid = getInt(o, "pid", -1), tid = getInt(o, "tid", -1);
  if (!addr || id < 0 || pid < 0 || tid < 0 || !getTsNs(o, "ts", &ts)) {
    r->skipped[RP_SKIP_BAD_FIELDS]++;
    return;
  }
  /* "repeats": n: the plugin folded n more identical reports of this state
   * into this line (they happened by ts); NCCL made each call: replay them. */
  uint64_t repeats = 0;
  if (!getU64(o, "repeats", &repeats)) repeats = 1;
  if (repeats > 1000000) repeats = 1000000;
  for (uint64_t k = 0; k < repeats; k++) {
    int i = r->nstates;
    r->states = grow(r->states, &L->capStates, i + 1, sizeof *r->states);
    L->stateAddr = grow(L->stateAddr, &L->capStateAddr, i + 1, sizeof *L->stateAddr);
    rpState* s = &r->states[i];
    memset(s, 0, sizeof *s);
    s->event = -1, s->state = id, s->ts = ts, s->pid = pid, s->tid = tid;
    static const char* argKeys[] = {"transSize", "appendedProxyOps", "pTimer", "data"};
    for (size_t a = 0; a < sizeof argKeys / sizeof argKeys[0] && !s->hasArg; a++)
      s->hasArg = getU64(o, argKeys[a], &s->arg);
    L->stateAddr[i] = strdup(addr);
    r->nstates++;
  }
}

/* Pass 1 reads the lifecycle records (communicators), pass 2 the events and
 * states, so a file's order does not matter: times decide. */
static void line(loader* L, int pass, char* text, size_t len) {
  rpRecording* r = L->r;
  while (len && (text[len - 1] == '\n' || text[len - 1] == '\r')) text[--len] = 0;
  if (!len) return;
  bool lifecycleLine = strstr(text, "lifecycle") != NULL;
  if (pass == 1 && !lifecycleLine) return; /* cheap: only lines that may be lifecycle records are parsed */
  if (pass == 2) r->lines++;
  json_tokener* tok = json_tokener_new();
  json_object* o = json_tokener_parse_ex(tok, text, (int)len);
  bool complete = json_tokener_get_error(tok) == json_tokener_success;
  json_tokener_free(tok);
  if (!o || !complete || json_object_get_type(o) != json_type_object) {
    if (pass == 2) r->skipped[RP_SKIP_BAD_JSON]++, r->badLines++;
    if (o) json_object_put(o);
    return;
  }
  const char* rt = json_object_get_string(get(o, "recordType"));
  bool isLifecycle = rt && !strcmp(rt, "lifecycle");
  if (isLifecycle != (pass == 1)) {
    json_object_put(o);
    return;
  }
  if (rt && !strcmp(rt, "event"))
    event(L, o);
  else if (rt && !strcmp(rt, "state"))
    state(L, o);
  else if (rt && !strcmp(rt, "lifecycle"))
    lifecycle(L, o);
  else
    r->skipped[RP_SKIP_UNKNOWN_RECORD]++;
  json_object_put(o);
}

static int loadFile(loader* L, int pass, const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) {
    if (pass == 1) SIM_ERR("replay: cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  char* buf = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&buf, &cap, f)) > 0) line(L, pass, buf, (size_t)n);
  free(buf);
  fclose(f);
  return 0;
}

static int byName(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* GPU ground truth next to a recording: a Chrome trace (the PyTorch
 * profiler's, from CUPTI) whose kernel events of NCCL kernels become truth
 * `gpu_kernel` lines, times as the trace has them. */
static void gpuTruthFile(rpRecording* r, const char* path) {
  json_object* o = json_object_from_file(path);
  json_object* evs = o ? get(o, "traceEvents") : NULL;
  if (!evs || json_object_get_type(evs) != json_type_array) {
    if (o) json_object_put(o);
    return;
  }
  size_t n = json_object_array_length(evs);
  for (size_t i = 0; i < n; i++) {
    json_object* e = json_object_array_get_idx(evs, i);
    const char* cat = json_object_get_string(get(e, "cat"));
    const char* name = json_object_get_string(get(e, "name"));
    if (!cat || !name || strcmp(cat, "kernel") || !strcasestr(name, "nccl")) continue;
    int64_t ts, dur;
    if (!getTsNs(e, "ts", &ts) || !getTsNs(e, "dur", &dur)) continue;
    json_object* args = get(e, "args");
    r->gpuTruth = realloc(r->gpuTruth, (r->ngpuTruth + 1) * sizeof *r->gpuTruth);
    rpGpuKernel* k = &r->gpuTruth[r->ngpuTruth++];
    snprintf(k->name, sizeof k->name, "%s", name);
    k->tsNs = ts, k->durNs = dur;
    k->device = getInt(args, "device", -1);
    k->stream = getInt(args, "stream", -1);
  }
  json_object_put(o);
}

static int loadPath(loader* L, const char* path) {
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
      gpuTruthFile(L->r, full);
      continue;
    }
    if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl")) continue;
    if (n == cap) names = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *names);
    names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, byName);
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

static int lookupAddr(loader* L, const char* addr) {
  if (!addr) return -1;
  struct lh_entry* e = lh_table_lookup_entry(L->addrs, addr);
  return e ? (int)(intptr_t)lh_entry_v(e) - 1 : -1;
}

/* Depth in the hierarchy: a start at the same time as its parent's goes after it. */
static int depthOf(const rpRecording* r, int i) {
  int d = 0;
  for (int p = r->events[i].parent; p >= 0 && d < 16; p = r->events[p].parent) d++;
  return d;
}

static void resolve(loader* L) {
  rpRecording* r = L->r;
  for (int i = 0; i < r->nevents; i++) {
    rpEvent* e = &r->events[i];
    if (L->refs[i].parent) {
      int p = lookupAddr(L, L->refs[i].parent);
      if (p >= 0 && p != i) {
        e->parent = p;
      } else if (e->pxn) {
        e->parent = -2; /* the originating process's pointer, as NCCL passed it */
        e->rawParent = strtoull(L->refs[i].parent, NULL, 16);
      } else {
        r->skipped[RP_PARENT_MISSING]++;
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
    rpState* s = &r->states[i];
    if (ev < 0) {
      r->skipped[RP_SKIP_ORPHAN_STATE]++;
      continue;
    }
    s->event = ev;
    addCall(L, s->pid, s->tid, s->ts, RP_STATE, i, 0);
  }
  /* Order within a thread: time; at equal times start (parents first), then
   * states, then stop; then file order. */
  for (int t = 0; t < r->nthreads; t++) {
    rpThread* th = &r->threads[t];
    for (int k = 0; k < th->n; k++) {
      rpCall* c = &th->calls[k];
      int rank = c->kind == RP_INIT ? 0 : c->kind == RP_START ? 1 + depthOf(r, c->index) : c->kind == RP_STATE ? 40
                 : c->kind == RP_STOP ? 41 : 42;
      c->order = rank;
    }
  }
}

static int byTime(const void* a, const void* b) {
  const rpCall *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->order != y->order) return x->order < y->order ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

int rpLoad(const char* path, rpRecording* r) {
  memset(r, 0, sizeof *r);
  loader L = {.r = r};
  L.addrs = lh_kchar_table_new(1 << 16, freeKey);
  L.strings = lh_kchar_table_new(256, freeKey);
  int rc = loadPath(&L, path);
  resolve(&L);
  r->t0 = INT64_MAX;
  for (int t = 0; t < r->nthreads; t++) {
    rpThread* th = &r->threads[t];
    qsort(th->calls, (size_t)th->n, sizeof *th->calls, byTime);
    if (th->n && th->calls[0].ts < r->t0) r->t0 = th->calls[0].ts;
  }
  free(L.refs);
  free(L.stateAddr);
  lh_table_free(L.addrs);
  r->strings = L.strings; /* descriptors point into the interned strings */
  if (rc != 0 && r->nevents == 0 && r->ncomms == 0) return -1;
  return r->ncomms ? 0 : -1;
}

void rpFree(rpRecording* r) {
  for (int t = 0; t < r->nthreads; t++) free(r->threads[t].calls);
  for (int i = 0; i < r->nevents; i++) free(r->events[i].net);
  free(r->threads);
  free(r->events);
  free(r->states);
  free(r->comms);
  free(r->gpuTruth);
  if (r->strings) lh_table_free(r->strings);
  memset(r, 0, sizeof *r);
}
