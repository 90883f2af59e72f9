/* SPDX-License-Identifier: Apache-2.0 */
/* ncclscope CLI: the timeline exporters' layout (Trace Event JSON for
 * ui.perfetto.dev / chrome://tracing, and Perfetto's native protobuf trace):
 * which track every event, state and parent link goes to. The drawers
 * (timeline_draw.h) encode what this file decides.
 *
 * Layout (docs/cli.md): one process track per (trace file, communicator),
 * named "rank R (host:pid) comm NAME"; events of a process without a
 * communicator (PXN proxy work for other processes) go to one extra track
 * per file. On a rank track, API/Group/KernelLaunch/CE sync and batch/
 * ProxyCtrl events are complete slices on the thread that started
 * them, so the hierarchy nests; Coll/P2p/CeColl go to lanes next to their
 * thread, ProxyOp, ProxyStep, KernelCh and NetPlugin events to synthetic
 * per-channel tracks ("ch 5 ProxyStep"). A flow arrow joins every event to
 * its parent across threads and tracks. States are sub-slices of lane
 * events and instant events elsewhere.
 *
 * Every slice on a track nests properly (Perfetto draws anything else
 * wrongly). Two mechanisms guarantee it:
 *  - Lanes. A lane event takes, at its START, the first lane of its group
 *    that is free and whose last slice ended at or before this start
 *    (before it, for drawers with strict_lanes; a new lane when none is:
 *    lanes are not capped); it frees the lane when it is
 *    written. So the slices of a lane never overlap, even when a stop is read
 *    late (per-thread blocks arrive in any order) or many events are in
 *    flight at once.
 *  - Thread tracks. Events that stay on their thread are checked when they
 *    are written, against every slice already placed on that track that a
 *    later event could still overlap (nest_track). One that overlaps
 *    without nesting (an inner event that outlives its parent, an event
 *    that never stopped drawn to the end of its file, a stop recorded out
 *    of order) goes to the thread's first "overlapping #k" track where it
 *    nests, created as needed up to NEST_OVERFLOW_MAX; beyond that it is
 *    drawn as an async slice, which Perfetto lays out itself.
 *    A moved event leaves a zero-length marker slice at its start on the
 *    thread track (zero-length slices always nest): arrows already written
 *    from it start there.
 *
 * Streaming: each event is written when the walker finishes it. Memory: the
 * lane groups (lanes bounded by the events in flight), per thread track the
 * placed slices that later events could still overlap (at most NEST_KEEP;
 * older ones are summarised by their hull, which can only make the check
 * more conservative), the named-thread set, a fixed cache of recently
 * finished events used to draw arrows from parents that are already
 * written (a child whose parent fell out of it gets no arrow), and, for
 * drawers that put flows on slices, the flow ids of events still in memory.
 * Single-threaded. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/event_details.h"
#include "export/export.h"
#include "timeline/timeline_layout.h"

/* ---- sink callbacks ---- */

static void chrome_file_begin(void* self, ns_wfile* f) {
  chrome_state* s = self;
  s->nocomm_pid = 0;
  s->file_max_ts = 0;
  if (s->d.file_begin) s->d.file_begin(s->d.self, f->index);
  ns_tl_thread_tracks_free(s); /* pids are per file: the last file's tracks are done */
}

static void see_ts(chrome_state* s, uint64_t ts) {
  if (ts > s->file_max_ts) s->file_max_ts = ts;
}

typedef struct {
  chrome_state* s;
  ns_wfile* f;
  const ns_wcomm* c;
  const ns_props_info* fini;
} lifecycle_ctx;

static void lifecycle_args(void* ctx, ns_json* j) {
  const lifecycle_ctx* x = ctx;
  const ns_wcomm* c = x->c;
  nsj_khex(j, "commId", c->info.comm_id); /* a string: JSON numbers are exact only up to 2^53 */
  nsj_ki64(j, "rank", c->info.rank);
  if (!x->fini) {
    nsj_ku64(j, "nranks", c->info.nranks);
    nsj_ku64(j, "nNodes", c->info.nnodes);
    nsj_ku64(j, "pluginVersion", c->info.abi_version);
    nsj_ku64(j, "eventMask", c->info.event_mask);
    nsj_kstr(j, "gpuUuid", c->info.gpu_uuid);
  } else {
    nsj_ku64(j, "events", x->fini->u[NS_P_EVENTS]);
    nsj_ku64(j, "dropped", x->fini->u[NS_P_DROPPED]);
  }
  ns_walk_comm_details(x->s->walk, x->f, c, x->fini != NULL, j);
  const ns_props_info* pc = x->fini ? ns_wfile_counters_here(x->f) : NULL;
  if (pc) {
    nsj_key(j, "processCounters");
    nsj_obj_begin(j);
    ns_write_counter_fields(j, pc);
    nsj_obj_end(j);
  }
}

