/* ncclscope CLI: the event walker (see export_walk.h for the model, holding
 * rules and memory bounds). Single-threaded. */
#include "export_walk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_table.h"

/* Comm serials above this are taken as corruption (the table is indexed by serial). */
#define NS_MAX_COMM_SERIAL (1u << 20)

struct ns_walk {
  ns_sink sink;
  ns_export_ext ext[NS_WALK_MAX_EXT];
  int next;
  ns_event_table tab;
  ns_xevent *hold_head, *hold_tail;
  size_t nheld;
  ns_xevent *open_head, *open_tail; /* started, not stopped, in start order */
  size_t nopen, max_open;
  int ending; /* flush_all: what is still open is written as never stopped */
  ns_trace_scan scan; /* of the file being walked */
  ns_wfile* f;
  ns_walk_result* res;
};

ns_walk* ns_walk_new(const ns_sink* sink) {
  ns_walk* w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->sink = *sink;
  w->max_open = NS_OPEN_MAX;
  ns_evtab_init(&w->tab);
  return w;
}

void ns_walk_set_max_open(ns_walk* w, size_t max_open) { w->max_open = max_open ? max_open : NS_OPEN_MAX; }
size_t ns_walk_max_open(const ns_walk* w) { return w->max_open; }

void ns_walk_free(ns_walk* w) {
  if (!w) return;
  ns_evtab_free(&w->tab);
  free(w);
}

int ns_walk_add_ext(ns_walk* w, const ns_export_ext* ext) {
  if (w->next >= NS_WALK_MAX_EXT) return -1;
  w->ext[w->next++] = *ext;
  return 0;
}

size_t ns_event_addr(char* out, size_t n, int file_index, uint64_t id) {
  if (n < NS_EVENT_ADDR_MAX) {
    if (n) out[0] = '\0';
    return 0;
  }
  out[0] = '0';
  out[1] = 'x';
  size_t len = 2 + nsj_fmt_hex(out + 2, (uint64_t)(unsigned)(file_index + 1), 4);
  len += nsj_fmt_hex(out + len, id, 16);
  out[len] = '\0';
  return len;
}

ns_xevent* ns_walk_find(ns_walk* w, uint64_t id) {
  ns_xevent* e = ns_evtab_find(&w->tab, id);
  return e && e->started ? e : NULL;
}

const ns_wcomm* ns_wfile_comm(const ns_wfile* f, uint32_t serial) {
  return serial < f->ncomms && f->comms[serial].present ? &f->comms[serial] : NULL;
}

const char* ns_wfile_thread_name(const ns_wfile* f, uint32_t tid) {
  for (size_t i = 0; i < f->nthreads; i++)
    if (f->threads[i].tid == tid) return f->threads[i].name;
  return NULL;
}

const char* ns_wfile_string(const ns_wfile* f, uint32_t id) { return ns_reader_string(f->reader, id); }

const ns_props_info* ns_wfile_counters_here(const ns_wfile* f) {
  return f->counters && f->counters_after_fini && f->finis_seen == f->counters_after_fini ? f->counters : NULL;
}

void ns_walk_event_details(ns_walk* w, ns_wfile* f, const ns_xevent* ev, ns_json* j) {
  for (int i = 0; i < w->next; i++)
    if (w->ext[i].event_details) w->ext[i].event_details(w->ext[i].self, f, ev, j);
}

void ns_walk_comm_details(ns_walk* w, ns_wfile* f, const ns_wcomm* c, int finalize, ns_json* j) {
  for (int i = 0; i < w->next; i++) {
    if (finalize && w->ext[i].fini_details) w->ext[i].fini_details(w->ext[i].self, f, c, j);
    if (!finalize && w->ext[i].init_details) w->ext[i].init_details(w->ext[i].self, f, c, j);
  }
}

/* ---- comm and thread tables ---- */

static ns_wcomm* comm_slot(ns_wfile* f, uint32_t serial) {
  if (serial == 0 || serial >= NS_MAX_COMM_SERIAL) return NULL;
  if (serial >= f->ncomms) {
    size_t n = f->ncomms ? f->ncomms : 16;
    while (n <= serial) n *= 2;
    ns_wcomm* c = realloc(f->comms, n * sizeof *c);
    if (!c) return NULL;
    memset(c + f->ncomms, 0, (n - f->ncomms) * sizeof *c);
    f->comms = c;
    f->ncomms = n;
  }
  return &f->comms[serial];
}

static void add_thread(ns_wfile* f, const ns_thread_info* t) {
  for (size_t i = 0; i < f->nthreads; i++)
    if (f->threads[i].tid == t->tid) {
      snprintf(f->threads[i].name, sizeof f->threads[i].name, "%s", t->name);
      return;
    }
  ns_wthread* nt = realloc(f->threads, (f->nthreads + 1) * sizeof *nt);
  if (!nt) return;
  f->threads = nt;
  nt[f->nthreads].tid = t->tid;
  snprintf(nt[f->nthreads].name, sizeof nt[f->nthreads].name, "%s", t->name);
  f->nthreads++;
}

