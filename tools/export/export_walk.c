/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the exporters' walk (see export_walk.h): reader items in,
 * file context kept here, records through the event assembler, sink and
 * extension callbacks out. Single-threaded. */
#include "export/export_walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

/* Comm serials above this are taken as corruption (the table is indexed by serial). */
#define NS_MAX_COMM_SERIAL (1u << 20)

struct ns_walk {
  ns_sink sink;
  ns_export_ext ext[NS_WALK_MAX_EXT];
  int next;
  size_t max_open;
  ns_asm* as;         /* of the file being walked */
  ns_trace_scan scan; /* of the file being walked */
  ns_wfile* f;
  ns_export_filter filter;
  int filtering;
  void (*progress)(void* user, int index, uint64_t offset);
  void* progress_user;
  uint64_t items;
  uint64_t selected; /* events that passed the filter, over every file walked */
};

void ns_walk_set_filter(ns_walk* w, const ns_export_filter* filter) {
  w->filter = *filter;
  w->filtering = filter->types || filter->nranks || filter->ncomms || filter->has_from || filter->has_to;
}

void ns_walk_set_progress(ns_walk* w, void (*fn)(void* user, int index, uint64_t offset), void* user) {
  w->progress = fn;
  w->progress_user = user;
}

/* The rank and communicator filters for the communicator `serial` of the file. */
static int comm_selected(const ns_walk* w, uint32_t serial) {
  const ns_export_filter* fl = &w->filter;
  if (!fl->nranks && !fl->ncomms) return 1;
  const ns_wcomm* c = ns_wfile_comm(w->f, serial);
  int32_t rank = c ? c->info.rank : -1;
  uint64_t id = c ? c->info.comm_id : 0;
  int ok = !fl->nranks;
  for (size_t i = 0; i < fl->nranks && !ok; i++) ok = fl->ranks[i] == rank;
  if (!ok) return 0;
  ok = !fl->ncomms;
  for (size_t i = 0; i < fl->ncomms && !ok; i++) ok = fl->comms[i] == id;
  return ok;
}

static int selected(const ns_walk* w, const ns_event* ev) {
  if (!w->filtering) return 1;
  const ns_export_filter* fl = &w->filter;
  if (!ev->started) return 0;
  if (fl->types && !(fl->types & (1u << ev->type))) return 0;
  if (fl->has_from && ev->start.ts < fl->from_ns) return 0;
  if (fl->has_to && ev->start.ts > fl->to_ns) return 0;
  return comm_selected(w, (ev->start.flags & NS_RF_PXN) ? 0 : ev->start.comm);
}

ns_walk* ns_walk_new(const ns_sink* sink) {
  ns_walk* w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->sink = *sink;
  w->max_open = NS_OPEN_MAX;
  return w;
}

void ns_walk_set_max_open(ns_walk* w, size_t max_open) { w->max_open = max_open ? max_open : NS_OPEN_MAX; }
size_t ns_walk_max_open(const ns_walk* w) { return w->max_open; }

void ns_walk_free(ns_walk* w) { free(w); }

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