static void lifecycle_instant(chrome_state* s, ns_wfile* f, ns_wcomm* c, const char* name, uint64_t ts,
                              uint32_t tid, const ns_props_info* fini) {
  uint32_t pid = (uint32_t)c->sink_u[0];
  ns_tl_name_real_thread(s, f, pid, tid);
  lifecycle_ctx x = {s, f, c, fini};
  ns_draw_instant in = {.name = name, .cat = "lifecycle", .ts = ts, .pid = pid, .tid = tid, .process_scope = 1,
                        .args = {lifecycle_args, &x}};
  s->d.instant(s->d.self, &in);
}

/* One sample of a group of counters (Perfetto draws a counter track per key). */
static void counter_sample(chrome_state* s, uint32_t pid, const char* name, uint64_t ts, const ns_props_info* p,
                           int by_type) {
  const char* keys[NS_EV_COUNT + 6];
  uint64_t values[NS_EV_COUNT + 6];
  unsigned n = 0;
  if (by_type) {
    for (unsigned t = 0; t < NS_EV_COUNT; t++)
      if (p->has[NS_P_TYPE_DROPPED_BASE + t]) {
        keys[n] = ns_event_type_name(t) + strlen("ncclProfile");
        values[n++] = p->u[NS_P_TYPE_DROPPED_BASE + t];
      }
  } else {
    static const struct {
      const char* key;
      unsigned prop;
    } losses[] = {{"dropped", NS_P_DROPPED},       {"droppedRing", NS_P_DROPPED_RING},
                  {"droppedHandles", NS_P_DROPPED_HANDLES}, {"badHandles", NS_P_BAD_HANDLES},
                  {"parentLost", NS_P_PARENT_LOST}, {"writeErrors", NS_P_WRITE_ERRORS}};
    for (unsigned i = 0; i < sizeof losses / sizeof losses[0]; i++) {
      keys[n] = losses[i].key;
      values[n++] = p->u[losses[i].prop];
    }
  }
  s->d.counters(s->d.self, pid, name, ts, keys, values, n);
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
      pid = ns_tl_nocomm_pid(s, f);
    }
    if (!first) first = pid;
    counter_sample(s, pid, "ncclscope losses", f->max_ts, p, 0);
    if (any_type) counter_sample(s, pid, "ncclscope dropped by type", f->max_ts, p, 1);
    s->d.process_label(s->d.self, pid, label);
  }
}

static void chrome_comm_init(void* self, ns_wfile* f, ns_wcomm* c) {
  chrome_state* s = self;
  c->sink_u[0] = s->next_pid++;
  char name[640], comm[300];
  if (c->info.has_name && c->info.comm_name[0]) snprintf(comm, sizeof comm, "%s", c->info.comm_name);
  else snprintf(comm, sizeof comm, "0x%" PRIx64, c->info.comm_id);
  snprintf(name, sizeof name, "rank %d (%s:%u) comm %s", c->info.rank, ns_tl_host_of(f), ns_tl_file_pid(f), comm);
  s->d.process(s->d.self, (uint32_t)c->sink_u[0], name, (int64_t)c->sink_u[0]);
  lifecycle_instant(s, f, c, "ProfilerInit", c->info.ts, c->info.tid, NULL);
  see_ts(s, c->info.ts);
}

static void chrome_comm_fini(void* self, ns_wfile* f, ns_wcomm* c, const ns_props_info* fini) {
  chrome_state* s = self;
  if (!c->sink_u[0]) chrome_comm_init(self, f, c); /* its init was lost */
  lifecycle_instant(s, f, c, "ProfilerFinalize", fini->ts, fini->tid, fini);
  see_ts(s, fini->ts);
}

