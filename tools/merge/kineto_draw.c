/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: a Kineto trace's events drawn through a timeline drawer
 * (kineto_draw.h): numbers for the trace's pids and tids, the tracks'
 * names, then per track its slices in time order (placed so that they
 * nest), its flow points on them, instants and counters. Single-threaded. */
#include "merge/kineto_draw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_reader.h"
#include "util/array.h"
#include "util/idmap.h"

#define KD_PID_MAX (1 << 30) /* larger numeric pids get numbers of their own, like string ones */

typedef struct {
  char* p;
  size_t cap;
} strbuf;

typedef struct {
  int64_t* v;
  size_t n, cap;
} end_stack;

typedef struct {
  size_t ev;
  uint32_t pid, tid;
  int64_t ts, dur;
} item;

typedef struct {
  const ns_kineto_trace* tr;
  const ns_drawer* d;
  ns_kineto_drawn* out;
  uint32_t *pid, *tid; /* per event: the numbers it is drawn with */
  ns_idmap str_ids;    /* hash of a pid's text (or a pid and a tid's) -> its number */
  uint32_t next_pid, next_tid, next_overlap;
  ns_idmap flow_ids; /* hash of a flow's category and id -> its flow id */
  uint64_t flow_base, next_flow, next_async;
  ns_idmap psort, tsort, tname; /* pid -> sort index; pid/tid -> sort index; pid/tid -> thread_name event + 1 */
  strbuf name, cat;
  ns_kineto_link* att; /* flow ids on slices, by event */
  size_t natt, cap_att;
  uint64_t* ids; /* the flow ids of the slice being drawn */
  size_t cap_ids;
  end_stack stacks[KD_OVERLAP_MAX + 1];
  uint32_t overlap_tid[KD_OVERLAP_MAX + 1];
} kdraw;

static uint64_t pair_key(uint32_t a, uint32_t b) {
  uint64_t k = ns_idmap_mix((uint64_t)a << 32 | b);
  return k ? k : 1;
}

static int raw_is(const ns_kineto_trace* tr, size_t off, size_t len, const char* s) {
  return len == strlen(s) && memcmp(tr->text + off, s, len) == 0;
}

/* Raw JSON string bytes unescaped, NUL-terminated, into b; NULL when out of memory. */
static const char* unescaped(strbuf* b, const char* s, size_t n) {
  if (n + 1 > b->cap) {
    size_t cap = n + 1 < 256 ? 256 : n + 1;
    char* p = realloc(b->p, cap);
    if (!p) return NULL;
    b->p = p, b->cap = cap;
  }
  b->p[nsjr_unescape_or_copy(s, n, b->p)] = '\0'; /* not valid JSON text: as it stands */
  return b->p;
}

static const char* name_of(kdraw* k, const ns_kt_event* e) {
  const char* s = unescaped(&k->name, k->tr->text + e->name_off, e->name_len);
  return s ? s : "";
}

static const char* cat_of(kdraw* k, const ns_kt_event* e) {
  if (!e->cat_len) return NULL;
  return unescaped(&k->cat, k->tr->text + e->cat_off, e->cat_len);
}

static void note_not_drawn(kdraw* k, char ph) {
  k->out->not_drawn++;
  char* seen = k->out->not_drawn_phases;
  if (!ph) ph = '?';
  size_t n = strlen(seen);
  if (!strchr(seen, ph) && n + 1 < sizeof k->out->not_drawn_phases) seen[n] = ph, seen[n + 1] = '\0';
}

static int64_t clamp_ts(kdraw* k, int64_t ts) {
  if (ts >= 0) return ts;
  k->out->clamped++;
  return 0;
}

/* ---- numbers for pids and tids ---- */