/* ---- hold list ---- */

static void hold_push(ns_walk* w, ns_xevent* e, uint64_t now) {
  if (e->held) return;
  e->held = 1;
  e->hold_since = now;
  e->hold_prev = w->hold_tail;
  e->hold_next = NULL;
  if (w->hold_tail) w->hold_tail->hold_next = e;
  else w->hold_head = e;
  w->hold_tail = e;
  w->nheld++;
}

static void hold_unlink(ns_walk* w, ns_xevent* e) {
  if (!e->held) return;
  if (e->hold_prev) e->hold_prev->hold_next = e->hold_next;
  else w->hold_head = e->hold_next;
  if (e->hold_next) e->hold_next->hold_prev = e->hold_prev;
  else w->hold_tail = e->hold_prev;
  e->held = 0;
  w->nheld--;
}

/* ---- open list ---- */

static void open_push(ns_walk* w, ns_xevent* e) {
  e->open = 1;
  e->open_prev = w->open_tail;
  e->open_next = NULL;
  if (w->open_tail) w->open_tail->open_next = e;
  else w->open_head = e;
  w->open_tail = e;
  w->nopen++;
}

static void open_unlink(ns_walk* w, ns_xevent* e) {
  if (!e->open) return;
  if (e->open_prev) e->open_prev->open_next = e->open_next;
  else w->open_head = e->open_next;
  if (e->open_next) e->open_next->open_prev = e->open_prev;
  else w->open_tail = e->open_prev;
  e->open = 0;
  w->nopen--;
}

/* ---- emission ---- */

static void emit(ns_walk* w, ns_xevent* e) {
  hold_unlink(w, e);
  open_unlink(w, e);
  if (e->started) {
    for (int i = 0; i < w->next; i++)
      if (w->ext[i].event) w->ext[i].event(w->ext[i].self, w->f, e);
    if (w->sink.event_done) w->sink.event_done(w->sink.self, w->f, e);
    if (e->stopped) {
      w->res->events_done++;
      w->res->events_by_type[e->start.type]++;
    } else if (w->ending) {
      w->res->events_incomplete++;
    } /* else: evicted by the cap, counted by the caller */
  } else {
    w->res->lost_parents++;
  }
  ns_evtab_remove(&w->tab, e);
}

static int is_coll_like(const ns_xevent* e) { return e->start.type == NS_EV_COLL || e->start.type == NS_EV_P2P; }

/* Whether a stopped Coll/P2p must still wait for children (see export_walk.h). */
static int waits_for_children(const ns_walk* w, const ns_xevent* e) {
  if (e->live_children) return 1;
  const ns_wcomm* c = ns_wfile_comm(w->f, e->start.comm);
  uint64_t mask = c ? c->info.event_mask : ~0ull;
  uint32_t abi = c ? c->info.abi_version : 0;
  int want_kch = (mask & (1ull << NS_EV_KERNEL_CH)) && (abi == 0 || abi >= 3);
  int want_pop = (mask & (1ull << NS_EV_PROXY_OP)) != 0;
  if (!want_kch && !want_pop) return 0;
  uint64_t nch = e->start.type == NS_EV_COLL ? e->start.num[NS_COLL_CHANNELS] : e->start.num[NS_P2P_CHANNELS];
  if (want_kch && nch > 0) return e->kch_seen < nch;
  return e->children_seen == 0;
}

static void maybe_complete(ns_walk* w, ns_xevent* e, uint64_t now) {
  if (!e->started || !e->stopped) return;
  if (is_coll_like(e) && waits_for_children(w, e)) {
    hold_push(w, e, now);
    return;
  }
  emit(w, e);
}

/* Releases held events and placeholders that waited too long. */
static void age_holds(ns_walk* w, uint64_t now) {
  while (w->hold_head && (w->nheld > NS_HOLD_MAX || now > w->hold_head->hold_since + NS_HOLD_NS)) {
    ns_xevent* e = w->hold_head;
    if (e->started) w->res->forced_releases++;
    emit(w, e);
  }
}

/* The parent's entry, creating a placeholder when the parent has not started yet. */
static ns_xevent* parent_entry(ns_walk* w, const ns_record* r) {
  if (!r->parent || (r->flags & NS_RF_PARENT_RAW)) return NULL;
  ns_xevent* p = ns_evtab_find(&w->tab, r->parent);
  if (!p) {
    p = ns_evtab_insert(&w->tab, r->parent);
    if (p) hold_push(w, p, r->ts);
  }
  return p;
}