static void chrome_event_start(void* self, ns_wfile* f, ns_event* ev) {
  chrome_state* s = self;
  const ns_record* r = &ev->start;
  uint32_t pid = ns_tl_comm_pid(s, f, r->comm);
  see_ts(s, r->ts);
  cev(ev)->pid = pid;
  cev(ev)->lane_group = cev(ev)->slot = 0;
  cev(ev)->prev = cev(ev)->next = NULL;
  cev(ev)->lane_freed = 0;
  int kind = ns_tl_lane_kind(r->type);
  if (kind >= 0 && ev->channel < 0 && r->parent && !(r->flags & NS_RF_PARENT_RAW)) {
    /* The parent (ProxyStep of a NetPlugin) may already be written: take its channel from the cache. */
    recent_slot* rs = &s->recent[recent_index(r->parent)];
    if (rs->id == r->parent && rs->file == f->index) ev->channel = rs->channel;
  }
  lane_group* g = kind >= 0 ? ns_tl_lane_group_of(s, f, pid, kind, kind == LANE_LAUNCH ? 255 : ev->channel, r->tid) : NULL;
  if (g) {
    uint32_t lane;
    cev(ev)->tid = ns_tl_lane_take(s, g, r->ts, &lane);
    cev(ev)->lane_group = (uint64_t)(g - s->groups) + 1;
    cev(ev)->slot = lane;
  } else {
    /* Drawn on its thread's track unless it turns out not to nest (placed when written). */
    ns_tl_name_real_thread(s, f, pid, r->tid);
    cev(ev)->tid = r->tid;
    thread_track* t = kind < 0 ? ns_tl_thread_track_of(s, pid, r->tid) : NULL;
    if (t) {
      if (r->ts > t->last_start) t->last_start = r->ts;
      cev(ev)->prev = t->open_tail;
      if (t->open_tail) cev(t->open_tail)->next = ev;
      else t->open_head = ev;
      t->open_tail = ev;
      cev(ev)->slot = (uint64_t)(t - s->tts) + 1;
    }
  }
}

/* A state's arguments: its id, repeats, and its argument if it has one. */
typedef struct {
  uint8_t type;
  int32_t state;
  uint16_t flags;
  uint64_t arg, repeats;
} state_ctx;

static void state_args(void* ctx, ns_json* j) {
  const state_ctx* x = ctx;
  nsj_ki64(j, "id", x->state);
  if (x->repeats) nsj_ku64(j, "repeats", x->repeats);
  if (x->flags & NS_RF_HAS_ARG) {
    ns_record tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.flags = x->flags;
    tmp.arg = x->arg;
    tmp.state = x->state;
    ns_write_state_arg(j, x->type, &tmp);
  }
}

