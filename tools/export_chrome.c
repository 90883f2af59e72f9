/* ncclscope CLI: Trace Event Format exporter (Perfetto UI, chrome://tracing).
 *
 * Layout (docs/cli.md): one process track per (trace file, communicator),
 * named "rank R (host:pid) comm NAME"; events of a process without a
 * communicator (PXN proxy work for other processes) go to one extra track
 * per file. On a rank track, API/Group/Coll/P2p/KernelLaunch/CE/ProxyCtrl
 * events are complete ("X") slices on the thread that started them, so the
 * hierarchy nests; ProxyOp, ProxyStep, KernelCh and NetPlugin events go to
 * synthetic per-channel tracks ("ch 5 ProxyStep"), split into lanes so that
 * slices on one track never overlap (a lane is taken at START and freed at
 * STOP; the events of one lane group all come from one thread, hence in time
 * order). A flow arrow ("s" at the parent's start, "f" bound to the child)
 * joins every event to its parent across threads and tracks. States are
 * sub-slices of lane events and instant events ("i") elsewhere.
 *
 * Streaming: each event is written when the walker finishes it. Memory: the
 * lane groups and named-thread set (bounded by the number of tracks) and a
 * fixed cache of recently finished events used to draw arrows from parents
 * that are already written (a child whose parent fell out of it gets no
 * arrow). Single-threaded. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "event_details.h"
#include "export.h"

#define LANES 32
#define RECENT_SLOTS (1u << 16)
#define SYNTH_TID_BASE 1000000000u

/* Lane kinds: per-channel tracks, and the Coll/P2p/CeColl track of a launching
 * thread (NCCL starts all Coll/P2p of a group, then stops them all: they
 * overlap without nesting, so they cannot share their thread's track). */
enum { LANE_PROXY_OP, LANE_PROXY_STEP, LANE_KERNEL_CH, LANE_NET, LANE_LAUNCH, LANE_KINDS };
static const char* const lane_kind_names[LANE_KINDS] = {"ProxyOp", "ProxyStep", "KernelCh", "NetPlugin", "Coll/P2p"};

typedef struct {
  uint64_t key;
  uint32_t pid;
  int kind, channel;
  char label[96];     /* track name of lane 0 */
  int64_t sort_base;  /* thread_sort_index of lane 0 */
  uint8_t busy[LANES];
  uint32_t tid[LANES]; /* 0 until the lane is first used */
} lane_group;

/* Recently written events: direct-mapped by (file, id). */
typedef struct {
  uint64_t id;
  int file;
  uint32_t pid, tid;
  int32_t channel;
  uint64_t start_ts;
} recent_slot;

/* Open-addressing set/map of u64 keys (0 is never a key). */
typedef struct {
  uint64_t* keys;
  size_t* vals;
  size_t cap, len;
} u64_map;

typedef struct {
  ns_walk* walk; /* first member: set by the caller (export.h) */
  ns_json j;
  uint32_t next_pid;
  uint32_t next_tid;
  uint64_t next_flow;
  uint32_t nocomm_pid; /* this file's track for events without a communicator */
  uint64_t file_max_ts;
  u64_map named_threads; /* pid << 32 | tid */
  u64_map group_index;   /* lane key -> index in groups */
  lane_group* groups;
  size_t ngroups;
  recent_slot* recent;
} chrome_state;

/* ---- small map ---- */

static size_t mix(uint64_t k) {
  k ^= k >> 31;
  k *= 0x9e3779b97f4a7c15ull;
  return (size_t)(k ^ (k >> 29));
}