static int map_ids(kdraw* k) {
  const ns_kineto_trace* tr = k->tr;
  int64_t maxpid = -1;
  for (size_t i = 0; i < tr->nevents; i++) {
    const ns_kt_event* e = &tr->events[i];
    if (e->num_pid && e->pid >= 0 && e->pid < KD_PID_MAX && e->pid > maxpid) maxpid = e->pid;
  }
  k->next_pid = (uint32_t)(maxpid + 1);
  k->next_tid = KD_SYNTH_TID;
  for (size_t i = 0; i < tr->nevents; i++) {
    const ns_kt_event* e = &tr->events[i];
    int ins;
    uint64_t* v;
    if (e->num_pid && e->pid >= 0 && e->pid < KD_PID_MAX) {
      k->pid[i] = (uint32_t)e->pid;
    } else {
      if (!(v = ns_idmap_put(&k->str_ids, ns_idmap_text_key(1, tr->text + e->pid_off, e->pid_len), &ins))) return -1;
      if (ins) *v = k->next_pid++;
      k->pid[i] = (uint32_t)*v;
    }
    if (e->num_tid && e->tid >= 0 && e->tid < KD_SYNTH_TID) {
      k->tid[i] = (uint32_t)e->tid;
    } else {
      uint64_t key = ns_idmap_text_key(1ull << 32 | k->pid[i], tr->text + e->tid_off, e->tid_len);
      if (!(v = ns_idmap_put(&k->str_ids, key, &ins))) return -1;
      if (ins) *v = k->next_tid < KD_OVERLAP_TID ? k->next_tid++ : KD_OVERLAP_TID - 1;
      k->tid[i] = (uint32_t)*v;
    }
  }
  return 0;
}

static void kdraw_free(kdraw* k) {
  free(k->pid);
  free(k->tid);
  ns_idmap_free(&k->str_ids);
  ns_idmap_free(&k->flow_ids);
  ns_idmap_free(&k->psort);
  ns_idmap_free(&k->tsort);
  ns_idmap_free(&k->tname);
  free(k->name.p);
  free(k->cat.p);
  free(k->att);
  free(k->ids);
  for (int i = 0; i <= KD_OVERLAP_MAX; i++) free(k->stacks[i].v);
}

static int kdraw_init(kdraw* k, const ns_kineto_trace* tr) {
  memset(k, 0, sizeof *k);
  k->tr = tr;
  ns_idmap_init(&k->str_ids);
  ns_idmap_init(&k->flow_ids);
  ns_idmap_init(&k->psort);
  ns_idmap_init(&k->tsort);
  ns_idmap_init(&k->tname);
  size_t n = tr->nevents ? tr->nevents : 1;
  k->pid = malloc(n * sizeof *k->pid);
  k->tid = malloc(n * sizeof *k->tid);
  if (!k->pid || !k->tid || map_ids(k) != 0) {
    kdraw_free(k);
    return -1;
  }
  return 0;
}

int64_t ns_kineto_pid_limit(const ns_kineto_trace* tr) {
  kdraw k;
  if (kdraw_init(&k, tr) != 0) return -1;
  int64_t limit = k.next_pid;
  kdraw_free(&k);
  return limit;
}

/* ---- arguments: the event's "args" object as it stands ---- */

typedef struct {
  const char* s;
  size_t n;
} raw_obj;