ns_event* ns_walk_find(ns_walk* w, uint64_t id) {
  ns_event* e = w->as ? ns_asm_find(w->as, id) : NULL;
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

void ns_walk_event_details(ns_walk* w, ns_wfile* f, const ns_event* ev, ns_json* j) {
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
  ns_wcomm* grown = ns_array_reach(f->comms, &f->ncomms, serial, sizeof *grown, 16);
  if (!grown) return NULL;
  f->comms = grown;
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

/* ---- the assembler's callbacks: events to the sink ---- */

static void on_started(void* self, ns_event* ev) {
  ns_walk* w = self;
  if (w->sink.event_start && selected(w, ev)) w->sink.event_start(w->sink.self, w->f, ev);
}

static void on_state(void* self, ns_event* ev, const ns_record* st) {
  ns_walk* w = self;
  if (w->sink.state && selected(w, ev)) w->sink.state(w->sink.self, w->f, ev, st);
}

static void on_stopped(void* self, ns_event* ev) {
  ns_walk* w = self;
  if (w->sink.event_stop && selected(w, ev)) w->sink.event_stop(w->sink.self, w->f, ev);
}

static void on_done(void* self, ns_event* ev) {
  ns_walk* w = self;
  if (!ev->started) return; /* a parent whose START never came: counted by the assembler */
  for (int i = 0; i < w->next; i++)
    if (w->ext[i].event) w->ext[i].event(w->ext[i].self, w->f, ev);
  if (!selected(w, ev)) return;
  w->selected++;
  if (w->sink.event_done) w->sink.event_done(w->sink.self, w->f, ev);
}

uint64_t ns_walk_selected(const ns_walk* w) { return w->selected; }

/* ---- items ---- */

static void on_props(ns_walk* w, const ns_item* it) {
  const ns_props_info* p = it->props;
  ns_wcomm* c = comm_slot(w->f, p->comm);
  if (it->kind == NS_ITEM_CLOCKFIT) {
    if (!c) return;
    c->has_clockfit = 1;
    c->gpu_offset_ns = p->f[NS_P_GPU_OFFSET_NS];
    c->gpu_ref_ns = p->u[NS_P_TS];
    c->gpu_drift_ppm = p->f[NS_P_GPU_DRIFT_PPM];
    c->gpu_error_ns = p->f[NS_P_GPU_ERROR_NS];
    c->gpu_samples = p->u[NS_P_GPU_SAMPLES];
  } else if (it->kind == NS_ITEM_COMM_FINI) {
    w->f->finis_seen++; /* counted even when unusable, as ns_reader_scan counts blocks */
    if (p->ts > w->f->max_ts) w->f->max_ts = p->ts;
    if (!c) return;
    if (!c->present) { /* finalize of a comm whose init was lost: keep what we can (records nothing known) */
      c->present = 1;
      c->info.comm = p->comm;
      c->info.rank = -1;
      ns_asm_comm(w->as, p->comm, 0, 0);
    }
    if (w->sink.comm_fini && (!w->filtering || comm_selected(w, p->comm))) w->sink.comm_fini(w->sink.self, w->f, c, p);
  }
}

static void on_item(ns_walk* w, const ns_item* it) {
  if (w->progress && (++w->items & 0xFFFF) == 0) {
    uint64_t offset, seq;
    ns_reader_block_pos(w->f->reader, &offset, &seq);
    w->progress(w->progress_user, w->f->index, offset);
  }
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
      ns_asm_comm(w->as, c->info.comm, c->info.event_mask, c->info.abi_version);
      ns_asm_comm_rank(w->as, c->info.comm, c->info.rank);
      if (w->sink.comm_init && (!w->filtering || comm_selected(w, c->info.comm)))
        w->sink.comm_init(w->sink.self, w->f, c);
      break;
    }
    case NS_ITEM_COMM_FINI:
    case NS_ITEM_CLOCKFIT:
      on_props(w, it);
      break;
    case NS_ITEM_COUNTERS:
      if (w->sink.counters) w->sink.counters(w->sink.self, w->f, it->props);
      break;
    case NS_ITEM_RECORD:
      if (it->record->ts > w->f->max_ts) w->f->max_ts = it->record->ts;
      ns_asm_record(w->as, it->record);
      break;
    default:
      break;
  }
}

/* The assembler's counts in the walk's terms. */
static void fill_result(ns_walk_result* res, const ns_asm_stats* st) {
  res->assembled = *st;
  for (unsigned t = 0; t < NS_EV_COUNT; t++) {
    res->events_by_type[t] = st->events[t] - st->never_stopped[t];
    res->events_done += res->events_by_type[t];
    res->events_incomplete += st->never_stopped[t];
  }
  res->events_incomplete -= st->evicted_open + st->evicted_age;
}

int ns_walk_file(ns_walk* w, int index, const char* path, ns_walk_result* res, char* err, size_t errlen) {
  memset(res, 0, sizeof *res);
  if (ns_reader_scan(path, &w->scan, err, errlen)) return -1;
  ns_asm_config cfg;
  ns_asm_config_default(&cfg);
  cfg.max_open = w->max_open;
  cfg.keep_states = NS_XEV_MAX_STATES;
  cfg.user_bytes = w->sink.event_bytes;
  cfg.sink = (ns_asm_sink){
      .user = w, .started = on_started, .state = on_state, .stopped = on_stopped, .done = on_done};
  w->as = ns_asm_new(&cfg);
  ns_reader* r = w->as ? ns_reader_open(path, err, errlen) : NULL;
  if (!r) {
    if (!w->as) snprintf(err, errlen, "%s: out of memory", path);
    ns_asm_free(w->as);
    w->as = NULL;
    return -1;
  }
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
  if (w->sink.file_begin) w->sink.file_begin(w->sink.self, &f);
  ns_item it;
  while (ns_reader_next(r, &it)) on_item(w, &it);
  ns_asm_flush(w->as);
  if (w->sink.file_end) w->sink.file_end(w->sink.self, &f);
  ns_asm_stats st;
  ns_asm_get_stats(w->as, &st);
  fill_result(res, &st);
  ns_reader_get_stats(r, &res->reader);
  ns_file_health_take(r, &res->health);
  ns_reader_close(r);
  ns_asm_free(w->as);
  w->as = NULL;
  free(f.comms);
  free(f.threads);
  w->f = NULL;
  return 0;
}