static void chrome_state_rec(void* self, ns_wfile* f, ns_event* ev, const ns_record* st) {
  chrome_state* s = self;
  see_ts(s, st->ts);
  if (ev && ns_tl_has_state_slices(ev->start.type) && ev->nstates <= NS_XEV_MAX_STATES) return; /* drawn at its stop */
  uint64_t repeats = 0;
  ns_record rep;
  if (st->state == NS_ST_REPEATED) { /* the repeated state again, with its count */
    rep = ns_repeated_state(ev, st, &repeats);
    st = &rep;
  }
  uint32_t pid, tid;
  if (ev) {
    pid = (uint32_t)cev(ev)->pid;
    tid = (uint32_t)cev(ev)->tid;
  } else {
    pid = ns_tl_comm_pid(s, f, st->comm);
    tid = st->tid;
    ns_tl_name_real_thread(s, f, pid, tid);
  }
  char buf[32];
  state_ctx x = {ev ? ev->start.type : st->type, st->state, st->flags, st->arg, repeats};
  ns_draw_instant in = {.name = ns_state_label(st->state, buf, sizeof buf), .cat = "state", .ts = st->ts, .pid = pid,
                        .tid = tid, .args = {state_args, &x, ns_state_name(st->state) ? "id" : NULL}};
  s->d.instant(s->d.self, &in);
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
static void event_name(const ns_wfile* f, const ns_event* ev, char* out, size_t n) {
  const char* short_name = ns_event_type_name(ev->start.type) + strlen("ncclProfile");
  size_t short_len = strlen(short_name), len = 0;
  const uint64_t* num = ev->start.num;
  int has_func;
  const char* func = ns_event_func(f, ev, &has_func);
  switch (ev->start.type) {
    case NS_EV_PROXY_OP: /* "ProxyOp send peer 3" */
      name_put(out, &len, short_name, short_len);
      name_put(out, &len, num[NS_PROXY_OP_IS_SEND] ? " send peer " : " recv peer ", 11);
      name_put_i64(out, &len, (int64_t)num[NS_PROXY_OP_PEER]);
      break;
    case NS_EV_PROXY_STEP: /* "ProxyStep 12" */
      name_put(out, &len, short_name, short_len);
      out[len++] = ' ';
      len += nsj_fmt_u64(out + len, num[NS_PROXY_STEP_STEP]);
      break;
    case NS_EV_KERNEL_CH: /* "KernelCh ch 5" */
      name_put(out, &len, short_name, short_len);
      name_put(out, &len, " ch ", 4);
      name_put_i64(out, &len, (int64_t)num[NS_KERNEL_CH_CHANNEL]);
      break;
    default:
      if (has_func && func) snprintf(out, n, "%s %s", short_name, func);
      else snprintf(out, n, "%s", short_name);
      return;
  }
  out[len] = '\0';
}

/* Where and when the parent's slice starts, if the parent is known. */
static int parent_anchor(chrome_state* s, ns_wfile* f, const ns_event* ev, uint32_t* pid, uint32_t* tid,
                         uint64_t* ts) {
  const ns_record* r = &ev->start;
  if (!r->parent || (r->flags & NS_RF_PARENT_RAW)) return 0;
  ns_event* p = ns_walk_find(s->walk, r->parent);
  if (p) {
    if (!cev(p)->pid) return 0; /* the filters leave the parent out: nothing to draw from */
    *pid = (uint32_t)cev(p)->pid;
    *tid = (uint32_t)cev(p)->tid;
    *ts = p->start.ts;
    return 1;
  }
  recent_slot* rs = &s->recent[recent_index(r->parent)];
  if (rs->id == r->parent && rs->file == f->index) {
    *pid = rs->pid;
    *tid = rs->tid;
    *ts = rs->start_ts;
    return 1;
  }
  return 0;
}

/* Records a parent link for ev (drawn at (pid, tid)); returns the flow id
 * the child's slice carries (drawers with flows_on_slices), else 0. */
static uint64_t link_parent(chrome_state* s, ns_wfile* f, const ns_event* ev, uint32_t pid, uint32_t tid) {
  uint32_t ppid, ptid;
  uint64_t pts;
  if (!parent_anchor(s, f, ev, &ppid, &ptid, &pts) || pts > ev->start.ts) return 0;
  ns_draw_flow fl = {.id = ++s->next_flow, .from_pid = ppid, .from_tid = ptid, .to_pid = pid, .to_tid = tid,
                     .from_ts = pts, .to_ts = ev->start.ts};
  if (!s->d.flows_on_slices) {
    s->d.flow(s->d.self, &fl);
    return 0;
  }
  ns_event* p = ns_walk_find(s->walk, ev->start.parent);
  if (p) { /* still to be written: its slice starts the flow */
    chrome_ev* pe = cev(p);
    if (pe->nflows_out == pe->cap_flows) {
      uint32_t cap = pe->cap_flows ? pe->cap_flows * 2 : 4;
      uint64_t* nf = realloc(pe->flows_out, cap * sizeof *nf);
      if (!nf) return 0;
      pe->flows_out = nf;
      pe->cap_flows = cap;
    }
    pe->flows_out[pe->nflows_out++] = fl.id;
  } else { /* already written: the drawer anchors the flow at its start */
    s->d.flow(s->d.self, &fl);
  }
  return fl.id;
}

/* args of an event's slice: its address, parent, PXN origin, the details. */
typedef struct {
  chrome_state* s;
  ns_wfile* f;
  const ns_event* ev;
} event_ctx;

static void event_args(void* ctx, ns_json* j) {
  const event_ctx* x = ctx;
  const ns_record* r = &x->ev->start;
  ns_write_event_ids(j, x->f, x->ev);
  if (r->flags & NS_RF_PXN) nsj_ku64(j, "originPid", r->origin_pid);
  ns_write_incomplete(j, x->ev);
  ns_write_details(x->s->walk, x->f, x->ev, j);
}

/* The zero-length slice a moved event leaves at its start on its thread's
 * track: arrows written from it before it moved start there. */
typedef struct {
  ns_wfile* f;
  const ns_event* ev;
  uint32_t to_tid;
} marker_ctx;

static void marker_args(void* ctx, ns_json* j) {
  const marker_ctx* x = ctx;
  char addr[NS_EVENT_ADDR_MAX];
  size_t alen = ns_event_addr(addr, sizeof addr, x->f->index, x->ev->id);
  nsj_key(j, "eventAddr");
  nsj_strn(j, addr, alen);
  nsj_kstr(j, "note", "overlaps another slice of this thread without nesting: drawn on another track");
  if (x->to_tid) nsj_ku64(j, "movedToTid", x->to_tid);
  else nsj_kstr(j, "movedTo", "async slice");
}

static void moved_marker(chrome_state* s, ns_wfile* f, const ns_event* ev, const char* name, uint32_t pid,
                         uint32_t tid, uint32_t to_tid) {
  marker_ctx x = {f, ev, to_tid};
  ns_draw_slice sl = {.name = name, .cat = "moved", .ts = ev->start.ts, .pid = pid, .tid = tid,
                      .args = {marker_args, &x}};
  s->d.slice(s->d.self, &sl);
}

/* A lane is free again once its event has stopped, though a Coll/P2p is
 * written only when its children are done: its slice ends at its stop. */
static void chrome_event_stop(void* self, ns_wfile* f, ns_event* ev) {
  chrome_state* s = self;
  (void)f;
  if (!cev(ev)->lane_group || cev(ev)->lane_freed) return;
  uint64_t end = ev->stop_ts > ev->start.ts ? ev->stop_ts : ev->start.ts;
  ns_tl_lane_release(&s->groups[cev(ev)->lane_group - 1], (uint32_t)cev(ev)->slot, end);
  cev(ev)->lane_freed = 1;
}

static void chrome_event(void* self, ns_wfile* f, ns_event* ev) {
  chrome_state* s = self;
  const ns_record* r = &ev->start;
  uint32_t pid = (uint32_t)cev(ev)->pid, tid = (uint32_t)cev(ev)->tid;
  uint64_t stop = ev->stopped ? ev->stop_ts : (s->file_max_ts > r->ts ? s->file_max_ts : r->ts);
  if (stop < r->ts) stop = r->ts;
  if (ev->stopped) see_ts(s, stop);
  if (cev(ev)->lane_group && !cev(ev)->lane_freed) ns_tl_lane_release(&s->groups[cev(ev)->lane_group - 1], (uint32_t)cev(ev)->slot, stop);

  char name[384];
  event_name(f, ev, name, sizeof name);
  const char* cat = ns_event_type_name(r->type) + strlen("ncclProfile");
  uint32_t draw_tid = tid; /* 0: drawn as an async slice */
  if (!cev(ev)->lane_group && cev(ev)->slot) { /* a thread-track event: placed now that its extent is known */
    thread_track* t = &s->tts[cev(ev)->slot - 1];
    ns_tl_open_unlink(t, ev);
    draw_tid = ns_tl_thread_place(s, f, t, (span){r->ts, stop});
    if (draw_tid != tid) {
      moved_marker(s, f, ev, name, pid, tid, draw_tid);
      if (draw_tid) s->moved++;
      else s->async++;
    }
  }
  event_ctx x = {s, f, ev};
  ns_draw_slice sl = {.name = name, .cat = cat, .ts = r->ts, .dur = stop - r->ts, .pid = pid, .tid = draw_tid,
                      .args = {event_args, &x}};
  if (!draw_tid) {
    sl.tid = tid; /* its arrows bind to the marker */
    sl.async_id = ++s->next_async;
  }

  /* States of lane events as sub-slices, each lasting until the next state
   * or the stop, clamped so that they follow one another even when states
   * were recorded out of time order. */
  ns_draw_sub subs[NS_XEV_MAX_STATES];
  state_ctx sx[NS_XEV_MAX_STATES];
  char labels[NS_XEV_MAX_STATES][32];
  if (ns_tl_has_state_slices(r->type)) {
    uint32_t n = ev->nstates < NS_XEV_MAX_STATES ? ev->nstates : NS_XEV_MAX_STATES;
    uint64_t prev = r->ts;
    for (uint32_t i = 0; i < n; i++) {
      const ns_event_state* xs = &ev->states[i];
      uint64_t a = xs->ts < prev ? prev : xs->ts > stop ? stop : xs->ts;
      uint64_t b = i + 1 < n ? ev->states[i + 1].ts : stop;
      if (b > stop) b = stop;
      if (b < a) b = a;
      prev = b;
      sx[i] = (state_ctx){r->type, xs->state, xs->flags, xs->arg, xs->repeats};
      subs[i] = (ns_draw_sub){ns_state_label(xs->state, labels[i], sizeof labels[i]), a, b - a,
                              {state_args, &sx[i], ns_state_name(xs->state) ? "id" : NULL}};
    }
    sl.subs = subs;
    sl.nsubs = n;
  }
  uint32_t link_tid = draw_tid ? draw_tid : tid;
  if (s->d.flows_on_slices) {
    sl.flow_in = link_parent(s, f, ev, pid, link_tid);
    if (sl.flow_in && !(r->flags & NS_RF_PARENT_RAW)) sl.args.implied = "parentObj";
    sl.flows_out = cev(ev)->flows_out;
    sl.nflows_out = cev(ev)->nflows_out;
  }
  s->d.slice(s->d.self, &sl);
  if (!s->d.flows_on_slices) link_parent(s, f, ev, pid, link_tid);
  free(cev(ev)->flows_out);
  cev(ev)->flows_out = NULL;
  cev(ev)->nflows_out = cev(ev)->cap_flows = 0;
  recent_slot* rs = &s->recent[recent_index(ev->id)];
  *rs = (recent_slot){
      .id = ev->id, .file = f->index, .pid = pid, .tid = link_tid, .channel = ev->channel, .start_ts = r->ts};
}

void* ns_timeline_make(FILE* out, ns_sink* sink, int (*drawer_new)(FILE* out, ns_drawer* d)) {
  chrome_state* s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->recent = calloc(RECENT_SLOTS, sizeof *s->recent);
  if (!s->recent || drawer_new(out, &s->d) != 0) {
    free(s->recent);
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < RECENT_SLOTS; i++) s->recent[i].file = -1;
  s->next_pid = 1;
  *sink = (ns_sink){.self = s,
                    .event_bytes = sizeof(chrome_ev),
                    .file_begin = chrome_file_begin,
                    .comm_init = chrome_comm_init,
                    .comm_fini = chrome_comm_fini,
                    .counters = chrome_counters,
                    .event_start = chrome_event_start,
                    .state = chrome_state_rec,
                    .event_stop = chrome_event_stop,
                    .event_done = chrome_event};
  return s;
}

static int perfetto_new(FILE* out, ns_drawer* d) { return ns_draw_perfetto_new(out, 1, d); }
static int perfetto_plain_new(FILE* out, ns_drawer* d) { return ns_draw_perfetto_new(out, 0, d); }
static void* chrome_make(FILE* out, ns_sink* sink) { return ns_timeline_make(out, sink, ns_draw_chrome_new); }
static void* perfetto_make(FILE* out, ns_sink* sink) { return ns_timeline_make(out, sink, perfetto_new); }
static void* perfetto_plain_make(FILE* out, ns_sink* sink) { return ns_timeline_make(out, sink, perfetto_plain_new); }

int ns_timeline_finish(void* state) {
  chrome_state* s = state;
  int rc = s->d.finish(s->d.self);
  ns_idmap_free(&s->named_threads);
  ns_idmap_free(&s->group_index);
  for (size_t i = 0; i < s->ngroups; i++) free(s->groups[i].lanes);
  free(s->groups);
  ns_tl_thread_tracks_free(s);
  free(s->recent);
  free(s);
  return rc;
}

const ns_format ns_format_chrome = {"chrome", chrome_make, ns_timeline_finish};
const ns_format ns_format_perfetto = {"perfetto", perfetto_make, ns_timeline_finish};
const ns_format ns_format_perfetto_plain = {"perfetto-plain", perfetto_plain_make, ns_timeline_finish};