static void raw_args(void* ctx, ns_json* j) {
  const raw_obj* o = ctx;
  const char* s = o->s + 1; /* inside the braces */
  size_t n = o->n - 2;
  while (n && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')) s++, n--;
  if (!n) return;
  if (j->need_comma[j->depth]) nsj_put(j, ",", 1);
  nsj_put(j, s, n);
  j->need_comma[j->depth] = 1;
}

static ns_draw_args args_of(const kdraw* k, const ns_kt_event* e, raw_obj* o) {
  if (e->args_len < 2) return (ns_draw_args){NULL, NULL, NULL};
  *o = (raw_obj){k->tr->text + e->args_off, e->args_len};
  return (ns_draw_args){raw_args, o, NULL};
}

/* ---- metadata: names, labels, order ---- */

static nsjr_doc* parse_args(const kdraw* k, const ns_kt_event* e) {
  char err[160];
  return e->args_len ? nsjr_parse(k->tr->text + e->args_off, e->args_len, err, sizeof err) : NULL;
}

static int meta_is(const kdraw* k, const ns_kt_event* e, const char* name) {
  return e->ph == 'M' && raw_is(k->tr, e->name_off, e->name_len, name);
}

static int64_t sort_of(const ns_idmap* m, uint64_t key, int64_t def) {
  const uint64_t* v = ns_idmap_get(m, key);
  return v ? (int64_t)*v : def;
}

static void draw_names(kdraw* k) {
  const ns_kineto_trace* tr = k->tr;
  for (size_t i = 0; i < tr->nevents; i++) { /* the order first: it may come after the names */
    const ns_kt_event* e = &tr->events[i];
    int proc = meta_is(k, e, "process_sort_index"), thr = meta_is(k, e, "thread_sort_index");
    if (!proc && !thr && !meta_is(k, e, "thread_name")) continue;
    int ins;
    uint64_t* v;
    if (meta_is(k, e, "thread_name")) {
      if ((v = ns_idmap_put(&k->tname, pair_key(k->pid[i], k->tid[i]), &ins))) *v = i + 1;
      continue;
    }
    nsjr_doc* doc = parse_args(k, e);
    const nsjr_val* sort = doc ? nsjr_get(nsjr_root(doc), "sort_index") : NULL;
    if (sort && sort->kind == NSJR_NUM) {
      v = proc ? ns_idmap_put(&k->psort, (uint64_t)k->pid[i] | 1ull << 63, &ins)
               : ns_idmap_put(&k->tsort, pair_key(k->pid[i], k->tid[i]), &ins);
      if (v) *v = (uint64_t)nsjr_i64(sort, 0);
    }
    nsjr_free(doc);
  }
  for (int pass = 0; pass < 3; pass++) /* processes, their labels, threads */
    for (size_t i = 0; i < tr->nevents; i++) {
      const ns_kt_event* e = &tr->events[i];
      const char* what = pass == 0 ? "process_name" : pass == 1 ? "process_labels" : "thread_name";
      if (!meta_is(k, e, what)) continue;
      nsjr_doc* doc = parse_args(k, e);
      const char* s = doc ? nsjr_kstr(nsjr_root(doc), pass == 1 ? "labels" : "name", NULL) : NULL;
      if (s) {
        uint32_t pid = k->pid[i], tid = k->tid[i];
        if (pass == 0)
          k->d->process(k->d->self, pid, s, sort_of(&k->psort, (uint64_t)pid | 1ull << 63, pid));
        else if (pass == 1)
          k->d->process_label(k->d->self, pid, s);
        else
          k->d->thread(k->d->self, pid, tid, s, sort_of(&k->tsort, pair_key(pid, tid), tid));
        k->out->names++;
      } else {
        note_not_drawn(k, 'M');
      }
      nsjr_free(doc);
    }
}

static int is_known_meta(const kdraw* k, const ns_kt_event* e) {
  return meta_is(k, e, "process_name") || meta_is(k, e, "process_labels") || meta_is(k, e, "thread_name") ||
         meta_is(k, e, "process_sort_index") || meta_is(k, e, "thread_sort_index");
}

/* ---- slices and flow points ---- */

static int cmp_item(const void* pa, const void* pb) {
  const item *a = pa, *b = pb;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  if (a->dur != b->dur) return a->dur > b->dur ? -1 : 1; /* the enclosing one first */
  return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int cmp_att(const void* pa, const void* pb) {
  const ns_kineto_link *a = pa, *b = pb;
  if (a->event != b->event) return a->event < b->event ? -1 : 1;
  return a->flow_id < b->flow_id ? -1 : a->flow_id > b->flow_id;
}

static int add_att(kdraw* k, size_t ev, uint64_t id) {
  ns_kineto_link* a = ns_array_room(k->att, &k->cap_att, k->natt, sizeof *a, 256);
  if (!a) return -1;
  k->att = a;
  k->att[k->natt++] = (ns_kineto_link){ev, id};
  return 0;
}

/* The first item of items[0, n) at or after (pid, tid, ts). */
static size_t lower_bound(const item* items, size_t n, uint32_t pid, uint32_t tid, int64_t ts) {
  size_t at;
  NS_LOWER_BOUND(at, n, i,
                 items[i].pid != pid   ? items[i].pid < pid
                 : items[i].tid != tid ? items[i].tid < tid
                                       : items[i].ts < ts);
  return at;
}

/* The flow ids of event ev (k->att sorted), into k->ids; how many. */
static uint32_t flows_of(kdraw* k, size_t ev) {
  size_t lo;
  NS_LOWER_BOUND(lo, k->natt, i, k->att[i].event < ev);
  uint32_t n = 0;
  for (size_t i = lo; i < k->natt && k->att[i].event == ev; i++) {
    uint64_t* ids = ns_array_room(k->ids, &k->cap_ids, n, sizeof *ids, 8);
    if (!ids) break;
    k->ids = ids;
    k->ids[n++] = k->att[i].flow_id;
  }
  return n;
}

static int push_end(end_stack* s, int64_t end) {
  int64_t* v = ns_array_room(s->v, &s->cap, s->n, sizeof *v, 64);
  if (!v) return -1;
  s->v = v;
  s->v[s->n++] = end;
  return 0;
}

/* The track for an item of the current thread: 0 its own, k its "overlapping #k", -1 none (async). */
static int place(kdraw* k, const item* x) {
  int64_t end = x->ts + x->dur;
  for (int i = 0; i <= KD_OVERLAP_MAX; i++) {
    end_stack* s = &k->stacks[i];
    while (s->n && s->v[s->n - 1] <= x->ts) s->n--; /* ended at or before this start */
    if (s->n == 0 || end <= s->v[s->n - 1]) return push_end(s, end) == 0 ? i : -1;
  }
  return -1;
}

/* The tid of the current thread's "overlapping #i" track, declared at its first use. */
static uint32_t overlap_track(kdraw* k, const item* x, int i) {
  if (k->overlap_tid[i]) return k->overlap_tid[i];
  uint32_t tid = KD_OVERLAP_TID + k->next_overlap++;
  k->overlap_tid[i] = tid;
  char label[320];
  const uint64_t* ev = ns_idmap_get(&k->tname, pair_key(x->pid, x->tid));
  nsjr_doc* doc = ev ? parse_args(k, &k->tr->events[*ev - 1]) : NULL;
  const char* base = doc ? nsjr_kstr(nsjr_root(doc), "name", NULL) : NULL;
  if (base)
    snprintf(label, sizeof label, "%s (overlapping #%d)", base, i);
  else
    snprintf(label, sizeof label, "thread %u (overlapping #%d)", x->tid, i);
  nsjr_free(doc);
  k->d->thread(k->d->self, x->pid, tid, label, sort_of(&k->tsort, pair_key(x->pid, x->tid), x->tid));
  return tid;
}

static void draw_item(kdraw* k, const item* x, uint32_t track_tid, int async) {
  const ns_kt_event* e = &k->tr->events[x->ev];
  raw_obj o;
  uint32_t n = flows_of(k, x->ev);
  ns_draw_slice s = {.cat = cat_of(k, e),
                     .ts = (uint64_t)x->ts,
                     .dur = (uint64_t)x->dur,
                     .pid = x->pid,
                     .tid = track_tid,
                     .args = args_of(k, e, &o),
                     .async_id = async ? ++k->next_async : 0,
                     .flows_out = k->ids,
                     .nflows_out = n};
  s.name = name_of(k, e);
  k->d->slice(k->d->self, &s);
  if (e->ph == 'X') k->out->slices++;
}

static void draw_track(kdraw* k, const item* items, size_t n) {
  for (int i = 0; i <= KD_OVERLAP_MAX; i++) k->stacks[i].n = 0, k->overlap_tid[i] = 0;
  for (size_t j = 0; j < n; j++) {
    const item* x = &items[j];
    int i = place(k, x);
    if (i < 0) {
      draw_item(k, x, x->tid, 1);
      k->out->async++;
      continue;
    }
    draw_item(k, x, i ? overlap_track(k, x, i) : x->tid, 0);
    if (i) k->out->overlapping++;
  }
}

/* Slices, and flow points on them (or on zero-length slices of their own). */
static int draw_slices(kdraw* k, const ns_kineto_link* links, size_t nlinks) {
  const ns_kineto_trace* tr = k->tr;
  size_t nx = 0, np = 0;
  for (size_t i = 0; i < tr->nevents; i++) {
    char ph = tr->events[i].ph;
    nx += ph == 'X' && tr->events[i].has_ts;
    np += (ph == 's' || ph == 't' || ph == 'f') && tr->events[i].has_ts && tr->events[i].id_len;
  }
  item* items = malloc((nx + np ? nx + np : 1) * sizeof *items);
  if (!items) return -1;
  size_t ns = 0, npts = nx;
  for (size_t i = 0; i < tr->nevents; i++) {
    const ns_kt_event* e = &tr->events[i];
    if (!e->has_ts) continue;
    if (e->ph == 'X') {
      int64_t ts = clamp_ts(k, e->ts_ns), dur = e->has_dur && e->dur_ns > 0 ? e->dur_ns : 0;
      if (dur > INT64_MAX - ts) dur = INT64_MAX - ts; /* a hostile trace's end past the clock */
      items[ns++] = (item){i, k->pid[i], k->tid[i], ts, dur};
    } else if ((e->ph == 's' || e->ph == 't' || e->ph == 'f') && e->id_len) {
      items[npts++] = (item){i, k->pid[i], k->tid[i], clamp_ts(k, e->ts_ns), 0};
    }
  }
  qsort(items, ns, sizeof *items, cmp_item);
  int rc = 0;
  for (size_t i = 0; i < nlinks && rc == 0; i++) rc = add_att(k, links[i].event, links[i].flow_id);
  /* each flow point: its flow's id, on the slice starting where it is, or a slice of its own */
  size_t norphans = 0;
  for (size_t p = nx; p < npts && rc == 0; p++) {
    const ns_kt_event* e = &tr->events[items[p].ev];
    uint64_t key =
        ns_idmap_text_key(ns_idmap_text_key(2, tr->text + e->cat_off, e->cat_len), tr->text + e->id_off, e->id_len);
    int ins;
    uint64_t* v = ns_idmap_put(&k->flow_ids, key, &ins);
    if (!v) {
      rc = -1;
      break;
    }
    if (ins) *v = k->flow_base + ++k->next_flow;
    size_t at = lower_bound(items, ns, items[p].pid, items[p].tid, items[p].ts);
    int on_slice =
        at < ns && items[at].pid == items[p].pid && items[at].tid == items[p].tid && items[at].ts == items[p].ts;
    rc = add_att(k, on_slice ? items[at].ev : items[p].ev, *v);
    if (!on_slice) items[ns + norphans++] = items[p];
    k->out->flow_points++;
  }
  size_t n = ns + norphans;
  if (rc == 0) {
    qsort(items, n, sizeof *items, cmp_item);
    if (k->natt) qsort(k->att, k->natt, sizeof *k->att, cmp_att);
    for (size_t a = 0; a < n;) {
      size_t b = a;
      while (b < n && items[b].pid == items[a].pid && items[b].tid == items[a].tid) b++;
      draw_track(k, items + a, b - a);
      a = b;
    }
  }
  free(items);
  return rc;
}

/* ---- instants and counters ---- */

static void draw_counter(kdraw* k, size_t i) {
  const ns_kt_event* e = &k->tr->events[i];
  nsjr_doc* doc = parse_args(k, e);
  const nsjr_val* root = doc ? nsjr_root(doc) : NULL;
  const char* keys[16];
  uint64_t values[16];
  unsigned n = 0;
  int ok = root && root->kind == NSJR_OBJ && root->len > 0 && root->len <= 16;
  for (const nsjr_val* m = ok ? root->first : NULL; m && ok; m = m->next) {
    ok = m->kind == NSJR_NUM && m->is_int && !m->negative;
    if (ok) keys[n] = m->key, values[n++] = m->u;
  }
  if (ok && n) {
    k->d->counters(k->d->self, k->pid[i], name_of(k, e), (uint64_t)clamp_ts(k, e->ts_ns), keys, values, n);
    k->out->counters++;
  } else {
    note_not_drawn(k, 'C');
  }
  nsjr_free(doc);
}

static void draw_points(kdraw* k) {
  const ns_kineto_trace* tr = k->tr;
  for (size_t i = 0; i < tr->nevents; i++) {
    const ns_kt_event* e = &tr->events[i];
    if (e->ph == 'X' && e->has_ts) continue; /* drawn with their tracks */
    if ((e->ph == 's' || e->ph == 't' || e->ph == 'f') && e->has_ts && e->id_len) continue;
    if (e->ph == 'M' && is_known_meta(k, e)) continue;
    if ((e->ph == 'i' || e->ph == 'I') && e->has_ts) {
      raw_obj o;
      ns_draw_instant in = {.cat = cat_of(k, e),
                            .ts = (uint64_t)clamp_ts(k, e->ts_ns),
                            .pid = k->pid[i],
                            .tid = k->tid[i],
                            .process_scope = e->scope == 'g' || e->scope == 'p',
                            .args = args_of(k, e, &o)};
      in.name = name_of(k, e);
      k->d->instant(k->d->self, &in);
      k->out->instants++;
    } else if (e->ph == 'C' && e->has_ts) {
      draw_counter(k, i);
    } else {
      note_not_drawn(k, e->ph);
    }
  }
}

int ns_kineto_draw(const ns_kineto_trace* tr, const ns_drawer* d, const ns_kineto_link* links, size_t nlinks,
                   uint64_t flow_base, ns_kineto_drawn* out) {
  memset(out, 0, sizeof *out);
  kdraw k;
  if (kdraw_init(&k, tr) != 0) return -1;
  k.d = d;
  k.out = out;
  k.flow_base = flow_base;
  draw_names(&k);
  int rc = draw_slices(&k, links, nlinks);
  if (rc == 0) draw_points(&k);
  kdraw_free(&k);
  return rc;
}