static void on_start(ns_walk* w, const ns_record* r) {
  ns_xevent* e = ns_evtab_find(&w->tab, r->id);
  if (e && e->started) {
    w->res->duplicate_starts++;
    return;
  }
  if (!e) {
    e = ns_evtab_insert(&w->tab, r->id);
    if (!e) return;
  }
  hold_unlink(w, e); /* it was a placeholder */
  /* The cap: the oldest open event goes out unfinished to make room. */
  while (w->nopen >= w->max_open && w->open_head) {
    w->res->evicted_open++;
    emit(w, w->open_head);
  }
  e->start = *r;
  e->started = 1;
  open_push(w, e);
  if (w->tab.count > w->res->peak_live) w->res->peak_live = w->tab.count;

  switch (r->type) {
    case NS_EV_PROXY_OP:
    case NS_EV_KERNEL_CH: {
      e->channel = (int32_t)r->num[r->type == NS_EV_PROXY_OP ? NS_PROXY_OP_CHANNEL : NS_KERNEL_CH_CHANNEL];
      ns_xevent* p = parent_entry(w, r);
      if (p) {
        p->live_children++;
        p->children_seen++;
        if (r->type == NS_EV_KERNEL_CH) {
          p->kch_seen++;
          uint64_t ptimer = r->num[NS_KERNEL_CH_PTIMER];
          if (ptimer && (!p->has_kch_ptimer_min || ptimer < p->kch_ptimer_min)) {
            p->kch_ptimer_min = ptimer;
            p->has_kch_ptimer_min = 1;
          }
        }
      }
      break;
    }
    case NS_EV_PROXY_STEP:
    case NS_EV_NET_PLUGIN: {
      ns_xevent* p = (r->flags & NS_RF_PARENT_RAW) ? NULL : ns_walk_find(w, r->parent);
      if (p) e->channel = p->channel;
      break;
    }
    default:
      break;
  }
  if (w->sink.event_start) w->sink.event_start(w->sink.self, w->f, e);
}

static void on_state(ns_walk* w, const ns_record* r) {
  ns_xevent* e = ns_walk_find(w, r->id);
  w->res->states++;
  if (e) {
    if (e->nstates < NS_XEV_MAX_STATES)
      e->states[e->nstates] = (ns_xstate){.ts = r->ts, .arg = r->arg, .state = r->state, .flags = r->flags, .tid = r->tid};
    e->nstates++;
    if (r->flags & NS_RF_HAS_ARG) {
      if (e->start.type == NS_EV_PROXY_STEP) {
        e->trans_size = r->arg;
        e->has_trans_size = 1;
      } else if (e->start.type == NS_EV_KERNEL_CH && r->state == NS_ST_KERNEL_CH_STOP) {
        e->ptimer_stop = r->arg;
        e->has_ptimer_stop = 1;
      }
    }
  } else {
    w->res->orphan_states++;
  }
  if (w->sink.state) w->sink.state(w->sink.self, w->f, e, r);
}

static void on_stop(ns_walk* w, const ns_record* r) {
  ns_xevent* e = ns_walk_find(w, r->id);
  if (!e || e->stopped) {
    w->res->orphan_stops++;
    return;
  }
  open_unlink(w, e);
  e->stopped = 1;
  e->stop_ts = r->ts;
  e->stop_tid = r->tid;
  if (w->sink.event_stop) w->sink.event_stop(w->sink.self, w->f, e);
  if ((e->start.type == NS_EV_PROXY_OP || e->start.type == NS_EV_KERNEL_CH) && e->start.parent &&
      !(e->start.flags & NS_RF_PARENT_RAW)) {
    ns_xevent* p = ns_evtab_find(&w->tab, e->start.parent);
    if (p) {
      if (p->live_children) p->live_children--;
      if (!p->has_exec_stop || r->ts > p->exec_stop) p->exec_stop = r->ts;
      p->has_exec_stop = 1;
      if (e->start.type == NS_EV_KERNEL_CH && e->has_ptimer_stop && e->ptimer_stop &&
          (!p->has_kch_ptimer_max || e->ptimer_stop > p->kch_ptimer_max)) {
        p->kch_ptimer_max = e->ptimer_stop;
        p->has_kch_ptimer_max = 1;
      }
      maybe_complete(w, p, r->ts);
    }
  }
  maybe_complete(w, e, r->ts);
}

/* ---- items ---- */

