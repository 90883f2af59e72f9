/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the timeline layout's tracks (timeline_layout.h): process
 * and thread names, the per-channel and Coll/P2p lanes, and the thread
 * tracks' placement that keeps every slice properly nested (the invariants:
 * export_timeline.c). Single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/timeline_layout.h"

static const char* const lane_kind_names[LANE_KINDS] = {"ProxyOp", "ProxyStep", "KernelCh", "NetPlugin", "Coll/P2p"};

/* ---- metadata ---- */

void ns_tl_name_thread(chrome_state* s, uint32_t pid, uint32_t tid, const char* name, int64_t sort) {
  int ins;
  uint64_t* v = ns_idmap_put(&s->named_threads, (uint64_t)pid << 32 | tid, &ins);
  if (!v || !ins) return;
  s->d.thread(s->d.self, pid, tid, name, sort);
}

/* Real threads sort by tid; each is followed by its Coll/P2p lanes (+1..+32). */
static int64_t real_thread_sort(uint32_t tid) { return (int64_t)(tid % 1000000) * 64; }

void ns_tl_name_real_thread(chrome_state* s, const ns_wfile* f, uint32_t pid, uint32_t tid) {
  char name[128];
  const char* tn = ns_wfile_thread_name(f, tid);
  if (tn && tn[0]) snprintf(name, sizeof name, "%s (tid %u)", tn, tid);
  else snprintf(name, sizeof name, "thread %u", tid);
  ns_tl_name_thread(s, pid, tid, name, real_thread_sort(tid));
}

const char* ns_tl_host_of(const ns_wfile* f) { return f->has_process ? f->process.hostname : "?"; }
uint32_t ns_tl_file_pid(const ns_wfile* f) { return f->has_process ? f->process.pid : 0; }

uint32_t ns_tl_nocomm_pid(chrome_state* s, const ns_wfile* f) {
  if (!s->nocomm_pid) {
    s->nocomm_pid = s->next_pid++;
    char name[512];
    snprintf(name, sizeof name, "%s:%u (no communicator: PXN proxy work for other processes)", ns_tl_host_of(f),
             ns_tl_file_pid(f));
    s->d.process(s->d.self, s->nocomm_pid, name, s->nocomm_pid);
  }
  return s->nocomm_pid;
}

uint32_t ns_tl_comm_pid(chrome_state* s, const ns_wfile* f, uint32_t comm) {
  const ns_wcomm* c = ns_wfile_comm(f, comm);
  return c && c->sink_u[0] ? (uint32_t)c->sink_u[0] : ns_tl_nocomm_pid(s, f);
}

/* ---- lanes ---- */

int ns_tl_lane_kind(uint8_t type) {
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
int ns_tl_has_state_slices(uint8_t type) {
  int k = ns_tl_lane_kind(type);
  return k >= 0 && k != LANE_LAUNCH;
}

lane_group* ns_tl_lane_group_of(chrome_state* s, const ns_wfile* f, uint32_t pid, int kind, int channel,
                                  uint32_t caller_tid) {
  uint64_t key = (uint64_t)pid << 36 ^ (uint64_t)kind << 34 ^ (uint64_t)(channel & 0xFF) << 26 ^ caller_tid;
  key |= 1ull << 63; /* never 0 */
  int ins;
  uint64_t* v = ns_idmap_put(&s->group_index, key, &ins);
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

/* Takes the first lane that is free and whose last slice ended by `start`
 * (a new one when none is) and names its track when it is new. Out of
 * memory, the event shares lane 0 (drawn, possibly misnested). */
uint32_t ns_tl_lane_take(chrome_state* s, lane_group* g, uint64_t start, uint32_t* lane_out) {
  uint32_t i = 0;
  while (i < g->nlanes && (g->lanes[i].busy || g->lanes[i].last_end > start ||
                           (s->d.strict_lanes && g->lanes[i].last_end == start && g->lanes[i].used)))
    i++;
  if (i == g->nlanes) {
    if (g->nlanes == g->cap) {
      uint32_t cap = g->cap ? g->cap * 2 : 4;
      lane_slot* nl = realloc(g->lanes, cap * sizeof *nl);
      if (!nl) {
        *lane_out = UINT32_MAX; /* nothing to release */
        return g->nlanes ? g->lanes[0].tid : SYNTH_TID_BASE;
      }
      g->lanes = nl;
      g->cap = cap;
    }
    lane_slot* l = &g->lanes[g->nlanes++];
    memset(l, 0, sizeof *l);
    l->tid = SYNTH_TID_BASE + s->next_tid++;
    char name[128];
    if (i) snprintf(name, sizeof name, "%s #%u", g->label, i + 1);
    else snprintf(name, sizeof name, "%s", g->label);
    ns_tl_name_thread(s, g->pid, l->tid, name, g->sort_base + i);
  }
  g->lanes[i].busy = 1;
  *lane_out = i;
  return g->lanes[i].tid;
}

void ns_tl_lane_release(lane_group* g, uint32_t i, uint64_t end) {
  if (i >= g->nlanes) return;
  g->lanes[i].busy = 0;
  g->lanes[i].used = 1;
  if (end > g->lanes[i].last_end) g->lanes[i].last_end = end;
}

/* ---- thread tracks: placement that keeps every slice properly nested ---- */

/* a and b overlap without one containing the other (touching is fine). */
static int misnested(span a, span b) {
  return (a.s < b.s && b.s < a.e && a.e < b.e) || (b.s < a.s && a.s < b.e && b.e < a.e);
}

/* Whether x can be drawn on t: it nests with every placed slice; against the
 * hull of forgotten ones, only if it contains the hull or misses it. */
static int nest_fits(const nest_track* t, span x) {
  if (t->has_hull && x.s < t->hull.e && t->hull.s < x.e && !(x.s <= t->hull.s && x.e >= t->hull.e)) return 0;
  for (uint32_t i = 0; i < t->n; i++)
    if (misnested(t->v[i], x)) return 0;
  return 1;
}

static void hull_add(nest_track* t, span x) {
  if (!t->has_hull) {
    t->hull = x;
    t->has_hull = 1;
    return;
  }
  if (x.s < t->hull.s) t->hull.s = x.s;
  if (x.e > t->hull.e) t->hull.e = x.e;
}

/* Slices ending by `horizon` cannot meet any later slice: they go into the
 * hull (kept: a later slice that starts before its end, against the order
 * the horizon assumes, is still checked against it, conservatively). */
static void nest_prune(nest_track* t, uint64_t horizon) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < t->n; i++) {
    if (t->v[i].e <= horizon) hull_add(t, t->v[i]);
    else t->v[k++] = t->v[i];
  }
  t->n = k;
}