static int map_grow(u64_map* m) {
  size_t cap = m->cap ? m->cap * 2 : 256;
  uint64_t* keys = calloc(cap, sizeof *keys);
  size_t* vals = calloc(cap, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t h = mix(m->keys[i]) & (cap - 1);
    while (keys[h]) h = (h + 1) & (cap - 1);
    keys[h] = m->keys[i];
    vals[h] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 0;
}

/* Slot of key; inserts it (value 0) when absent. NULL when out of memory. */
static size_t* map_slot(u64_map* m, uint64_t key, int* inserted) {
  *inserted = 0;
  if ((m->len + 1) * 2 > m->cap && map_grow(m)) return NULL;
  size_t h = mix(key) & (m->cap - 1);
  while (m->keys[h] && m->keys[h] != key) h = (h + 1) & (m->cap - 1);
  if (!m->keys[h]) {
    m->keys[h] = key;
    m->vals[h] = 0;
    m->len++;
    *inserted = 1;
  }
  return &m->vals[h];
}

static void map_free(u64_map* m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- metadata ---- */

static void meta(chrome_state* s, const char* what, uint32_t pid, uint32_t tid, const char* key, const char* text,
                 int64_t num) {
  ns_json* j = &s->j;
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", what);
  nsj_kstr(j, "ph", "M");
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
  nsj_key(j, "args");
  nsj_obj_begin(j);
  if (text) nsj_kstr(j, key, text);
  else nsj_ki64(j, key, num);
  nsj_obj_end(j);
  nsj_obj_end(j);
}

static void name_thread(chrome_state* s, uint32_t pid, uint32_t tid, const char* name, int64_t sort) {
  int ins;
  size_t* v = map_slot(&s->named_threads, (uint64_t)pid << 32 | tid, &ins);
  if (!v || !ins) return;
  meta(s, "thread_name", pid, tid, "name", name, 0);
  meta(s, "thread_sort_index", pid, tid, "sort_index", NULL, sort);
}

/* Real threads sort by tid; each is followed by its Coll/P2p lanes (+1..+32). */
static int64_t real_thread_sort(uint32_t tid) { return (int64_t)(tid % 1000000) * 64; }

static void name_real_thread(chrome_state* s, const ns_wfile* f, uint32_t pid, uint32_t tid) {
  char name[128];
  const char* tn = ns_wfile_thread_name(f, tid);
  if (tn && tn[0]) snprintf(name, sizeof name, "%s (tid %u)", tn, tid);
  else snprintf(name, sizeof name, "thread %u", tid);
  name_thread(s, pid, tid, name, real_thread_sort(tid));
}

static const char* host_of(const ns_wfile* f) { return f->has_process ? f->process.hostname : "?"; }
static uint32_t file_pid(const ns_wfile* f) { return f->has_process ? f->process.pid : 0; }

static uint32_t nocomm_pid(chrome_state* s, const ns_wfile* f) {
  if (!s->nocomm_pid) {
    s->nocomm_pid = s->next_pid++;
    char name[512];
    snprintf(name, sizeof name, "%s:%u (no communicator: PXN proxy work for other processes)", host_of(f),
             file_pid(f));
    meta(s, "process_name", s->nocomm_pid, 0, "name", name, 0);
    meta(s, "process_sort_index", s->nocomm_pid, 0, "sort_index", NULL, s->nocomm_pid);
  }
  return s->nocomm_pid;
}

static uint32_t comm_pid(chrome_state* s, const ns_wfile* f, uint32_t comm) {
  const ns_wcomm* c = ns_wfile_comm(f, comm);
  return c && c->sink_u[0] ? (uint32_t)c->sink_u[0] : nocomm_pid(s, f);
}

/* ---- lanes ---- */

static int lane_kind(uint8_t type) {
  switch (type) {
    case NS_EV_PROXY_OP: return LANE_PROXY_OP;
    case NS_EV_PROXY_STEP: return LANE_PROXY_STEP;
    case NS_EV_KERNEL_CH: return LANE_KERNEL_CH;
    case NS_EV_NET_PLUGIN: return LANE_NET;
    case NS_EV_COLL:
    case NS_EV_P2P:
    case NS_EV_CE_COLL: return LANE_LAUNCH;
    default: return -1;
  }
}

/* Events whose states are drawn as sub-slices (nothing else nests under them). */
static int has_state_slices(uint8_t type) {
  int k = lane_kind(type);
  return k >= 0 && k != LANE_LAUNCH;
}

static lane_group* lane_group_of(chrome_state* s, const ns_wfile* f, uint32_t pid, int kind, int channel,
                                  uint32_t caller_tid) {
  uint64_t key = (uint64_t)pid << 36 ^ (uint64_t)kind << 34 ^ (uint64_t)(channel & 0xFF) << 26 ^ caller_tid;
  key |= 1ull << 63; /* never 0 */
  int ins;
  size_t* v = map_slot(&s->group_index, key, &ins);
  if (!v) return NULL;
  if (!ins && s->groups[*v].key == key && s->groups[*v].pid == pid) return &s->groups[*v];
  if (!ins) return &s->groups[*v]; /* key collision across pids is impossible below 2^28 pids */
  lane_group* g = realloc(s->groups, (s->ngroups + 1) * sizeof *g);
  if (!g) return NULL;
  s->groups = g;
  g = &s->groups[s->ngroups];
  memset(g, 0, sizeof *g);
  g->key = key;
  g->pid = pid;
  g->kind = kind;
  g->channel = channel;
  const char* kn = lane_kind_names[kind];
  if (kind == LANE_LAUNCH) {
    const char* tn = ns_wfile_thread_name(f, caller_tid);
    snprintf(g->label, sizeof g->label, "%.40s (tid %u) %s", tn && tn[0] ? tn : "thread", caller_tid, kn);
    g->sort_base = real_thread_sort(caller_tid) + 1;
  } else {
    if (channel >= 0 && channel < 255) snprintf(g->label, sizeof g->label, "ch %d %s", channel, kn);
    else snprintf(g->label, sizeof g->label, "%s (channel ?)", kn);
    int ch = channel >= 0 && channel < 255 ? channel : 255;
    g->sort_base = 100000000 + ch * 1000 + kind * 64;
  }
  *v = s->ngroups++;
  return g;
}

/* Takes a free lane (the last one when all are busy) and names its track. */
static uint32_t lane_take(chrome_state* s, lane_group* g, int* lane_out) {
  int lane = LANES - 1;
  for (int i = 0; i < LANES; i++)
    if (!g->busy[i]) {
      lane = i;
      break;
    }
  g->busy[lane] = 1;
  if (!g->tid[lane]) {
    g->tid[lane] = SYNTH_TID_BASE + s->next_tid++;
    char name[128];
    if (lane) snprintf(name, sizeof name, "%s #%d", g->label, lane + 1);
    else snprintf(name, sizeof name, "%s", g->label);
    name_thread(s, g->pid, g->tid[lane], name, g->sort_base + lane);
  }
  *lane_out = lane;
  return g->tid[lane];
}

/* ---- sink callbacks ---- */

static void chrome_file_begin(void* self, ns_wfile* f) {
  chrome_state* s = self;
  (void)f;
  s->nocomm_pid = 0;
  s->file_max_ts = 0;
}

static void see_ts(chrome_state* s, uint64_t ts) {
  if (ts > s->file_max_ts) s->file_max_ts = ts;
}

static void lifecycle_instant(chrome_state* s, ns_wfile* f, ns_wcomm* c, const char* name, uint64_t ts,
                              uint32_t tid, const ns_props_info* fini) {
  ns_json* j = &s->j;
  uint32_t pid = (uint32_t)c->sink_u[0];
  name_real_thread(s, f, pid, tid);
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", name);
  nsj_kstr(j, "cat", "lifecycle");
  nsj_kstr(j, "ph", "i");
  nsj_kstr(j, "s", "p");
  nsj_kus(j, "ts", (int64_t)ts);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
  nsj_key(j, "args");
  nsj_obj_begin(j);
  nsj_ku64(j, "commId", c->info.comm_id);
  nsj_ki64(j, "rank", c->info.rank);
  if (!fini) {
    nsj_ku64(j, "nranks", c->info.nranks);
    nsj_ku64(j, "nNodes", c->info.nnodes);
    nsj_ku64(j, "pluginVersion", c->info.abi_version);
    nsj_ku64(j, "eventMask", c->info.event_mask);
    nsj_kstr(j, "gpuUuid", c->info.gpu_uuid);
  } else {
    nsj_ku64(j, "events", fini->u[NS_P_EVENTS]);
    nsj_ku64(j, "dropped", fini->u[NS_P_DROPPED]);
  }
  ns_walk_comm_details(s->walk, f, c, fini != NULL, j);
  const ns_props_info* pc = fini ? ns_wfile_counters_here(f) : NULL;
  if (pc) {
    nsj_key(j, "processCounters");
    nsj_obj_begin(j);
    ns_write_counter_fields(j, pc);
    nsj_obj_end(j);
  }
  nsj_obj_end(j);
  nsj_obj_end(j);
}

/* One counter sample ("C": Perfetto draws a counter track per arg). */
static void counter_sample(chrome_state* s, uint32_t pid, const char* name, uint64_t ts, const ns_props_info* p,
                           int by_type) {
  ns_json* j = &s->j;
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", name);
  nsj_kstr(j, "cat", "counters");
  nsj_kstr(j, "ph", "C");
  nsj_kus(j, "ts", (int64_t)ts);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", 0);
  nsj_key(j, "args");
  nsj_obj_begin(j);
  if (by_type) {
    for (unsigned t = 0; t < NS_EV_COUNT; t++)
      if (p->has[NS_P_TYPE_DROPPED_BASE + t])
        nsj_ku64(j, ns_event_type_name(t) + strlen("ncclProfile"), p->u[NS_P_TYPE_DROPPED_BASE + t]);
  } else {
    nsj_ku64(j, "dropped", p->u[NS_P_DROPPED]);
    nsj_ku64(j, "droppedRing", p->u[NS_P_DROPPED_RING]);
    nsj_ku64(j, "droppedHandles", p->u[NS_P_DROPPED_HANDLES]);
    nsj_ku64(j, "badHandles", p->u[NS_P_BAD_HANDLES]);
    nsj_ku64(j, "parentLost", p->u[NS_P_PARENT_LOST]);
    nsj_ku64(j, "writeErrors", p->u[NS_P_WRITE_ERRORS]);
  }
  nsj_obj_end(j);
  nsj_obj_end(j);
}

/* The process counters (COUNTERS block), on every process track of the file:
 * counter tracks "ncclscope losses" (and "ncclscope dropped by type" when
 * something was dropped) with one sample at the file's last time, and a
 * process label summing them up. */
static void chrome_counters(void* self, ns_wfile* f, const ns_props_info* p) {
  chrome_state* s = self;
  int any_type = 0;
  for (unsigned t = 0; t < NS_EV_COUNT; t++) any_type |= p->has[NS_P_TYPE_DROPPED_BASE + t];
  char label[256];
  snprintf(label, sizeof label,
           "ncclscope: %" PRIu64 " events recorded, %" PRIu64 " dropped (ring %" PRIu64 ", handles %" PRIu64
           "), %" PRIu64 " bad handles",
           p->u[NS_P_EVENTS], p->u[NS_P_DROPPED], p->u[NS_P_DROPPED_RING], p->u[NS_P_DROPPED_HANDLES],
           p->u[NS_P_BAD_HANDLES]);
  uint32_t first = 0;
  for (size_t i = 0; i <= f->ncomms; i++) {
    uint32_t pid;
    if (i < f->ncomms) {
      if (!f->comms[i].present || !f->comms[i].sink_u[0]) continue;
      pid = (uint32_t)f->comms[i].sink_u[0];
    } else {
      if (first && !s->nocomm_pid) break; /* no extra track unless nothing else exists */
      pid = nocomm_pid(s, f);
    }
    if (!first) first = pid;
    counter_sample(s, pid, "ncclscope losses", f->max_ts, p, 0);
    if (any_type) counter_sample(s, pid, "ncclscope dropped by type", f->max_ts, p, 1);
    meta(s, "process_labels", pid, 0, "labels", label, 0);
  }
}

static void chrome_comm_init(void* self, ns_wfile* f, ns_wcomm* c) {
  chrome_state* s = self;
  c->sink_u[0] = s->next_pid++;
  char name[640], comm[300];
  if (c->info.has_name && c->info.comm_name[0]) snprintf(comm, sizeof comm, "%s", c->info.comm_name);
  else snprintf(comm, sizeof comm, "0x%" PRIx64, c->info.comm_id);
  snprintf(name, sizeof name, "rank %d (%s:%u) comm %s", c->info.rank, host_of(f), file_pid(f), comm);
  meta(s, "process_name", (uint32_t)c->sink_u[0], 0, "name", name, 0);
  meta(s, "process_sort_index", (uint32_t)c->sink_u[0], 0, "sort_index", NULL, (int64_t)c->sink_u[0]);
  lifecycle_instant(s, f, c, "ProfilerInit", c->info.ts, c->info.tid, NULL);
  see_ts(s, c->info.ts);
}

static void chrome_comm_fini(void* self, ns_wfile* f, ns_wcomm* c, const ns_props_info* fini) {
  chrome_state* s = self;
  if (!c->sink_u[0]) chrome_comm_init(self, f, c); /* its init was lost */
  lifecycle_instant(s, f, c, "ProfilerFinalize", fini->ts, fini->tid, fini);
  see_ts(s, fini->ts);
}

static void chrome_event_start(void* self, ns_wfile* f, ns_xevent* ev) {
  chrome_state* s = self;
  const ns_record* r = &ev->start;
  uint32_t pid = comm_pid(s, f, r->comm);
  see_ts(s, r->ts);
  ev->sink_u[0] = pid;
  int kind = lane_kind(r->type);
  if (kind >= 0 && ev->channel < 0 && r->parent && !(r->flags & NS_RF_PARENT_RAW)) {
    /* The parent (ProxyStep of a NetPlugin) may already be written: take its channel from the cache. */
    recent_slot* rs = &s->recent[mix(r->parent) & (RECENT_SLOTS - 1)];
    if (rs->id == r->parent && rs->file == f->index) ev->channel = rs->channel;
  }
  lane_group* g = kind >= 0 ? lane_group_of(s, f, pid, kind, kind == LANE_LAUNCH ? 255 : ev->channel, r->tid) : NULL;
  if (g) {
    int lane;
    ev->sink_u[1] = lane_take(s, g, &lane);
    ev->sink_u[2] = (uint64_t)(g - s->groups) + 1;
    ev->sink_u[3] = (uint64_t)lane;
  } else {
    name_real_thread(s, f, pid, r->tid);
    ev->sink_u[1] = r->tid;
  }
}

static void state_args(ns_json* j, uint8_t type, const ns_record* st, const ns_xstate* xs) {
  nsj_key(j, "args");
  nsj_obj_begin(j);
  nsj_ki64(j, "id", st ? st->state : xs->state);
  if (st) {
    ns_write_state_arg(j, type, st);
  } else if (xs->flags & NS_RF_HAS_ARG) {
    ns_record tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.flags = xs->flags;
    tmp.arg = xs->arg;
    tmp.state = xs->state;
    ns_write_state_arg(j, type, &tmp);
  }
  nsj_obj_end(j);
}

static void chrome_state_rec(void* self, ns_wfile* f, ns_xevent* ev, const ns_record* st) {
  chrome_state* s = self;
  see_ts(s, st->ts);
  if (ev && has_state_slices(ev->start.type) && ev->nstates <= NS_XEV_MAX_STATES) return; /* drawn at its stop */
  uint32_t pid, tid;
  if (ev) {
    pid = (uint32_t)ev->sink_u[0];
    tid = (uint32_t)ev->sink_u[1];
  } else {
    pid = comm_pid(s, f, st->comm);
    tid = st->tid;
    name_real_thread(s, f, pid, tid);
  }
  char buf[32];
  ns_json* j = &s->j;
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", ns_state_label(st->state, buf, sizeof buf));
  nsj_kstr(j, "cat", "state");
  nsj_kstr(j, "ph", "i");
  nsj_kstr(j, "s", "t");
  nsj_kus(j, "ts", (int64_t)st->ts);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
  state_args(j, ev ? ev->start.type : st->type, st, NULL);
  nsj_obj_end(j);
}

static void slice_head(ns_json* j, const char* name, const char* cat, uint64_t ts, uint64_t dur, uint32_t pid,
                       uint32_t tid) {
  nsj_ws(j, "\n");
  nsj_obj_begin(j);
  nsj_kstr(j, "name", name);
  nsj_kstr(j, "cat", cat);
  nsj_kstr(j, "ph", "X");
  nsj_kus(j, "ts", (int64_t)ts);
  nsj_kus(j, "dur", (int64_t)dur);
  nsj_ku64(j, "pid", pid);
  nsj_ku64(j, "tid", tid);
}

/* Appends text to out[*len..] (the caller sized out for it). */
static void name_put(char* out, size_t* len, const char* text, size_t n) {
  memcpy(out + *len, text, n);
  *len += n;
}

static void name_put_i64(char* out, size_t* len, int64_t v) {
  if (v < 0) out[(*len)++] = '-';
  *len += nsj_fmt_u64(out + *len, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

/* The slice name; proxy and kernel slices (most of a trace) without printf. n >= 64. */
static void event_name(const ns_wfile* f, const ns_xevent* ev, char* out, size_t n) {
  const char* short_name = ns_event_type_name(ev->start.type) + strlen("ncclProfile");
  size_t short_len = strlen(short_name), len = 0;
  const uint64_t* num = ev->start.num;
  int has_func;
  const char* func = ns_event_func(f, ev, &has_func);
  switch (ev->start.type) {
    case NS_EV_PROXY_OP: /* "ProxyOp send peer 3" */
      name_put(out, &len, short_name, short_len);
      name_put(out, &len, num[4] ? " send peer " : " recv peer ", 11);
      name_put_i64(out, &len, (int64_t)num[1]);
      break;
    case NS_EV_PROXY_STEP: /* "ProxyStep 12" */
      name_put(out, &len, short_name, short_len);
      out[len++] = ' ';
      len += nsj_fmt_u64(out + len, num[0]);
      break;
    case NS_EV_KERNEL_CH: /* "KernelCh ch 5" */
      name_put(out, &len, short_name, short_len);
      name_put(out, &len, " ch ", 4);
      name_put_i64(out, &len, (int64_t)num[0]);
      break;
    default:
      if (has_func && func) snprintf(out, n, "%s %s", short_name, func);
      else snprintf(out, n, "%s", short_name);
      return;
  }
  out[len] = '\0';
}

/* Where and when the parent's slice starts, if the parent is known. */
static int parent_anchor(chrome_state* s, ns_wfile* f, const ns_xevent* ev, uint32_t* pid, uint32_t* tid,
                         uint64_t* ts) {
  const ns_record* r = &ev->start;
  if (!r->parent || (r->flags & NS_RF_PARENT_RAW)) return 0;
  ns_xevent* p = ns_walk_find(s->walk, r->parent);
  if (p) {
    *pid = (uint32_t)p->sink_u[0];
    *tid = (uint32_t)p->sink_u[1];
    *ts = p->start.ts;
    return 1;
  }
  recent_slot* rs = &s->recent[mix(r->parent) & (RECENT_SLOTS - 1)];
  if (rs->id == r->parent && rs->file == f->index) {
    *pid = rs->pid;
    *tid = rs->tid;
    *ts = rs->start_ts;
    return 1;
  }
  return 0;
}

static void flow(chrome_state* s, ns_wfile* f, const ns_xevent* ev, uint32_t pid, uint32_t tid) {
  uint32_t ppid, ptid;
  uint64_t pts;
  if (!parent_anchor(s, f, ev, &ppid, &ptid, &pts) || pts > ev->start.ts) return;
  uint64_t id = ++s->next_flow;
  ns_json* j = &s->j;
  for (int end = 0; end < 2; end++) {
    nsj_ws(j, "\n");
    nsj_obj_begin(j);
    nsj_kstr(j, "name", "parent");
    nsj_kstr(j, "cat", "hierarchy");
    nsj_kstr(j, "ph", end ? "f" : "s");
    if (end) nsj_kstr(j, "bp", "e");
    nsj_ku64(j, "id", id);
    nsj_kus(j, "ts", (int64_t)(end ? ev->start.ts : pts));
    nsj_ku64(j, "pid", end ? pid : ppid);
    nsj_ku64(j, "tid", end ? tid : ptid);
    nsj_obj_end(j);
  }
}

static void chrome_event(void* self, ns_wfile* f, ns_xevent* ev) {
  chrome_state* s = self;
  const ns_record* r = &ev->start;
  uint32_t pid = (uint32_t)ev->sink_u[0], tid = (uint32_t)ev->sink_u[1];
  uint64_t stop = ev->stopped ? ev->stop_ts : (s->file_max_ts > r->ts ? s->file_max_ts : r->ts);
  if (stop < r->ts) stop = r->ts;
  if (ev->stopped) see_ts(s, stop);
  if (ev->sink_u[2]) s->groups[ev->sink_u[2] - 1].busy[ev->sink_u[3]] = 0;

  char name[384], addr[NS_EVENT_ADDR_MAX];
  size_t alen;
  event_name(f, ev, name, sizeof name);
  ns_json* j = &s->j;
  slice_head(j, name, ns_event_type_name(r->type) + strlen("ncclProfile"), r->ts, stop - r->ts, pid, tid);
  nsj_key(j, "args");
  nsj_obj_begin(j);
  alen = ns_event_addr(addr, sizeof addr, f->index, ev->id);
  nsj_key(j, "eventAddr");
  nsj_strn(j, addr, alen);
  nsj_key(j, "parentObj");
  if (r->flags & NS_RF_PARENT_RAW) {
    nsj_hex(j, r->parent);
  } else if (r->parent) {
    alen = ns_event_addr(addr, sizeof addr, f->index, r->parent);
    nsj_strn(j, addr, alen);
  } else {
    nsj_null(j);
  }
  if (r->flags & NS_RF_PXN) nsj_ku64(j, "originPid", r->origin_pid);
  if (!ev->stopped) nsj_kbool(j, "incomplete", 1);
  ns_write_details(s->walk, f, ev, j);
  nsj_obj_end(j);
  nsj_obj_end(j);

  /* States of lane events as sub-slices, each lasting until the next state or the stop. */
  if (has_state_slices(r->type)) {
    uint32_t n = ev->nstates < NS_XEV_MAX_STATES ? ev->nstates : NS_XEV_MAX_STATES;
    for (uint32_t i = 0; i < n; i++) {
      const ns_xstate* xs = &ev->states[i];
      uint64_t a = xs->ts < r->ts ? r->ts : xs->ts > stop ? stop : xs->ts;
      uint64_t b = i + 1 < n ? ev->states[i + 1].ts : stop;
      if (b > stop) b = stop;
      if (b < a) b = a;
      char buf[32];
      slice_head(j, ns_state_label(xs->state, buf, sizeof buf), "state", a, b - a, pid, tid);
      state_args(j, r->type, NULL, xs);
      nsj_obj_end(j);
    }
  }
  flow(s, f, ev, pid, tid);
  recent_slot* rs = &s->recent[mix(ev->id) & (RECENT_SLOTS - 1)];
  *rs = (recent_slot){.id = ev->id, .file = f->index, .pid = pid, .tid = tid, .channel = ev->channel, .start_ts = r->ts};
}

static void* chrome_make(FILE* out, ns_sink* sink) {
  chrome_state* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->recent = calloc(RECENT_SLOTS, sizeof *s->recent);
  if (!s->recent) {
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < RECENT_SLOTS; i++) s->recent[i].file = -1;
  s->next_pid = 1;
  nsj_init(&s->j, out);
  nsj_obj_begin(&s->j);
  nsj_kstr(&s->j, "displayTimeUnit", "ns");
  nsj_key(&s->j, "otherData");
  nsj_obj_begin(&s->j);
  nsj_kstr(&s->j, "producer", "ncclscope export --format chrome");
  nsj_kstr(&s->j, "clock", "CLOCK_MONOTONIC of each recording host, microseconds");
  nsj_obj_end(&s->j);
  nsj_key(&s->j, "traceEvents");
  nsj_arr_begin(&s->j);
  memset(sink, 0, sizeof *sink);
  sink->self = s;
  sink->file_begin = chrome_file_begin;
  sink->comm_init = chrome_comm_init;
  sink->comm_fini = chrome_comm_fini;
  sink->counters = chrome_counters;
  sink->event_start = chrome_event_start;
  sink->state = chrome_state_rec;
  sink->event_done = chrome_event;
  return s;
}

static int chrome_finish(void* state) {
  chrome_state* s = state;
  nsj_ws(&s->j, "\n");
  nsj_arr_end(&s->j);
  nsj_obj_end(&s->j);
  nsj_line_end(&s->j);
  nsj_flush(&s->j); /* a failed write shows in ferror(out), which the caller checks */
  map_free(&s->named_threads);
  map_free(&s->group_index);
  free(s->groups);
  free(s->recent);
  free(s);
  return 0;
}

const ns_format ns_format_chrome = {"chrome", chrome_make, chrome_finish};