static void on_props(ns_walk* w, const ns_item* it) {
  const ns_props_info* p = it->props;
  ns_wcomm* c = comm_slot(w->f, p->comm);
  if (it->kind == NS_ITEM_CLOCKFIT) {
    if (!c) return;
    c->has_clockfit = 1;
    c->gpu_offset_ns = p->f[NS_P_GPU_OFFSET_NS];
    c->gpu_drift_ppm = p->f[NS_P_GPU_DRIFT_PPM];
    c->gpu_error_ns = p->f[NS_P_GPU_ERROR_NS];
    c->gpu_samples = p->u[NS_P_GPU_SAMPLES];
  } else if (it->kind == NS_ITEM_COMM_FINI) {
    w->f->finis_seen++; /* counted even when unusable, as ns_reader_scan counts blocks */
    if (p->ts > w->f->max_ts) w->f->max_ts = p->ts;
    if (!c) return;
    if (!c->present) { /* finalize of a comm whose init was lost: keep what we can */
      c->present = 1;
      c->info.comm = p->comm;
      c->info.rank = -1;
    }
    if (w->sink.comm_fini) w->sink.comm_fini(w->sink.self, w->f, c, p);
  }
}

static void on_item(ns_walk* w, const ns_item* it) {
  for (int i = 0; i < w->next; i++)
    if (w->ext[i].item) w->ext[i].item(w->ext[i].self, w->f, it);
  switch (it->kind) {
    case NS_ITEM_PROCESS:
      w->f->has_process = 1;
      w->f->process = *it->process;
      break;
    case NS_ITEM_THREAD:
      add_thread(w->f, it->thread);
      if (w->sink.thread) w->sink.thread(w->sink.self, w->f, it->thread);
      break;
    case NS_ITEM_COMM_INIT: {
      ns_wcomm* c = comm_slot(w->f, it->comm->comm);
      if (!c) break;
      memset(c, 0, sizeof *c);
      c->present = 1;
      c->info = *it->comm;
      if (c->info.ts > w->f->max_ts) w->f->max_ts = c->info.ts;
      if (w->sink.comm_init) w->sink.comm_init(w->sink.self, w->f, c);
      break;
    }
    case NS_ITEM_COMM_FINI:
    case NS_ITEM_CLOCKFIT:
      on_props(w, it);
      break;
    case NS_ITEM_COUNTERS:
      if (w->sink.counters) w->sink.counters(w->sink.self, w->f, it->props);
      break;
    case NS_ITEM_RECORD: {
      const ns_record* r = it->record;
      if (r->ts > w->f->max_ts) w->f->max_ts = r->ts;
      if (r->kind == NS_REC_START) on_start(w, r);
      else if (r->kind == NS_REC_STOP) on_stop(w, r);
      else on_state(w, r);
      age_holds(w, r->ts);
      break;
    }
    default:
      break;
  }
}

/* ---- end of file ---- */

typedef struct {
  ns_xevent** v;
  size_t n, cap;
} ev_vec;

static void collect(void* arg, ns_xevent* e) {
  ev_vec* v = arg;
  if (v->n < v->cap) v->v[v->n++] = e;
}

static int by_start(const void* a, const void* b) {
  const ns_xevent* x = *(ns_xevent* const*)a;
  const ns_xevent* y = *(ns_xevent* const*)b;
  if (x->start.ts != y->start.ts) return x->start.ts < y->start.ts ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Held events first (in hold order), then events that never stopped, by start time. */
static void flush_all(ns_walk* w) {
  w->ending = 1;
  while (w->hold_head) emit(w, w->hold_head);
  ev_vec v = {NULL, 0, w->tab.count};
  v.v = malloc((v.cap ? v.cap : 1) * sizeof *v.v);
  if (v.v) {
    ns_evtab_each(&w->tab, collect, &v);
    qsort(v.v, v.n, sizeof *v.v, by_start);
    for (size_t i = 0; i < v.n; i++) emit(w, v.v[i]);
    free(v.v);
  }
  ns_evtab_free(&w->tab);
  ns_evtab_init(&w->tab);
  w->open_head = w->open_tail = NULL;
  w->nopen = 0;
}

int ns_walk_file(ns_walk* w, int index, const char* path, ns_walk_result* res, char* err, size_t errlen) {
  memset(res, 0, sizeof *res);
  if (ns_reader_scan(path, &w->scan, err, errlen)) return -1;
  ns_reader* r = ns_reader_open(path, err, errlen);
  if (!r) return -1;
  ns_wfile f;
  memset(&f, 0, sizeof f);
  f.index = index;
  f.path = path;
  f.reader = r;
  if (w->scan.has_counters) {
    f.counters = &w->scan.counters;
    f.counters_after_fini = w->scan.finis_before_counters;
  }
  w->f = &f;
  w->res = res;
  w->ending = 0;
  if (w->sink.file_begin) w->sink.file_begin(w->sink.self, &f);
  ns_item it;
  while (ns_reader_next(r, &it)) on_item(w, &it);
  flush_all(w);
  if (w->sink.file_end) w->sink.file_end(w->sink.self, &f);
  ns_reader_get_stats(r, &res->reader);
  ns_reader_close(r);
  free(f.comms);
  free(f.threads);
  w->f = NULL;
  w->res = NULL;
  return 0;
}