static void nest_place(nest_track* t, span x) {
  if (t->n == NEST_KEEP) { /* forget the one that ends first */
    uint32_t m = 0;
    for (uint32_t i = 1; i < t->n; i++)
      if (t->v[i].e < t->v[m].e) m = i;
    hull_add(t, t->v[m]);
    t->v[m] = t->v[--t->n];
  }
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 8;
    span* nv = realloc(t->v, cap * sizeof *nv);
    if (!nv) {
      hull_add(t, x); /* out of memory: remembered coarsely, still safe */
      return;
    }
    t->v = nv;
    t->cap = cap;
  }
  t->v[t->n++] = x;
}

thread_track* ns_tl_thread_track_of(chrome_state* s, uint32_t pid, uint32_t tid) {
  int ins;
  uint64_t* v = ns_idmap_put(&s->tt_index, (uint64_t)pid << 32 | tid | 1ull << 63, &ins);
  if (!v) return NULL;
  if (!ins) return *v ? &s->tts[*v - 1] : NULL;
  thread_track* nt = realloc(s->tts, (s->ntts + 1) * sizeof *nt);
  if (!nt) {
    *v = 0;
    return NULL;
  }
  s->tts = nt;
  thread_track* t = &s->tts[s->ntts++];
  memset(t, 0, sizeof *t);
  t->pid = pid;
  t->tid = tid;
  t->main.tid = tid;
  *v = s->ntts;
  return t;
}

void ns_tl_thread_tracks_free(chrome_state* s) {
  for (size_t i = 0; i < s->ntts; i++) {
    free(s->tts[i].main.v);
    for (uint32_t k = 0; k < s->tts[i].nover; k++) free(s->tts[i].over[k].v);
    free(s->tts[i].over);
  }
  free(s->tts);
  s->tts = NULL;
  s->ntts = 0;
  ns_idmap_free(&s->tt_index);
}

void ns_tl_open_unlink(thread_track* t, ns_event* e) {
  if (cev(e)->prev) cev(cev(e)->prev)->next = cev(e)->next;
  else if (t->open_head == e) t->open_head = cev(e)->next;
  if (cev(e)->next) cev(cev(e)->next)->prev = cev(e)->prev;
  else if (t->open_tail == e) t->open_tail = cev(e)->prev;
  cev(e)->prev = cev(e)->next = NULL;
}

/* Where the slice x of a thread-track event goes: the thread's track, else
 * the first overlapping track it nests in (a new one if needed). 0: none
 * (write it as an async slice). */
uint32_t ns_tl_thread_place(chrome_state* s, const ns_wfile* f, thread_track* t, span x) {
  /* This slice and every later one on these tracks start at or after the
   * horizon: this start, the starts of the thread's other open events, its
   * next START (starts of one thread are read in time order; if they were
   * not, the hull keeps the check safe, only coarser). */
  uint64_t horizon = x.s;
  if (t->open_head && t->open_head->start.ts < horizon) horizon = t->open_head->start.ts;
  if (t->last_start < horizon) horizon = t->last_start;
  nest_prune(&t->main, horizon);
  for (uint32_t k = 0; k < t->nover; k++) nest_prune(&t->over[k], horizon);
  if (nest_fits(&t->main, x)) {
    nest_place(&t->main, x);
    return t->main.tid;
  }
  for (uint32_t k = 0; k < t->nover; k++)
    if (nest_fits(&t->over[k], x)) {
      nest_place(&t->over[k], x);
      return t->over[k].tid;
    }
  if (t->nover == NEST_OVERFLOW_MAX) return 0;
  nest_track* no = realloc(t->over, (t->nover + 1) * sizeof *no);
  if (!no) return 0;
  t->over = no;
  nest_track* nt = &t->over[t->nover++];
  memset(nt, 0, sizeof *nt);
  nt->tid = SYNTH_TID_BASE + s->next_tid++;
  char name[160];
  const char* tn = ns_wfile_thread_name(f, t->tid);
  if (tn && tn[0]) snprintf(name, sizeof name, "%.60s (tid %u) overlapping #%u", tn, t->tid, t->nover);
  else snprintf(name, sizeof name, "thread %u overlapping #%u", t->tid, t->nover);
  ns_tl_name_thread(s, t->pid, nt->tid, name, real_thread_sort(t->tid) + 40 + t->nover);
  nest_place(nt, x);
  return nt->tid;
}
